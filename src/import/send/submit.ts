/**
 * The sending step of an import: records go out in input order, `concurrency` at a time over
 * kept-alive connections. Immediately before its request leaves, each record's key is claimed in
 * the order ledger (durable, atomic across every process that shares the ledger): a key that is
 * created, in doubt, or being sent by another live ordercli is not sent, and the refusal is the
 * record's result. The outcome is recorded on the claim: the ledger is the only record.
 *
 * It stops starting new requests on Ctrl-C, at the first refusal of the credentials, or when the
 * service or the ledger cannot be reached, and always waits for the requests in flight, so that
 * the ledger ends consistent. Claims run up to `concurrency` records ahead of the requests, so
 * that a request slot that frees up is used at once instead of after a synced write; a record
 * claimed but not sent (the import stopped) is recorded as not sent.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import type { ApiClient } from '../../api/client.js';
import { ApiError, AuthError, ConnectionError, TimeoutError } from '../../api/errors.js';
import type { InputProblem } from '../../core/errors.js';
import { statusLine } from '../../core/http-status.js';
import { bodyHash, describeOwner } from '../../ledger/record.js';
import type { Claim, ClaimRefusal, LedgerStore } from '../../ledger/store.js';
import { type ImportKind, ORDER_IMPORT } from '../kind.js';
import type { RecordResult, ReportStatus } from '../report/report.js';
import type { ValidatedRecord } from '../types.js';
import type { ExistingRecord } from './already-exists.js';
import { answeredAlreadyThere, describeEntry } from './describe-entry.js';

export interface SubmitOptions {
  /** What is sent (its endpoint, key and words); default orders. */
  kind?: ImportKind;
  client: Pick<ApiClient, 'request'>;
  /** The input's identity in the ledger: a refusal of a key this input sent says "an earlier run". */
  input?: string;
  /** The ledger of this service: each key is claimed there before its request leaves. */
  ledger: LedgerStore;
  /** Requests in flight at most. */
  concurrency: number;
  /** Send again orders whose outcome is unknown (the user checked they do not exist). */
  retryUnknown?: boolean;
  /** Aborted on Ctrl-C: no new request starts; those in flight are waited for. */
  signal: AbortSignal;
  /** Called once per order, in completion order (`index` gives the input order). */
  onResult: (result: RecordResult, item: ValidatedRecord) => void;
}

export type StopKind = 'interrupted' | 'credentials' | 'unreachable' | 'ledger' | 'error';

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
  ledger: 'not sent: the order ledger could not be written',
  error: 'not sent: the import stopped on an unexpected error',
};

/** Sends the records and reports each outcome; resolves once nothing is in flight. */
export async function submitRecords(
  items: AsyncIterable<ValidatedRecord> | Iterable<ValidatedRecord>,
  options: SubmitOptions,
): Promise<SubmitOutcome> {
  return new Submission(options).run(items);
}

/** One run of the sending step: its limits, what it has sent, and why it stopped. */
class Submission {
  private readonly kind: ImportKind;
  /** Records between their claim and their outcome: claims run up to `concurrency` ahead of requests. */
  private readonly claimsAhead: LimitFunction;
  /** Requests out at once; records waiting for one are served first come, first served. */
  private readonly requests: LimitFunction;
  /** Each record handed to `claimsAhead` until it settles: what the end of the run waits for. */
  private readonly unsettled = new Set<Promise<void>>();
  private stopped: SubmitStop | undefined;
  /** Resolves once the run stops, to wake a loop that waits for a free place. */
  private readonly whenStopped: Promise<void>;
  private stoppedNow!: () => void;
  private sent = 0;
  private firstSend = 0;
  private lastAnswer = 0;
  /**
   * Requests still in flight this long after an interrupt are abandoned (recorded in doubt), so
   * that Ctrl-C or SIGTERM ends the import within 2 s whatever the service does.
   */
  private readonly abandon = new AbortController();
  /**
   * One controller per request in flight, aborted on abandon: a signal shared by every request
   * would collect a dependant per request (AbortSignal.any in the client), which slows each one.
   */
  private readonly requestsInFlight = new Set<AbortController>();
  private abandonTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: SubmitOptions) {
    this.kind = options.kind ?? ORDER_IMPORT;
    const concurrency = Math.max(1, Math.floor(options.concurrency));
    this.claimsAhead = pLimit(2 * concurrency);
    this.requests = pLimit(concurrency);
    this.whenStopped = new Promise<void>((resolve) => (this.stoppedNow = resolve));
  }

  async run(items: AsyncIterable<ValidatedRecord> | Iterable<ValidatedRecord>): Promise<SubmitOutcome> {
    const { signal } = this.options;
    if (signal.aborted) this.onAbort();
    else signal.addEventListener('abort', this.onAbort, { once: true });
    try {
      for await (const item of items) await this.take(item);
    } catch (error) {
      // Reading the input failed half-way (the file changed under us): stop, but settle what is out.
      this.stop('error', error as Error);
    } finally {
      signal.removeEventListener('abort', this.onAbort);
      await Promise.all(this.unsettled);
      clearTimeout(this.abandonTimer);
    }
    const { stopped, sent } = this;
    return { stopped, sent, sendingMs: sent > 0 ? this.lastAnswer - this.firstSend : 0 };
  }

  /**
   * One record of the input: reported at once when it cannot be sent, else handed to the claims
   * once one of their places is free (so that the input is read no further ahead than that).
   */
  private async take(item: ValidatedRecord): Promise<void> {
    const { onResult } = this.options;
    const early = this.stopped;
    if (early) return this.notSent(item, early.kind);
    const { source } = item;
    if (item.body === undefined || item.problems.length > 0) {
      const message = problemsMessage(item.problems, source.location.line);
      onResult(resultOf(item, 'invalid', { message, problems: item.problems }), item);
      return;
    }
    const key = source.key;
    if (key === undefined || key === '') {
      const message = `${this.kind.keyField}: is required: it is the key that makes re-runs safe`;
      onResult(resultOf(item, 'invalid', { message }), item);
      return;
    }
    // A key twice in one input is invalid by the validation; were one to come through, its
    // second claim would meet the first (this process's, alive) and not be sent.
    const json = JSON.stringify(item.body);
    if (this.claimsAhead.activeCount >= this.claimsAhead.concurrency) {
      // Full: wait until half the places are free, so that the next claims leave together, as
      // one round of the ledger (one synced write) rather than one round each.
      while (this.claimsAhead.activeCount > this.claimsAhead.concurrency / 2 && !this.stopped) {
        await Promise.race([...this.unsettled, this.whenStopped]);
      }
    }
    const late = this.stopped;
    if (late) return this.notSent(item, late.kind);
    const settled = this.claimsAhead(() => this.claimAndSend(item, key, json)).catch((error: unknown) =>
      this.stop('error', error as Error),
    );
    this.unsettled.add(settled);
    void settled.finally(() => this.unsettled.delete(settled));
  }

  /** Claims the record in the ledger (durable), then, given a request slot, sends it and records its outcome. */
  private async claimAndSend(item: ValidatedRecord, key: string, json: string): Promise<void> {
    const claim = await this.claim(item, key, bodyHash(json));
    if (claim === undefined) return;
    await this.requests(() => this.send(item, claim, json));
  }

  /** The record's claim in the ledger, or undefined once its refusal or the stop is reported. */
  private async claim(item: ValidatedRecord, key: string, hash: string): Promise<Claim | undefined> {
    const { ledger, input, signal, onResult, retryUnknown } = this.options;
    try {
      const line = item.source.location.line;
      const result = await ledger.claim({
        externalId: key,
        bodyHash: hash,
        line,
        takeOverDoubt: retryUnknown,
      });
      if (result.claimed) return result.claim;
      onResult(refusalResult(item, result.refusal, hash, input, this.kind), item);
    } catch (error) {
      const kind: StopKind = signal.aborted ? 'interrupted' : 'ledger';
      this.stop(kind, kind === 'interrupted' ? undefined : (error as Error));
      this.notSent(item, kind);
    }
    return undefined;
  }

  /** Sends a claimed record (unless the run stopped while it waited for its slot) and settles it. */
  private async send(item: ValidatedRecord, claim: Claim, json: string): Promise<void> {
    const late = this.stopped;
    if (late) {
      this.recordNotSent(claim, STOP_NOTE[late.kind]);
      return this.notSent(item, late.kind);
    }
    this.sent++;
    if (this.firstSend === 0) this.firstSend = performance.now();
    const request = new AbortController();
    this.requestsInFlight.add(request);
    try {
      const response = await this.options.client.request<unknown>('POST', this.kind.path, {
        rawBody: json,
        contentType: 'application/json',
        signal: request.signal,
        // A redirect is settled as a record not created (settleResponse).
        acceptRedirects: true,
      });
      this.lastAnswer = performance.now();
      this.settleResponse(item, claim, response.status, response.body);
    } catch (error) {
      this.lastAnswer = performance.now();
      this.settleError(item, claim, error);
    } finally {
      this.requestsInFlight.delete(request);
    }
  }

  private settleResponse(item: ValidatedRecord, claim: Claim, status: number, body: unknown): void {
    const { ledger, onResult } = this.options;
    if (status >= 200 && status < 300) {
      const { id, code } = serviceIds(body);
      ledger.created(claim, { httpStatus: status, id, code });
      onResult(resultOf(item, 'created', { httpStatus: status, id, code }), item);
      return;
    }
    // A redirect is not a creation; a POST that is redirected was not processed.
    const message = `the service answered ${statusLine(status)} instead of creating the ${this.kind.one}; check --base-url`;
    ledger.failed(claim, { httpStatus: status, message });
    onResult(resultOf(item, 'failed', { httpStatus: status, message }), item);
  }

  private settleError(item: ValidatedRecord, claim: Claim, error: unknown): void {
    if (error instanceof ApiError) {
      this.settleRefusal(item, claim, error);
      return;
    }
    const { ledger, onResult } = this.options;
    if (error instanceof ConnectionError && error.outcome === 'not-sent') {
      // Never reached the service: whatever was known of the record before still holds.
      this.recordNotSent(claim, error.message);
      onResult(resultOf(item, 'not-sent', { message: `not sent: ${error.message}` }), item);
      this.stop('unreachable', error);
      return;
    }
    // The request may have reached the service: only a person can tell whether it was created.
    const abandoned = this.abandon.signal.aborted;
    const reason = abandoned
      ? `interrupted after sending, before the answer (${INTERRUPT_GRACE_MS / 1000} s after Ctrl-C or SIGTERM)`
      : unknownReason(error);
    ledger.unknown(claim, reason);
    const message = `${reason}: the ${this.kind.one} may have been created`;
    onResult(resultOf(item, 'unknown', { message }), item);
    if (!(error instanceof ConnectionError) && !abandoned) this.stop('error', error as Error);
  }

  /** The service answered with an error: already there (`exists`), or not created. */
  private settleRefusal(item: ValidatedRecord, claim: Claim, error: ApiError): void {
    const { ledger, onResult } = this.options;
    const existing = this.kind.existing?.(error.status, error.body);
    if (existing) {
      // Already at the service (a contact reference answered 409): recorded as there, so that
      // no run sends it again, and reported `exists` with the id the answer names.
      const outcome = { httpStatus: error.status, ...(existing.id !== undefined ? { id: existing.id } : {}) };
      ledger.created(claim, outcome);
      onResult(existsResult(item, error, existing, this.kind), item);
      return;
    }
    // It did not create the record, so re-sending is safe.
    const message = failureMessage(error);
    ledger.failed(claim, { httpStatus: error.status, message });
    onResult(resultOf(item, 'failed', { httpStatus: error.status, message }), item);
    if (error instanceof AuthError) this.stop('credentials', error);
  }

  /** A claimed record that did not leave: its earlier state stands. */
  private recordNotSent(claim: Claim, reason: string): void {
    this.options.ledger.notSent(claim, reason);
  }

  private notSent(item: ValidatedRecord, kind: StopKind): void {
    this.options.onResult(resultOf(item, 'not-sent', { message: STOP_NOTE[kind] }), item);
  }

  private stop(kind: StopKind, error?: Error): void {
    this.stopped ??= error ? { kind, error } : { kind };
    this.stoppedNow();
  }

  private readonly onAbort = (): void => {
    this.stop('interrupted');
    this.abandonTimer = setTimeout(() => {
      this.abandon.abort();
      for (const request of this.requestsInFlight) request.abort();
    }, INTERRUPT_GRACE_MS);
    this.abandonTimer.unref();
  };
}

/** What a refused claim means for the order, in the words of the report. */
function refusalResult(
  item: ValidatedRecord,
  refusal: ClaimRefusal,
  hash: string,
  input: string | undefined,
  kind: ImportKind,
): RecordResult {
  const entry = refusal.entry;
  const ours = input !== undefined && entry.input === input;
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
      validatedAt: entry.validatedAt,
    });
  }
  const message = ours
    ? `outcome unknown since ${entry.sentAt ?? entry.at}: ${entry.reason ?? 'the run that sent it stopped before the answer'}; not sent again: ${kind.settleUnknown}`
    : `${describeEntry(entry)}; not sent: ${kind.settleUnknown}`;
  return resultOf(item, 'unknown', { message });
}

/** A record the service answered "already there" for, in the words of the report. */
function existsResult(
  item: ValidatedRecord,
  error: ApiError,
  existing: ExistingRecord,
  kind: ImportKind,
): RecordResult {
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

/**
 * The result of an order, built whole in one literal: made with an object spread of its index,
 * key and location, or with fields added one by one, every result of an import was promoted to
 * the old generation (300,000 skipped orders left 400 MB of garbage there; 10 MB this way).
 */
function resultOf(
  item: ValidatedRecord,
  status: ReportStatus,
  details: Omit<Partial<RecordResult>, 'index' | 'key' | 'location' | 'status'> = {},
): RecordResult {
  const { source } = item;
  return {
    index: source.index,
    key: source.key,
    location: source.location,
    status,
    httpStatus: details.httpStatus,
    id: details.id,
    code: details.code,
    message: details.message,
    problems: details.problems,
    ...(details.validatedAt !== undefined ? { validatedAt: details.validatedAt } : {}),
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
