/**
 * The import journal: an append-only NDJSON file that records, per order, what was done and what
 * came back, so that a re-run never creates an order twice and nothing is lost unreported.
 *
 * One JSON object per line, each with `event`, `externalId`, `baseUrl` and `at`:
 * - `sending` (with `bodyHash`) is on disk (written and synced) before the request leaves;
 * - then `created` (`httpStatus`, the service's `id` and `code`), `failed` (`httpStatus` when the
 *   service answered, `message`) or `unknown` (`reason`: the request may have been processed);
 * - or `not-sent` (`reason`): the request never left after all (the import stopped, or the
 *   connection could not be made), so the state before that `sending` stands.
 * A `run` line opens each run (who, when, which input); replay ignores it. `sending` also carries
 * the order's `line` in the input (journals written before `orders journal` existed lack
 * it), for `orders journal` to show.
 *
 * `orders resolve` appends what the user checked at the service: `resolved-created` (with the
 * service's `id` and `code` when known, and `evidence`) makes the order `created`, skipped by every
 * later run; `resolved-not-created` makes it sendable again, as a `failed` one is.
 *
 * Replay (per externalId, for the same base URL, the last event wins): `created` → skip;
 * `sending` without an outcome, or `unknown` → unknown, not re-sent unless asked; `failed` → send
 * again, since the service refused it. A journal holding orders created or in doubt at another
 * base URL is refused (`OtherBaseUrlError`): the other URL may name the same service.
 *
 * `refs contacts import` keeps the same journal for contact references: its `externalId` holds
 * their `contact.externalReference`, and its `run` line names the command.
 *
 * One import per journal: the lock `<journal>.lock` (src/io/file-lock.ts) is taken before the
 * journal is read, and checked before each write.
 *
 * Storage is an AppendLog (src/io/append-log.ts), synced: a `sending` record is on disk before its
 * promise resolves, and the records of all the workers share each synced write (group commit).
 * Outcome records ride in the same writes without being waited for: a kill -9 loses at most the
 * last write's worth of them, and those orders replay as `unknown`, which is safe.
 */

import { hash } from 'node:crypto';
import { CancelledError, CliError, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { normalizeBaseUrl } from '../core/url.js';
import {
  AppendLog,
  AppendLogError,
  type LineVisitor,
  NotRegularFileError,
  readLog,
} from '../io/append-log.js';
import { describeCode } from '../io/file-lock.js';
import { isoNow } from '../io/iso-time.js';

export type JournalEvent =
  | 'sending'
  | 'created'
  | 'failed'
  | 'unknown'
  | 'not-sent'
  | 'resolved-created'
  | 'resolved-not-created';

/** What `orders resolve` recorded for an order. */
export type Resolution = 'created' | 'not-created';

/** The states an order can be left in (`not-sent` restores the one before its `sending`). */
export type JournalStateEvent = 'sending' | 'created' | 'failed' | 'unknown';

/** What a record says of an order beyond its event (each field present only where it applies). */
export interface JournalDetails {
  at: string;
  /** `sending`: the hash of the exact body sent. */
  bodyHash?: string;
  /** `created`, `failed`: the service's status. */
  httpStatus?: number;
  /** `created`: the service's id and code of the order. */
  id?: string | number;
  code?: string;
  /** `failed`: what the service said. */
  message?: string;
  /** `unknown`, `not-sent`: why. */
  reason?: string;
  /** `sending`: the line of the order in the input of its run. */
  line?: number;
  /** `resolved-*`: what the user's word rests on (checked by hand, a notification). */
  evidence?: string;
}

/** One line of the journal as written (the `run` line has its own shape). */
export interface JournalRecord extends JournalDetails {
  event: JournalEvent;
  externalId: string;
  baseUrl: string;
}

/** The last known state of one order for this base URL, after replay. */
export interface JournalState extends JournalDetails {
  event: JournalStateEvent;
  /** For `sending`: the state before it, which a `not-sent` record restores. */
  previous?: JournalState;
  /** When the order was last journaled as `sending` (an outcome keeps it). */
  sentAt?: string;
  /** Set when `orders resolve` decided this state. */
  resolved?: Resolution;
}

/** What replay found in an existing journal. */
export interface ReplaySummary {
  /** Complete lines read (all base URLs). */
  lines: number;
  /** A partial last line (a kill during a write) was found and cut off. */
  tornTail: boolean;
  /** Orders of this base URL by their last state. */
  created: number;
  failed: number;
  unknown: number;
  /** Other base URLs with orders created or in doubt there (`sending`, `unknown`). */
  otherBaseUrls: { baseUrl: string; created: number; unknown: number }[];
  /** The command whose `run` lines the journal holds: `refs contacts import` keys contact references. */
  command: 'orders import' | 'refs contacts import';
}

export interface OpenJournalOptions {
  /** The service root the orders go to; states are scoped to it. */
  baseUrl: string;
  /** Written in the `run` line, for people reading the file. */
  input?: string;
  /** The importing command (lock messages, and the `run` line unless `orders import`). */
  command?: 'orders import' | 'refs contacts import';
  /** What its records are, in messages (default `orders`). */
  records?: string;
  /** Append the `run` line that opens an import (default true; `orders resolve` writes none). */
  recordRun?: boolean;
  /** Open a journal that also holds orders of other base URLs (`orders resolve` picks one). */
  allowOtherBaseUrls?: boolean;
  /** Longest wait for a lock whose owner cannot be checked (default: the lock's). */
  lockWaitMs?: number;
  /** Told when the lock is waited for. */
  onLockWait?: (message: string) => void;
  /** Ends a wait for the lock or a long replay (Ctrl-C, SIGTERM). */
  signal?: AbortSignal;
}

/** A hash of the exact body sent, so a later run can tell that an order changed. */
export function bodyHash(json: string): string {
  // crypto.hash: one call, without the Hash object of createHash.
  return hash('sha256', json, 'base64url').slice(0, 22);
}

export class OrderJournal {
  readonly path: string;
  readonly baseUrl: string;
  readonly replay: ReplaySummary;
  private readonly states: Map<string, JournalState>;
  private readonly log: AppendLog;
  /** The first write that failed: nothing more may be sent. */
  private failure: Error | undefined;

  private constructor(
    path: string,
    baseUrl: string,
    log: AppendLog,
    states: Map<string, JournalState>,
    replay: ReplaySummary,
  ) {
    this.path = path;
    this.baseUrl = baseUrl;
    this.log = log;
    this.states = states;
    this.replay = replay;
  }

  /**
   * Opens (or creates) the journal for appending: takes its lock, replays it, cuts a torn last
   * line so that the next record does not glue onto it, and records the start of a run.
   */
  static async open(path: string, options: OpenJournalOptions): Promise<OrderJournal> {
    const baseUrl = normalizeBaseUrl(options.baseUrl);
    const log = await AppendLog.open(path, {
      what: `the import journal ${path}`,
      synced: true,
      // The import journals its orders ahead of their requests: 10 ms rounds let several share a sync.
      roundMs: 10,
      mode: 0o644,
      lock: {
        busyAdvice: 'wait for it to finish.',
        waitMs: options.lockWaitMs,
        onWait: options.onLockWait,
        signal: options.signal,
        command: options.command ?? 'orders import',
      },
    }).catch((error: unknown) => {
      throw journalOpenError(path, error, 'open');
    });
    try {
      const reader = new JournalReader(path, baseUrl);
      const torn = await log.replay(reader.visit, options.signal).catch((error: unknown) => {
        throw journalOpenError(path, error, 'open');
      });
      const { states, replay } = reader.summary(torn.lines, torn.tornTail !== undefined);
      if (replay.otherBaseUrls.length > 0 && !options.allowOtherBaseUrls)
        throw new OtherBaseUrlError(path, baseUrl, replay.otherBaseUrls, options.records);
      const journal = new OrderJournal(path, baseUrl, log, states, replay);
      if (options.recordRun !== false) {
        journal.keep(
          JSON.stringify({
            event: 'run',
            ...(options.command === undefined || options.command === 'orders import'
              ? {}
              : { command: options.command }),
            baseUrl,
            input: options.input,
            pid: process.pid,
            at: new Date().toISOString(),
          }),
        );
      }
      await journal.sync().catch((error: Error) => {
        // Nothing was sent yet: a journal that cannot be written is bad usage (exit 2).
        throw error instanceof JournalWriteError ? error.beforeSending() : error;
      });
      return journal;
    } catch (error) {
      await log.close();
      throw error;
    }
  }

  /**
   * Reads a journal without opening it for writing (a dry run); empty when the file is absent.
   * `replay.otherBaseUrls` lists the base URLs that `open` would refuse.
   */
  static async inspect(
    path: string,
    baseUrl: string,
    signal?: AbortSignal,
  ): Promise<{ states: Map<string, JournalState>; replay: ReplaySummary }> {
    const reader = new JournalReader(path, normalizeBaseUrl(baseUrl));
    const read = await readLog(path, `the import journal ${path}`, reader.visit, signal).catch(
      (error: unknown) => {
        throw journalOpenError(path, error, 'read');
      },
    );
    return reader.summary(read.lines, read.tornTail !== undefined);
  }

  /** Every order this journal knows for its base URL, by externalId, with its last state. */
  knownOrders(): ReadonlyMap<string, JournalState> {
    return this.states;
  }

  /** The last state of an order for this base URL, or undefined if this journal never saw it. */
  stateOf(externalId: string): JournalState | undefined {
    return this.states.get(externalId);
  }

  /**
   * Records that the order is about to be sent; resolves once the record is on disk. Never send
   * before it resolves: that is what makes a killed run's in-flight orders `unknown`, not lost.
   */
  sending(externalId: string, hash: string, line?: number): Promise<void> {
    const record: JournalRecord = {
      event: 'sending',
      externalId,
      baseUrl: this.baseUrl,
      at: isoNow(),
      bodyHash: hash,
    };
    if (line !== undefined) record.line = line;
    if (this.failure) return Promise.reject(this.failure);
    applyRecord(this.states, record);
    return this.log.append(JSON.stringify(record)).then(
      () => undefined,
      (error: unknown) => Promise.reject(this.fail(error)),
    );
  }

  created(externalId: string, outcome: { httpStatus: number; id?: string | number; code?: string }): void {
    this.record({ event: 'created', externalId, baseUrl: this.baseUrl, at: isoNow(), ...outcome });
  }

  /** The service refused the order: sending it again is safe. */
  failed(externalId: string, outcome: { httpStatus?: number; message: string }): void {
    this.record({ event: 'failed', externalId, baseUrl: this.baseUrl, at: isoNow(), ...outcome });
  }

  /** The request may have been processed: only a person can tell. */
  unknown(externalId: string, reason: string): void {
    this.record({ event: 'unknown', externalId, baseUrl: this.baseUrl, at: isoNow(), reason });
  }

  /** The order recorded as `sending` was not sent after all: its earlier state stands. */
  notSent(externalId: string, reason: string): void {
    this.record({ event: 'not-sent', externalId, baseUrl: this.baseUrl, at: isoNow(), reason });
  }

  /** What the user checked at the service (`orders resolve`); `sync()` makes it durable. */
  resolved(
    externalId: string,
    resolution: Resolution,
    details: { id?: string | number; code?: string; evidence: string },
  ): void {
    const record: JournalRecord = {
      event: resolution === 'created' ? 'resolved-created' : 'resolved-not-created',
      externalId,
      baseUrl: this.baseUrl,
      at: isoNow(),
    };
    if (details.id !== undefined) record.id = details.id;
    if (details.code !== undefined) record.code = details.code;
    record.evidence = details.evidence;
    this.record(record);
  }

  /** Resolves once every record so far is written and synced. */
  async sync(): Promise<void> {
    if (this.failure) throw this.failure;
    await this.log.flush().catch((error: unknown) => Promise.reject(this.fail(error)));
    if (this.failure) throw this.failure;
  }

  /** Writes and syncs what is pending, closes the file and releases the lock. */
  async close(): Promise<void> {
    try {
      if (!this.failure) await this.sync();
    } finally {
      await this.log.close();
    }
  }

  /** Appends a record that nobody waits for; a failure stops whatever is sent next. */
  private record(record: JournalRecord): void {
    applyRecord(this.states, record);
    this.keep(JSON.stringify(record));
  }

  private keep(line: string): void {
    this.log.append(line).catch((error: unknown) => this.fail(error));
  }

  /** Keeps the first failure, as the error every later write reports. */
  private fail(error: unknown): Error {
    this.failure ??=
      error instanceof AppendLogError || !(error instanceof CliError)
        ? new JournalWriteError(this.path, error as Error)
        : error;
    return this.failure;
  }
}

/** The journal could not be written: nothing more may be sent. */
export class JournalWriteError extends CliError {
  readonly path: string;
  /** The system's code (ENOSPC, EROFS, EACCES...) and its words. */
  readonly reason: string;

  constructor(path: string, cause: Error) {
    const code = errorCode(cause);
    const reason = `${code}: ${describeCode(code)}`;
    super(
      `Cannot write the import journal ${path} (${reason}), so nothing more was sent.`,
      ExitCode.Failure,
      ['Free some space or fix the permissions, then run the same command again: the journal is consistent.'],
    );
    this.path = path;
    this.reason = reason;
    this.cause = cause;
  }

  /** The same failure before any order was sent: bad usage (exit 2). */
  beforeSending(): UsageError {
    return new UsageError(
      `Cannot write the import journal ${this.path} (${this.reason}); nothing was sent.`,
      ['Free some space or fix the permissions, or name another journal with --journal.'],
    );
  }
}

/** The journal holds orders created or in doubt at another base URL, which may be this service. */
export class OtherBaseUrlError extends UsageError {
  constructor(path: string, baseUrl: string, others: ReplaySummary['otherBaseUrls'], records = 'orders') {
    const other = others[0]!;
    const more = others.length > 1 ? ` (and at ${others.length - 1} other URLs)` : '';
    super(
      `The import journal ${path} records ${other.created} ${records} created and ${other.unknown} in doubt at ${other.baseUrl}${more}, not at this run's ${baseUrl}; nothing was sent.`,
      [
        `If ${baseUrl} is the same service, run again with --base-url ${other.baseUrl} (the journal then skips what it created).`,
        'If it really is another service, name another journal with --journal <file>.',
      ],
    );
  }
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/** The journal could not be opened or read: bad usage (exit 2), nothing was sent. */
function journalOpenError(path: string, error: unknown, doing: 'open' | 'read'): unknown {
  if (error instanceof NotRegularFileError) {
    // Reading a device or a pipe as a journal never ends (/dev/full reads as endless zeros).
    return new UsageError(
      `The import journal ${path} is ${error.kind}, not a regular file, so it cannot keep the record of what was sent; nothing was sent.`,
      ['Name a file with --journal <file>.'],
    );
  }
  if (error instanceof CancelledError)
    return new CancelledError('Interrupted while reading the import journal; nothing was sent.');
  if (!(error instanceof AppendLogError)) return error;
  if (doing === 'read' || error.doing === 'read') {
    return new UsageError(`Cannot read the import journal ${path} (${error.reason}); nothing was sent.`, [
      'Make it readable, or name another journal with --journal.',
    ]);
  }
  if (error.doing === 'write') return new JournalWriteError(path, error).beforeSending();
  return new UsageError(
    `Cannot open the import journal ${path} for writing (${error.reason}); nothing was sent.`,
    ['Make the file and its folder writable, or name another journal with --journal.'],
  );
}

/** Replays journal lines: the last state per externalId for `baseUrl`, and what other URLs hold. */
class JournalReader {
  private readonly states = new Map<string, JournalState>();
  private readonly others = new Map<string, Map<string, JournalState>>();
  private command: ReplaySummary['command'] = 'orders import';

  constructor(
    private readonly path: string,
    private readonly baseUrl: string,
  ) {}

  readonly visit: LineVisitor = (line, lineNumber) => {
    const record = applyLine(
      this.states,
      this.others,
      line.toString('utf8'),
      this.baseUrl,
      this.path,
      lineNumber,
    );
    if (record?.event === 'run' && record.command === 'refs contacts import') this.command = record.command;
  };

  summary(lines: number, tornTail: boolean): { states: Map<string, JournalState>; replay: ReplaySummary } {
    let created = 0;
    let failed = 0;
    let unknown = 0;
    for (const state of this.states.values()) {
      if (state.event === 'created') created++;
      else if (state.event === 'failed') failed++;
      else unknown++;
    }
    const otherBaseUrls: ReplaySummary['otherBaseUrls'] = [];
    for (const [otherUrl, otherStates] of this.others) {
      let otherCreated = 0;
      let otherUnknown = 0;
      for (const state of otherStates.values()) {
        if (state.event === 'created') otherCreated++;
        else if (state.event !== 'failed') otherUnknown++;
      }
      if (otherCreated + otherUnknown > 0) {
        otherBaseUrls.push({ baseUrl: otherUrl, created: otherCreated, unknown: otherUnknown });
      }
    }
    return {
      states: this.states,
      replay: { lines, tornTail, created, failed, unknown, otherBaseUrls, command: this.command },
    };
  }
}

function applyLine(
  states: Map<string, JournalState>,
  others: Map<string, Map<string, JournalState>>,
  text: string,
  baseUrl: string,
  path: string,
  line: number,
): { event?: string; command?: unknown } | undefined {
  if (text.trim() === '') return undefined;
  let record: Partial<JournalRecord> & { event?: string; command?: unknown };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    throw new UsageError(
      `The import journal ${path} is damaged at line ${line} (not a JSON record), so it cannot tell which orders were already sent.`,
      [`Look at that line; if you move the journal away, a re-run may create orders a second time.`],
    );
  }
  if (typeof record.externalId !== 'string' || typeof record.event !== 'string') return record;
  if (typeof record.at !== 'string') record.at = '';
  let target = states;
  if (record.baseUrl !== baseUrl) {
    // Kept per URL only to tell whether orders were created or are in doubt there.
    const otherUrl = typeof record.baseUrl === 'string' ? normalizeBaseUrl(record.baseUrl) : '(no base URL)';
    if (otherUrl === baseUrl) {
      record.baseUrl = baseUrl;
    } else {
      target = others.get(otherUrl) ?? new Map<string, JournalState>();
      others.set(otherUrl, target);
    }
  }
  applyRecord(target, record as JournalRecord);
  return record;
}

/** The one definition of how a record changes the state of its order (replay and live). */
function applyRecord(states: Map<string, JournalState>, record: JournalRecord): void {
  const externalId = record.externalId;
  const current = states.get(externalId);
  switch (record.event) {
    case 'sending': {
      // A `sending` left without an outcome is an unknown: that is what a later `not-sent` restores.
      const previous: JournalState | undefined =
        current?.event === 'sending'
          ? {
              event: 'unknown',
              at: current.at,
              bodyHash: current.bodyHash,
              reason: 'the run that sent it stopped before the answer',
              sentAt: current.at,
              ...(current.line === undefined ? {} : { line: current.line }),
            }
          : current;
      const state: JournalState = { event: 'sending', at: record.at, bodyHash: record.bodyHash, previous };
      state.sentAt = record.at;
      if (record.line !== undefined) state.line = record.line;
      states.set(externalId, state);
      return;
    }
    case 'created':
    case 'failed':
    case 'unknown': {
      // An outcome belongs to the body of the `sending` record before it.
      const state: JournalState = { event: record.event, at: record.at, bodyHash: current?.bodyHash };
      if (record.httpStatus !== undefined) state.httpStatus = record.httpStatus;
      if (record.id !== undefined) state.id = record.id;
      if (record.code !== undefined) state.code = record.code;
      if (record.message !== undefined) state.message = record.message;
      if (record.reason !== undefined) state.reason = record.reason;
      keepSendingDetails(state, current);
      states.set(externalId, state);
      return;
    }
    case 'resolved-created':
    case 'resolved-not-created': {
      // The user's word on an order: `created` is skipped by every run; `not-created` is sent again.
      const created = record.event === 'resolved-created';
      const state: JournalState = created
        ? { event: 'created', at: record.at, bodyHash: current?.bodyHash, resolved: 'created' }
        : {
            event: 'failed',
            at: record.at,
            bodyHash: current?.bodyHash,
            resolved: 'not-created',
            message: 'checked at the service: not created',
          };
      if (created && record.id !== undefined) state.id = record.id;
      if (created && record.code !== undefined) state.code = record.code;
      if (record.evidence !== undefined) state.evidence = record.evidence;
      keepSendingDetails(state, current);
      states.set(externalId, state);
      return;
    }
    case 'not-sent':
      if (current?.event !== 'sending') return;
      if (current.previous) states.set(externalId, current.previous);
      else states.delete(externalId);
      return;
    default:
      // A record of a later version of ordercli: ignored, as it changes nothing this one knows.
      return;
  }
}

/** An outcome keeps the input line and the time of the `sending` it answers. */
function keepSendingDetails(state: JournalState, current: JournalState | undefined): void {
  const sentAt = current?.event === 'sending' ? current.at : current?.sentAt;
  if (sentAt !== undefined) state.sentAt = sentAt;
  if (current?.line !== undefined) state.line = current.line;
}
