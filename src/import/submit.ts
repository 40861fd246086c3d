/**
 * The sending step of an import: orders go out in input order, `concurrency` at a time over
 * kept-alive connections, each journaled as `sending` (on disk) before its request leaves and
 * journaled with its outcome when it comes back. Orders the journal already knows are skipped
 * (created) or held back (outcome unknown). It stops starting new requests on Ctrl-C, at the
 * first refusal of the credentials, or when the service cannot be reached, and always waits for
 * the requests in flight, so that the journal ends consistent. The `sending` records of all the
 * workers share the journal's and the ledger's synced writes (group commit).
 *
 * Journaling runs up to `concurrency` orders ahead of the requests: while `concurrency` requests
 * are in flight, the next orders' `sending` records are written, so that a request slot that
 * frees up is used at once instead of after a synced write. An order journaled but not sent
 * (the import stopped) is recorded as not sent.
 */
import type { ApiClient } from '../api/client.js';
import { ApiError, AuthError, ConnectionError, TimeoutError } from '../api/errors.js';
import type { InputProblem } from '../core/errors.js';
import { statusLine } from '../core/http-status.js';
import { bodyHash, type OrderJournal } from './journal.js';
import { type ImportKind, ORDER_IMPORT } from './kind.js';
import { describeEntry, type LedgerEntry, LedgerWriteError, type OrderLedger } from './ledger.js';
import type { OrderResult } from './report.js';
import type { ValidatedOrder } from './types.js';

export const ORDERS_PATH = ORDER_IMPORT.path;

export interface SubmitOptions {
  /** What is sent (its endpoint, key and words); default orders. */
  kind?: ImportKind;
  client: Pick<ApiClient, 'request'>;
  journal: OrderJournal;
  /**
   * The order ledger of this service, `load`ed with the input's externalIds: orders that another
   * command created (or may have created) are not sent, and every order sent is recorded in it.
   */
  ledger?: OrderLedger;
  /** Requests in flight at most. */
  concurrency: number;
  /** Send again orders whose outcome is unknown (the user checked they do not exist). */
  retryUnknown?: boolean;
  /** Aborted on Ctrl-C: no new request starts; those in flight are waited for. */
  signal: AbortSignal;
  /** Called once per order, in completion order (`index` gives the input order). */
  onResult: (result: OrderResult, item: ValidatedOrder) => void;
}

export type StopKind = 'interrupted' | 'credentials' | 'unreachable' | 'journal' | 'ledger' | 'error';

/** Why sending stopped before the end of the input. */
export interface SubmitStop {
  kind: StopKind;
  /** The error to report (absent for an interrupt). */
  error?: Error;
}

export interface SubmitOutcome {
  stopped: SubmitStop | undefined;
  /** Requests sent (each after its `sending` record was on disk). */
  sent: number;
  /** From the first request to the last answer, for the sending rate. */
  sendingMs: number;
}

const STOP_NOTE: Record<StopKind, string> = {
  interrupted: 'not sent: the import was interrupted',
  credentials: 'not sent: the service refused the credentials',
  unreachable: 'not sent: the service could not be reached',
  journal: 'not sent: the journal could not be written',
  ledger: 'not sent: the order ledger could not be written',
  error: 'not sent: the import stopped on an unexpected error',
};

interface SendingRecords {
  journal: boolean;
  ledger: boolean;
}

/** Sends the orders and reports each outcome; resolves once nothing is in flight. */
export async function submitOrders(
  items: AsyncIterable<ValidatedOrder> | Iterable<ValidatedOrder>,
  options: SubmitOptions,
): Promise<SubmitOutcome> {
  const { client, journal, ledger, signal, onResult } = options;
  const kind = options.kind ?? ORDER_IMPORT;
  const concurrency = Math.max(1, Math.floor(options.concurrency));
  /** Orders between their `sending` record and their outcome: at most 2 × concurrency. */
  let inFlight = 0;
  /** Requests sent and not yet answered: at most `concurrency`. */
  let requestsOut = 0;
  /** Orders journaled and waiting for a request slot, first in first out. */
  const waitingForRequest: (() => void)[] = [];
  const requestSlot = (): Promise<void> | undefined => {
    if (requestsOut < concurrency) {
      requestsOut++;
      return undefined;
    }
    return new Promise<void>((resolve) => waitingForRequest.push(resolve));
  };
  /** Hands the slot to the next order waiting, or frees it. */
  const releaseRequestSlot = (): void => {
    const next = waitingForRequest.shift();
    if (next) next();
    else requestsOut--;
  };
  let sent = 0;
  let firstSend = 0;
  let lastAnswer = 0;
  let stopped: SubmitStop | undefined;
  /** Resumes the main loop when it waits for a free slot or for the last answers. */
  let resumeMainLoop: (() => void) | undefined;
  const slotFreed = (): void => {
    const resume = resumeMainLoop;
    resumeMainLoop = undefined;
    resume?.();
  };
  const nextSlotFreed = (): Promise<void> => new Promise<void>((resolve) => (resumeMainLoop = resolve));
  const stop = (kind: StopKind, error?: Error): void => {
    stopped ??= error ? { kind, error } : { kind };
    slotFreed();
  };
  // Read through a function: callbacks set the stop while the main loop waits.
  const stopReason = (): SubmitStop | undefined => stopped;
  const onAbort = (): void => stop('interrupted');
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  /** externalId -> line of its first order in this input: a repeat must never be sent twice. */
  const firstLine = new Map<string, number>();

  /** An order recorded as `sending` that did not leave: say so where its `sending` reached the disk. */
  const recordNotSent = (externalId: string, kind: StopKind, recorded: SendingRecords): void => {
    if (recorded.journal) journal.notSent(externalId, STOP_NOTE[kind]);
    if (recorded.ledger) ledger?.notSent(externalId, STOP_NOTE[kind]);
  };

  const notSent = (item: ValidatedOrder, kind: StopKind): void => {
    onResult({ ...base(item), status: 'not-sent', message: STOP_NOTE[kind] }, item);
  };

  const settleResponse = (item: ValidatedOrder, externalId: string, status: number, body: unknown): void => {
    if (status >= 200 && status < 300) {
      const { id, code } = serviceIds(body);
      journal.created(externalId, { httpStatus: status, id, code });
      ledger?.created(externalId, { httpStatus: status, id, code });
      onResult({ ...base(item), status: 'created', httpStatus: status, id, code }, item);
      return;
    }
    // A redirect is not a creation; a POST that is redirected was not processed.
    const message = `the service answered ${statusLine(status)} instead of creating the ${kind.one}; check --base-url`;
    journal.failed(externalId, { httpStatus: status, message });
    ledger?.failed(externalId, { httpStatus: status, message });
    onResult({ ...base(item), status: 'failed', httpStatus: status, message }, item);
  };

  const settleError = (item: ValidatedOrder, externalId: string, error: unknown): void => {
    if (error instanceof ApiError) {
      // The service answered with an error: it did not create the order, so re-sending is safe.
      const message = failureMessage(error);
      journal.failed(externalId, { httpStatus: error.status, message });
      ledger?.failed(externalId, { httpStatus: error.status, message });
      onResult({ ...base(item), status: 'failed', httpStatus: error.status, message }, item);
      if (error instanceof AuthError) stop('credentials', error);
      return;
    }
    if (error instanceof ConnectionError && error.outcome === 'not-sent') {
      // Never reached the service: whatever was known of the order before still holds.
      journal.notSent(externalId, error.message);
      ledger?.notSent(externalId, error.message);
      onResult({ ...base(item), status: 'not-sent', message: `not sent: ${error.message}` }, item);
      stop('unreachable', error);
      return;
    }
    // The request may have reached the service: only a person can tell whether it was created.
    const reason = unknownReason(error);
    journal.unknown(externalId, reason);
    ledger?.unknown(externalId, reason);
    onResult(
      { ...base(item), status: 'unknown', message: `${reason}: the ${kind.one} may have been created` },
      item,
    );
    if (!(error instanceof ConnectionError)) stop('error', error as Error);
  };

  /** Records the order as `sending` (on disk), then, given a request slot, sends it and records its outcome. */
  const sendOrder = async (item: ValidatedOrder, externalId: string, json: string): Promise<void> => {
    const hash = bodyHash(json);
    const [inJournal, inLedger] = await Promise.allSettled([
      journal.sending(externalId, hash, item.source.location.line),
      ledger?.sending(externalId, hash),
    ]);
    const recorded: SendingRecords = {
      journal: inJournal.status === 'fulfilled',
      ledger: inLedger.status === 'fulfilled',
    };
    const refused = [inJournal, inLedger].find((settled) => settled.status === 'rejected');
    if (refused) {
      const error = refused.reason as Error;
      const kind = error instanceof LedgerWriteError ? 'ledger' : 'journal';
      stop(kind, error);
      recordNotSent(externalId, kind, recorded);
      notSent(item, kind);
      return;
    }
    await requestSlot();
    try {
      const late = stopReason();
      if (late) {
        recordNotSent(externalId, late.kind, recorded);
        notSent(item, late.kind);
        return;
      }
      sent++;
      if (firstSend === 0) firstSend = performance.now();
      try {
        const response = await client.request<unknown>('POST', kind.path, {
          rawBody: json,
          contentType: 'application/json',
        });
        lastAnswer = performance.now();
        settleResponse(item, externalId, response.status, response.body);
      } catch (error) {
        lastAnswer = performance.now();
        settleError(item, externalId, error);
      }
    } finally {
      releaseRequestSlot();
    }
  };

  try {
    for await (const item of items) {
      const early = stopReason();
      if (early) {
        notSent(item, early.kind);
        continue;
      }
      const { source } = item;
      if (item.body === undefined || item.problems.length > 0) {
        onResult(
          {
            ...base(item),
            status: 'invalid',
            message: problemsMessage(item.problems, source.location.line),
            problems: item.problems,
          },
          item,
        );
        continue;
      }
      const externalId = source.externalId;
      if (externalId === undefined || externalId === '') {
        const message = `${kind.keyField}: is required: it is the key that makes re-runs safe`;
        onResult({ ...base(item), status: 'invalid', message }, item);
        continue;
      }
      const earlier = firstLine.get(externalId);
      if (earlier !== undefined) {
        const message = `${kind.keyField}: ${JSON.stringify(externalId)} repeats the ${kind.one} of line ${earlier}; it was not sent twice`;
        onResult({ ...base(item), status: 'invalid', message }, item);
        continue;
      }
      firstLine.set(externalId, source.location.line);

      const json = JSON.stringify(item.body);
      const state = journal.stateOf(externalId);
      const elsewhere = ledger?.stateOf(externalId);
      /** A person resolved it as not created after this journal's doubt: it may be sent. */
      let doubtCleared = false;
      if (elsewhere && state?.event !== 'created' && decidesOverJournal(elsewhere, state?.at)) {
        doubtCleared = elsewhere.status === 'not-created';
        if (elsewhere.status === 'created') {
          onResult(
            {
              ...base(item),
              status: 'skipped',
              httpStatus: elsewhere.httpStatus,
              id: elsewhere.id,
              code: elsewhere.code,
              message: `already ${describeEntry(elsewhere)}`,
            },
            item,
          );
          continue;
        }
        if (elsewhere.status === 'in-doubt' && !options.retryUnknown) {
          const message = `${describeEntry(elsewhere)}; not sent: check at the service, then use --retry-unknown`;
          onResult({ ...base(item), status: 'unknown', message }, item);
          continue;
        }
      }
      if (state?.event === 'created') {
        const changed = state.bodyHash !== undefined && state.bodyHash !== bodyHash(json);
        const earlier =
          state.resolved === 'created'
            ? 'recorded as created with orders resolve'
            : 'already created by an earlier run';
        const message = changed
          ? `${earlier}; the ${kind.one} has changed in the input since, and was not sent again`
          : earlier;
        onResult(
          {
            ...base(item),
            status: 'skipped',
            httpStatus: state.httpStatus,
            id: state.id,
            code: state.code,
            message,
          },
          item,
        );
        continue;
      }
      if (
        (state?.event === 'sending' || state?.event === 'unknown') &&
        !options.retryUnknown &&
        !doubtCleared
      ) {
        const why =
          state.event === 'sending' ? 'the run that sent it stopped before the answer' : state.reason;
        const message = `outcome unknown since ${state.at}: ${why}; not sent again: check at the service ${kind.settleUnknown}`;
        onResult({ ...base(item), status: 'unknown', message }, item);
        continue;
      }

      while (inFlight >= 2 * concurrency && !stopReason()) await nextSlotFreed();
      const late = stopReason();
      if (late) {
        notSent(item, late.kind);
        continue;
      }
      inFlight++;
      void sendOrder(item, externalId, json)
        .catch((error: unknown) => stop('error', error as Error))
        .finally(() => {
          inFlight--;
          slotFreed();
        });
    }
  } catch (error) {
    // Reading the input failed half-way (the file changed under us): stop, but settle what is out.
    stop('error', error as Error);
  } finally {
    signal.removeEventListener('abort', onAbort);
    while (inFlight > 0) await nextSlotFreed();
  }
  return { stopped, sent, sendingMs: sent > 0 ? lastAnswer - firstSend : 0 };
}

/**
 * Whether another command's record in the ledger decides this order rather than the import's
 * own journal: a creation always does; a doubt or a person's resolution does when it is newer
 * than what the journal says; a refusal elsewhere says nothing of this import's own sending.
 */
function decidesOverJournal(elsewhere: LedgerEntry, journalAt: string | undefined): boolean {
  if (elsewhere.status === 'created') return true;
  if (elsewhere.status === 'not-created' && elsewhere.event !== 'resolved') return false;
  return journalAt === undefined || elsewhere.at >= journalAt;
}

function base(item: ValidatedOrder): Pick<OrderResult, 'index' | 'externalId' | 'location'> {
  return { index: item.source.index, externalId: item.source.externalId, location: item.source.location };
}

/** The service's id and code of a created order, when its answer carries them. */
export function serviceIds(body: unknown): { id?: string | number; code?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const out: { id?: string | number; code?: string } = {};
  if (typeof record.id === 'number' || typeof record.id === 'string') out.id = record.id;
  if (typeof record.code === 'string') out.code = record.code;
  return out;
}

/** Why an order's outcome is unknown, in the words of the report. */
function unknownReason(error: unknown): string {
  if (error instanceof TimeoutError) return 'no answer within --timeout';
  if (error instanceof ConnectionError)
    return `the connection broke before the answer (${error.code ?? 'no answer'})`;
  return `unexpected error after sending (${error instanceof Error ? error.message : String(error)})`;
}

/** `422 Unprocessable Entity: The order is invalid; items[0].orderedQuantity: ...` */
export function failureMessage(error: ApiError): string {
  const after = error.attempts > 1 ? ` after ${error.attempts} attempts` : '';
  const status = statusLine(error.status);
  const details = error.details
    .filter((line) => line !== 'The service said:')
    .map((line) => line.trim().replace(/^- /, ''))
    // A problem title that only repeats the status text says nothing more.
    .filter((line) => line !== '' && `${error.status} ${line}`.toLowerCase() !== status.toLowerCase());
  return `${status}${after}${details.length > 0 ? `: ${details.join('; ')}` : ''}`;
}

/** `item.orderedQuantity: must be ...; line 7: item.internalReferenceId: ...` (the order's own line is in the report). */
function problemsMessage(problems: InputProblem[], line: number): string {
  if (problems.length === 0) return 'invalid';
  return problems
    .map((problem) => {
      const where = problem.line !== undefined && problem.line !== line ? `line ${problem.line}: ` : '';
      return `${where}${problem.field ? `${problem.field}: ` : ''}${problem.message}`;
    })
    .join('; ');
}
