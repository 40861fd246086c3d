/**
 * The import journal: what the runs of one input did, record by record, for resume, the report,
 * `orders journal` and `orders resolve`. It holds the same records as the order ledger
 * (src/import/send/ledger/record.ts), each with the `baseUrl` it was sent to, and replays them with
 * the same `applyRecord`.
 *
 * The journal never decides what may be sent: the ledger does, with a claim before each request.
 * What a journal records as created or in doubt that the ledger does not know (a new ledger, a
 * journal older than the ledger's folder) is adopted into the ledger before anything is sent,
 * so a journal that is lost, emptied or restored from an older copy can never cause a send the
 * ledger would refuse, and a kept journal still protects a ledger that is new.
 *
 * Its writes are not synced: the ledger's claim is the one synced write of each order (shared by
 * all the claims of a round), and the ledger, not the journal, is what a crash must not lose.
 * A `run` line opens each run (who, when, which input, `format: 2`); replay ignores it.
 * Journals written before claims (`sending`, `resolved-created`, … records) are read as they are.
 *
 * A journal holding orders created or in doubt at another base URL is refused
 * (`OtherBaseUrlError`): the other URL may name the same service.
 *
 * One import per journal: the lock `<journal>.lock` (src/io/file-lock.ts) is taken before the
 * journal is read, and checked before each write.
 */

import { CancelledError, CliError, errorCode, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { normalizeBaseUrl } from '../../core/url.js';
import {
  AppendLog,
  AppendLogError,
  type LineVisitor,
  NotRegularFileError,
  readLog,
} from '../../io/append-log.js';
import { describeCode } from '../../io/file-lock.js';
import { isoNow } from '../../io/iso-time.js';
import {
  applyRecord,
  bodyHash,
  type LedgerEntry,
  type LedgerRecord,
  type Resolution,
} from '../../ledger/record.js';
import type { Claim } from '../../ledger/store.js';

/** The state of one order in a journal: the ledger's entry type. */
export type JournalState = LedgerEntry;
export type { Resolution };

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
  /** Other base URLs with orders created or in doubt there. */
  otherBaseUrls: { baseUrl: string; created: number; unknown: number }[];
  /** The command whose `run` lines the journal holds: `refs contacts import` keys contact references. */
  command: 'orders import' | 'refs contacts import';
}

export interface OpenJournalOptions {
  /** The service root the orders go to; states are scoped to it. */
  baseUrl: string;
  /**
   * Replays only the orders of this base URL that it accepts (an import passes over those the
   * ledger already knows: a journal of a million orders need not be held in memory). The
   * replay's counts then cover the orders kept.
   */
  keep?: (externalId: string) => boolean;
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

export { bodyHash };

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
      // The ledger's claim is each order's synced write; the journal is synced when it closes.
      synced: false,
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
      const reader = new JournalReader(path, baseUrl, options.keep);
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
            format: 2,
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
    keep?: (externalId: string) => boolean,
  ): Promise<{ states: Map<string, JournalState>; replay: ReplaySummary }> {
    const reader = new JournalReader(path, normalizeBaseUrl(baseUrl), keep);
    const read = await readLog(path, `the import journal ${path}`, reader.visit, signal).catch(
      (error: unknown) => {
        throw journalOpenError(path, error, 'read');
      },
    );
    return reader.summary(read.lines, read.tornTail !== undefined);
  }

  /**
   * Forgets the states replayed (an import needs them only to adopt them into the ledger): a
   * journal of a million orders holds them in memory otherwise. Records are still written.
   */
  releaseStates(): void {
    this.states.clear();
  }

  /** Every order this journal knows for its base URL, by externalId, with its last state. */
  knownOrders(): ReadonlyMap<string, JournalState> {
    return this.states;
  }

  /** The last state of an order for this base URL, or undefined if this journal never saw it. */
  stateOf(externalId: string): JournalState | undefined {
    return this.states.get(externalId);
  }

  /** Records the ledger's claim of an order (written with the journal's next write). */
  claimed(claim: Claim, details: { bodyHash: string; line?: number; at?: string }): void {
    const record: LedgerRecord = {
      externalId: claim.externalId,
      event: 'claim',
      at: details.at ?? isoNow(),
      token: claim.token,
      bodyHash: details.bodyHash,
      baseUrl: this.baseUrl,
    };
    if (details.line !== undefined) record.line = details.line;
    this.record(record);
  }

  created(claim: Claim, outcome: { httpStatus: number; id?: string | number; code?: string }): void {
    this.outcome(claim, { event: 'created', ...outcome });
  }

  /** The service refused the order: sending it again is safe. */
  failed(claim: Claim, outcome: { httpStatus?: number; message: string }): void {
    this.outcome(claim, { event: 'failed', ...outcome });
  }

  /** The request may have been processed: only a person can tell. */
  unknown(claim: Claim, reason: string): void {
    this.outcome(claim, { event: 'unknown', reason });
  }

  /** The order claimed was not sent after all: its earlier state stands. */
  notSent(claim: Claim, reason: string): void {
    this.outcome(claim, { event: 'not-sent', reason });
  }

  /** What the user checked at the service (`orders resolve`); `sync()` writes it. */
  resolved(
    externalId: string,
    resolution: Resolution,
    details: { id?: string | number; code?: string; evidence: string },
  ): void {
    const record: LedgerRecord = {
      externalId,
      event: 'resolved',
      at: isoNow(),
      resolution,
      baseUrl: this.baseUrl,
    };
    if (details.id !== undefined) record.id = details.id;
    if (details.code !== undefined) record.code = details.code;
    record.evidence = details.evidence;
    this.record(record);
  }

  private outcome(claim: Claim, fields: Partial<LedgerRecord> & { event: LedgerRecord['event'] }): void {
    this.record({
      externalId: claim.externalId,
      at: isoNow(),
      token: claim.token,
      ...fields,
      baseUrl: this.baseUrl,
    });
  }

  /** The first write that failed, if any: nothing more may be sent. */
  writeError(): Error | undefined {
    return this.failure;
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
  private record(record: LedgerRecord): void {
    applyTo(this.states, record);
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
    private readonly keep?: (externalId: string) => boolean,
  ) {}

  readonly visit: LineVisitor = (line, lineNumber) => {
    const record = applyLine(
      this.states,
      this.others,
      line.toString('utf8'),
      this.baseUrl,
      this.path,
      lineNumber,
      this.keep,
    );
    if (record?.event === 'run' && record.command === 'refs contacts import') this.command = record.command;
  };

  summary(lines: number, tornTail: boolean): { states: Map<string, JournalState>; replay: ReplaySummary } {
    let created = 0;
    let failed = 0;
    let unknown = 0;
    for (const state of this.states.values()) {
      if (state.status === 'created') created++;
      else if (state.status === 'not-created') failed++;
      else unknown++;
    }
    const otherBaseUrls: ReplaySummary['otherBaseUrls'] = [];
    for (const [otherUrl, otherStates] of this.others) {
      let otherCreated = 0;
      let otherUnknown = 0;
      for (const state of otherStates.values()) {
        if (state.status === 'created') otherCreated++;
        else if (state.status !== 'not-created') otherUnknown++;
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
  keep?: (externalId: string) => boolean,
): { event?: string; command?: unknown } | undefined {
  if (text.trim() === '') return undefined;
  let record: Partial<LedgerRecord> & { event?: string; command?: unknown };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    throw new UsageError(
      `The import journal ${path} is damaged at line ${line} (not a JSON record), so it cannot tell which orders this input's runs sent.`,
      [
        `Look at that line: remove it, or move the journal aside (the order ledger still refuses what it knows).`,
      ],
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
      if (keep && !keep(record.externalId)) return record;
    } else {
      target = others.get(otherUrl) ?? new Map<string, JournalState>();
      others.set(otherUrl, target);
    }
  }
  if (target === states && keep && !keep(record.externalId)) return record;
  applyTo(target, record as LedgerRecord);
  return record;
}

/** Applies a record to the states of its base URL (record.ts says how). */
function applyTo(states: Map<string, JournalState>, record: LedgerRecord): void {
  // A journal records claims the ledger granted: each takes effect whatever the journal knew.
  const state = applyRecord(states.get(record.externalId), record, { granted: true });
  if (state) states.set(record.externalId, state);
  else states.delete(record.externalId);
}
