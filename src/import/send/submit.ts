/**
 * The sending step of an import: records go out in input order, `concurrency` at a time over
 * kept-alive connections. Immediately before its request leaves, each record's key is claimed in
 * the order ledger (durable, atomic across every process that shares the ledger): a key that is
 * created, in doubt, or being sent by another live ordercli is not sent, and the refusal is the
 * record's result. The journal records the claim and the outcome beside the ledger.
 *
 * It stops starting new requests on Ctrl-C, at the first refusal of the credentials, or when the
 * service or the ledger cannot be reached, and always waits for the requests in flight, so that
 * the ledger ends consistent. Claims run up to `concurrency` records ahead of the requests, so
 * that a request slot that frees up is used at once instead of after a synced write; a record
 * claimed but not sent (the import stopped) is recorded as not sent.
 */
import type { ApiClient } from '../api/client.js';
import { ApiError, AuthError, ConnectionError, TimeoutError } from '../api/errors.js';
import type { InputProblem } from '../core/errors.js';
import { statusLine } from '../core/http-status.js';
import type { ExistingRecord } from './already-exists.js';
import type { OrderJournal } from './journal.js';
import { type ImportKind, ORDER_IMPORT } from './kind.js';
import { answeredAlreadyThere, bodyHash, describeEntry, describeOwner } from './ledger/record.js';
import type { Claim, ClaimRefusal, LedgerStore } from './ledger/store.js';
import type { OrderResult, ReportStatus } from './report.js';
import type { ValidatedOrder } from './types.js';

export const ORDERS_PATH = ORDER_IMPORT.path;

export interface SubmitOptions {
  /** What is sent (its endpoint, key and words); default orders. */
  kind?: ImportKind;
  client: Pick<ApiClient, 'request'>;
  journal: OrderJournal;
  /** The ledger of this service: each key is claimed there before its request leaves. */
  ledger: LedgerStore;
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

/** How long requests in flight may still answer after Ctrl-C or SIGTERM. */
const INTERRUPT_GRACE_MS = 1_500;

const STOP_NOTE: Record<StopKind, string> = {
  interrupted: 'not sent: the import was interrupted',
  credentials: 'not sent: the service refused the credentials',
  unreachable: 'not sent: the service could not be reached',
  journal: 'not sent: the journal could not be written',
  ledger: 'not sent: the order ledger could not be written',
  error: 'not sent: the import stopped on an unexpected error',
};

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
  const slots = new RequestSlots(concurrency);
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
  /**
   * Requests still in flight this long after an interrupt are abandoned (recorded in doubt), so
   * that Ctrl-C or SIGTERM ends the import within 2 s whatever the service does.
   */
  const abandon = new AbortController();
  /**
   * One controller per request in flight, aborted on abandon: a signal shared by every request
   * would collect a dependant per request (AbortSignal.any in the client), which slows each one.
   */
  const requestsInFlight = new Set<AbortController>();
  let abandonTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    stop('interrupted');
    abandonTimer = setTimeout(() => {
      abandon.abort();
      for (const request of requestsInFlight) request.abort();
    }, INTERRUPT_GRACE_MS);
    abandonTimer.unref();
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });

  /** A claimed record that did not leave: its earlier state stands. */
  const recordNotSent = (claim: Claim, reason: string): void => {
    journal.notSent(claim, reason);
    ledger.notSent(claim, reason);
  };

  const notSent = (item: ValidatedOrder, kind: StopKind): void => {
    onResult(resultOf(item, 'not-sent', { message: STOP_NOTE[kind] }), item);
  };

  const settleResponse = (item: ValidatedOrder, claim: Claim, status: number, body: unknown): void => {
    if (status >= 200 && status < 300) {
      const { id, code } = serviceIds(body);
      journal.created(claim, { httpStatus: status, id, code });
      ledger.created(claim, { httpStatus: status, id, code });
      onResult(resultOf(item, 'created', { httpStatus: status, id, code }), item);
      return;
    }
    // A redirect is not a creation; a POST that is redirected was not processed.
    const message = `the service answered ${statusLine(status)} instead of creating the ${kind.one}; check --base-url`;
    journal.failed(claim, { httpStatus: status, message });
    ledger.failed(claim, { httpStatus: status, message });
    onResult(resultOf(item, 'failed', { httpStatus: status, message }), item);
  };

  const settleError = (item: ValidatedOrder, claim: Claim, error: unknown): void => {
    if (error instanceof ApiError) {
      const existing = kind.existing?.(error.status, error.body);
      if (existing) {
        // Already at the service (a contact reference answered 409): recorded as there, so that
        // no run sends it again, and reported `exists` with the id the answer names.
        const result = existsResult(item, error, existing, kind);
        const outcome = {
          httpStatus: error.status,
          ...(existing.id !== undefined ? { id: existing.id } : {}),
        };
        journal.created(claim, outcome);
        ledger.created(claim, outcome);
        onResult(result, item);
        return;
      }
      // The service answered with an error: it did not create the order, so re-sending is safe.
      const message = failureMessage(error);
      journal.failed(claim, { httpStatus: error.status, message });
      ledger.failed(claim, { httpStatus: error.status, message });
      onResult(resultOf(item, 'failed', { httpStatus: error.status, message }), item);
      if (error instanceof AuthError) stop('credentials', error);
      return;
    }
    if (error instanceof ConnectionError && error.outcome === 'not-sent') {
      // Never reached the service: whatever was known of the order before still holds.
      recordNotSent(claim, error.message);
      onResult(resultOf(item, 'not-sent', { message: `not sent: ${error.message}` }), item);
      stop('unreachable', error);
      return;
    }
    // The request may have reached the service: only a person can tell whether it was created.
    const reason = abandon.signal.aborted
      ? `interrupted after sending, before the answer (${INTERRUPT_GRACE_MS / 1000} s after Ctrl-C or SIGTERM)`
      : unknownReason(error);
    journal.unknown(claim, reason);
    ledger.unknown(claim, reason);
    onResult(
      resultOf(item, 'unknown', { message: `${reason}: the ${kind.one} may have been created` }),
      item,
    );
    if (!(error instanceof ConnectionError) && !abandon.signal.aborted) stop('error', error as Error);
  };

  /** Claims the record in the ledger (durable), then, given a request slot, sends it and records its outcome. */
  const sendOrder = async (item: ValidatedOrder, externalId: string, json: string): Promise<void> => {
    const hash = bodyHash(json);
    const line = item.source.location.line;
    const unwritable = journal.writeError();
    if (unwritable) {
      stop('journal', unwritable);
      notSent(item, 'journal');
      return;
    }
    let claim: Claim;
    try {
      const result = await ledger.claim({
        externalId,
        bodyHash: hash,
        line,
        takeOverDoubt: options.retryUnknown,
      });
      if (!result.claimed) {
        onResult(refusalResult(item, result.refusal, hash, journal.path, kind), item);
        return;
      }
      claim = result.claim;
    } catch (error) {
      const kind: StopKind = signal.aborted ? 'interrupted' : 'ledger';
      stop(kind, kind === 'interrupted' ? undefined : (error as Error));
      notSent(item, kind);
      return;
    }
    journal.claimed(claim, { bodyHash: hash, line });
    await slots.take();
    try {
      const late = stopReason();
      if (late) {
        recordNotSent(claim, STOP_NOTE[late.kind]);
        notSent(item, late.kind);
        return;
      }
      sent++;
      if (firstSend === 0) firstSend = performance.now();
      const request = new AbortController();
      requestsInFlight.add(request);
      try {
        const response = await client.request<unknown>('POST', kind.path, {
          rawBody: json,
          contentType: 'application/json',
          signal: request.signal,
          // A redirect is settled as an order not created (settleResponse).
          acceptRedirects: true,
        });
        lastAnswer = performance.now();
        settleResponse(item, claim, response.status, response.body);
      } catch (error) {
        lastAnswer = performance.now();
        settleError(item, claim, error);
      } finally {
        requestsInFlight.delete(request);
      }
    } finally {
      slots.release();
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
          resultOf(item, 'invalid', {
            message: problemsMessage(item.problems, source.location.line),
            problems: item.problems,
          }),
          item,
        );
        continue;
      }
      const externalId = source.externalId;
      if (externalId === undefined || externalId === '') {
        const message = `${kind.keyField}: is required: it is the key that makes re-runs safe`;
        onResult(resultOf(item, 'invalid', { message }), item);
        continue;
      }
      // A key twice in one input is invalid by the validation; were one to come through, its
      // second claim would meet the first (this process's, alive) and not be sent.

      const json = JSON.stringify(item.body);
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
    clearTimeout(abandonTimer);
  }
  return { stopped, sent, sendingMs: sent > 0 ? lastAnswer - firstSend : 0 };
}

/** What a refused claim means for the order, in the words of the report. */
function refusalResult(
  item: ValidatedOrder,
  refusal: ClaimRefusal,
  hash: string,
  journalPath: string,
  kind: ImportKind,
): OrderResult {
  const entry = refusal.entry;
  const ours = entry.journal !== undefined && entry.journal === journalPath;
  if (refusal.reason === 'claimed') {
    return resultOf(item, 'skipped', {
      message: `being sent by another ordercli: ${describeOwner(entry)}; not sent`,
    });
  }
  if (refusal.reason === 'created' && answeredAlreadyThere(entry)) {
    return resultOf(item, 'exists', {
      httpStatus: entry.httpStatus,
      id: entry.id,
      message: `${describeEntry(entry)}; not sent again`,
    });
  }
  if (refusal.reason === 'created') {
    const changed = entry.bodyHash !== undefined && entry.bodyHash !== hash;
    const earlier =
      entry.resolved === 'created'
        ? 'recorded as created with orders resolve'
        : ours
          ? 'already created by an earlier run'
          : `already ${describeEntry(entry)}`;
    const message = changed
      ? `${earlier}; the ${kind.one} has changed in the input since, and was not sent again`
      : earlier;
    return resultOf(item, 'skipped', {
      httpStatus: entry.httpStatus,
      id: entry.id,
      code: entry.code,
      message,
    });
  }
  const message = ours
    ? `outcome unknown since ${entry.sentAt ?? entry.at}: ${entry.reason ?? 'the run that sent it stopped before the answer'}; not sent again: ${kind.settleUnknown}`
    : `${describeEntry(entry)}; not sent: ${kind.settleUnknown}`;
  return resultOf(item, 'unknown', { message });
}

/** A record the service answered "already there" for, in the words of the report. */
function existsResult(
  item: ValidatedOrder,
  error: ApiError,
  existing: ExistingRecord,
  kind: ImportKind,
): OrderResult {
  const find =
    existing.id === undefined && kind.findExisting
      ? `; its id is not in the answer: find it with ${kind.findExisting}`
      : '';
  return resultOf(item, 'exists', {
    httpStatus: error.status,
    id: existing.id,
    message: `already at the service: ${failureMessage(error)}${find}`,
  });
}

/** At most `size` requests out at once; orders waiting for one are served first come, first served. */
class RequestSlots {
  private out = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves once this order may send (undefined: at once). */
  take(): Promise<void> | undefined {
    if (this.out < this.size) {
      this.out++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Hands the slot to the next order waiting, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.out--;
  }
}

/**
 * The result of an order, built whole in one literal: made with an object spread of its index,
 * key and location, or with fields added one by one, every result of an import was promoted to
 * the old generation (300,000 skipped orders left 400 MB of garbage there; 10 MB this way).
 */
function resultOf(
  item: ValidatedOrder,
  status: ReportStatus,
  details: Omit<Partial<OrderResult>, 'index' | 'externalId' | 'location' | 'status'> = {},
): OrderResult {
  const { source } = item;
  return {
    index: source.index,
    externalId: source.externalId,
    location: source.location,
    status,
    httpStatus: details.httpStatus,
    id: details.id,
    code: details.code,
    message: details.message,
    problems: details.problems,
  };
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
export function problemsMessage(problems: InputProblem[], line: number): string {
  if (problems.length === 0) return 'invalid';
  return problems
    .map((problem) => {
      const where = problem.line !== undefined && problem.line !== line ? `line ${problem.line}: ` : '';
      return `${where}${problem.field ? `${problem.field}: ` : ''}${problem.message}`;
    })
    .join('; ');
}
