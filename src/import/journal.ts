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
 * One import per journal: the lock `<journal>.lock` (src/io/file-lock.ts) is taken before the
 * journal is read, and checked before each write round.
 *
 * Throughput: records are written in rounds, every `groupMs` (10 ms) or at once when a caller
 * needs its `sending` record on disk now (`hurry`): one write() per round, synced by O_DSYNC (or
 * followed by an fdatasync where the platform has no O_DSYNC). A round costs the main thread a
 * hand-off to the thread pool, about 0.1 ms on a virtual machine: per order, that was the
 * largest cost of the import before rounds were grouped.
 * The submitter journals orders ahead of their turn, so it rarely has to hurry. Outcome records
 * ride in the same rounds without being waited for: a kill -9 loses at most the last `groupMs` of
 * them (and a crash of the machine whatever was not synced), and those orders replay as
 * `unknown`, which is safe.
 */

import { hash } from 'node:crypto';
import { close, constants, fdatasync, ftruncate, open, read, write } from 'node:fs';
import { stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { CancelledError, CliError, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { acquireFileLock, describeCode, type FileLock } from '../io/file-lock.js';
import { isoNow } from '../io/iso-time.js';

const openAsync = promisify(open);
const readAsync = promisify(read);
const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);
const ftruncateAsync = promisify(ftruncate);
const closeAsync = promisify(close);

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
}

export interface OpenJournalOptions {
  /** The service root the orders go to; states are scoped to it. */
  baseUrl: string;
  /** Written in the `run` line, for people reading the file. */
  input?: string;
  /** Longest wait of a record for its round, unless someone hurries (default 10 ms). */
  groupMs?: number;
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

export const DEFAULT_GROUP_MS = 10;

/**
 * Appending, readable for the replay, and with O_DSYNC where the platform has it, so that each
 * write() returns once its bytes (and the file's new size) are on disk, as write + fdatasync do.
 */
const SYNCED_WRITES = typeof constants.O_DSYNC === 'number';
const APPEND_FLAGS =
  constants.O_RDWR | constants.O_CREAT | constants.O_APPEND | (SYNCED_WRITES ? constants.O_DSYNC : 0);

/** A hash of the exact body sent, so a later run can tell that an order changed. */
export function bodyHash(json: string): string {
  // crypto.hash: one call, without the Hash object of createHash (a fifth of the cost per order).
  return hash('sha256', json, 'base64url').slice(0, 22);
}

/** Base URLs compare equal whatever their case of host or trailing slashes. */
export function normalizeBaseUrl(baseUrl: string): string {
  try {
    return new URL(baseUrl).href.replace(/\/+$/, '');
  } catch {
    return baseUrl.replace(/\/+$/, '');
  }
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class OrderJournal {
  readonly path: string;
  readonly baseUrl: string;
  readonly replay: ReplaySummary;
  private readonly states: Map<string, JournalState>;
  private fd: number | undefined;
  private readonly lock: FileLock;
  /** Lines handed to `append` and not yet written. */
  private pending: string[] = [];
  /** Callers waiting for their `sending` line to be durable. */
  private waiters: Waiter[] = [];
  private syncRequested = false;
  private flushing: Promise<void> | undefined;
  /** The next round, when one is due and nobody hurried. */
  private timer: NodeJS.Timeout | undefined;
  /** Someone needs a round as soon as the current one ends. */
  private hurried = false;
  private readonly groupMs: number;
  private failure: Error | undefined;

  private constructor(
    path: string,
    baseUrl: string,
    fd: number,
    states: Map<string, JournalState>,
    replay: ReplaySummary,
    groupMs: number,
    lock: FileLock,
  ) {
    this.groupMs = groupMs;
    this.path = path;
    this.baseUrl = baseUrl;
    this.fd = fd;
    this.states = states;
    this.replay = replay;
    this.lock = lock;
  }

  /**
   * Opens (or creates) the journal for appending: takes its lock, replays it, cuts a torn last
   * line so that the next record does not glue onto it, and records the start of a run.
   */
  static async open(path: string, options: OpenJournalOptions): Promise<OrderJournal> {
    const baseUrl = normalizeBaseUrl(options.baseUrl);
    await requireRegularFile(path);
    const lock = await acquireFileLock(`${path}.lock`, {
      what: `the import journal ${path}`,
      busyAdvice: 'wait for it to finish.',
      waitMs: options.lockWaitMs,
      onWait: options.onLockWait,
      signal: options.signal,
      command: 'orders import',
    });
    let fd: number | undefined;
    try {
      fd = await openAsync(path, APPEND_FLAGS, 0o644).catch((error: Error) => {
        throw new UsageError(
          `Cannot open the import journal ${path} for writing (${errorCode(error)}: ${describeCode(errorCode(error))}); nothing was sent.`,
          ['Make the file and its folder writable, or name another journal with --journal.'],
        );
      });
      const { states, replay, completeBytes, totalBytes } = await replayFile(
        fd,
        path,
        baseUrl,
        options.signal,
      );
      if (replay.otherBaseUrls.length > 0 && !options.allowOtherBaseUrls)
        throw new OtherBaseUrlError(path, baseUrl, replay.otherBaseUrls);
      const journal = new OrderJournal(
        path,
        baseUrl,
        fd,
        states,
        replay,
        options.groupMs ?? DEFAULT_GROUP_MS,
        lock,
      );
      try {
        if (completeBytes < totalBytes) await ftruncateAsync(fd, completeBytes);
      } catch (error) {
        journal.failure = new JournalWriteError(path, error as Error);
      }
      if (options.recordRun !== false) {
        journal.appendLine(
          JSON.stringify({
            event: 'run',
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
      if (fd !== undefined) await closeAsync(fd).catch(() => undefined);
      await lock.release();
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
    await requireRegularFile(path);
    let fd: number;
    try {
      fd = await openAsync(path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return {
          states: new Map(),
          replay: { lines: 0, tornTail: false, created: 0, failed: 0, unknown: 0, otherBaseUrls: [] },
        };
      }
      throw new UsageError(
        `Cannot read the import journal ${path} (${errorCode(error)}: ${describeCode(errorCode(error))}).`,
        ['Make it readable, or name another journal with --journal.'],
      );
    }
    try {
      const { states, replay } = await replayFile(fd, path, normalizeBaseUrl(baseUrl), signal);
      return { states, replay };
    } finally {
      await closeAsync(fd);
    }
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
    this.record(record);
    return this.durable(false);
  }

  /** Starts the round now (or right after the current one) if records wait to be on disk. */
  hurry(): void {
    if (this.waiters.length > 0) this.flushNow();
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

  /** Resolves once every record so far is written and synced; starts the round now. */
  sync(): Promise<void> {
    return this.durable(true);
  }

  private durable(now: boolean): Promise<void> {
    this.failure ??= this.lock.lost;
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.syncRequested = true;
      if (now) this.flushNow();
      else this.scheduleFlush();
    });
  }

  /** Writes and syncs what is pending, closes the file and releases the lock. */
  async close(): Promise<void> {
    if (this.fd === undefined) return;
    try {
      if (!this.failure) await this.sync();
    } finally {
      const fd = this.fd;
      this.fd = undefined;
      await closeAsync(fd).catch(() => undefined);
      await this.lock.release();
    }
  }

  private record(record: JournalRecord): void {
    this.appendLine(JSON.stringify(record));
    applyRecord(this.states, record);
  }

  private appendLine(line: string): void {
    this.pending.push(`${line}\n`);
    this.scheduleFlush();
  }

  /** Makes sure a round comes within `groupMs`. */
  private scheduleFlush(): void {
    if (this.timer || this.flushing || this.fd === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.startRound();
    }, this.groupMs);
  }

  private flushNow(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.flushing) this.hurried = true;
    else this.startRound();
  }

  private startRound(): void {
    if (this.flushing || this.fd === undefined || this.failure) return;
    if (this.pending.length === 0 && !this.syncRequested) return;
    this.hurried = false;
    this.flushing = this.round().finally(() => {
      this.flushing = undefined;
      // What arrived during the round goes now if someone is waiting for it, else in time.
      if (this.hurried) this.startRound();
      else if (this.pending.length > 0 || this.syncRequested) this.scheduleFlush();
    });
  }

  /** One write() of every line queued so far and, when a caller waits for it, one fdatasync. */
  private async round(): Promise<void> {
    const fd = this.fd!;
    const lines = this.pending;
    this.pending = [];
    const waiters = this.waiters;
    this.waiters = [];
    const sync = this.syncRequested;
    this.syncRequested = false;
    try {
      // The lock was removed under us: another import may be writing; write nothing more.
      if (this.lock.lost) throw this.lock.lost;
      if (lines.length > 0) await writeAll(fd, Buffer.from(lines.join(''), 'utf8'));
      // With O_DSYNC the write itself returned only once on disk: one thread-pool call a round.
      if (sync && !SYNCED_WRITES) await fdatasyncAsync(fd);
    } catch (error) {
      this.failure = error instanceof CliError ? error : new JournalWriteError(this.path, error as Error);
      for (const waiter of [...waiters, ...this.waiters]) waiter.reject(this.failure);
      this.waiters = [];
      return;
    }
    for (const waiter of waiters) waiter.resolve();
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
  constructor(path: string, baseUrl: string, others: ReplaySummary['otherBaseUrls']) {
    const other = others[0]!;
    const more = others.length > 1 ? ` (and at ${others.length - 1} other URLs)` : '';
    super(
      `The import journal ${path} records ${other.created} orders created and ${other.unknown} in doubt at ${other.baseUrl}${more}, not at this run's ${baseUrl}; nothing was sent.`,
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

/** Reading a device or a pipe as a journal never ends (/dev/full reads as endless zeros). */
async function requireRegularFile(path: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') return;
    throw new UsageError(
      `Cannot use the import journal ${path} (${code}: ${describeCode(code)}); nothing was sent.`,
    );
  }
  if (info.isFile()) return;
  const kind = info.isDirectory()
    ? 'a folder'
    : info.isCharacterDevice() || info.isBlockDevice()
      ? 'a device'
      : info.isFIFO()
        ? 'a pipe'
        : 'not a regular file';
  throw new UsageError(
    `The import journal ${path} is ${kind}, not a regular file, so it cannot keep the record of what was sent; nothing was sent.`,
    ['Name a file with --journal <file>.'],
  );
}

async function writeAll(fd: number, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await writeAsync(fd, buffer, offset, buffer.length - offset, null);
    offset += bytesWritten;
  }
}

const CHUNK = 1 << 20;

/** Reads every complete line of the file, keeping the last state per externalId for `baseUrl`. */
async function replayFile(
  fd: number,
  path: string,
  baseUrl: string,
  signal?: AbortSignal,
): Promise<{
  states: Map<string, JournalState>;
  replay: ReplaySummary;
  completeBytes: number;
  totalBytes: number;
}> {
  const states = new Map<string, JournalState>();
  const others = new Map<string, Map<string, JournalState>>();
  let lines = 0;
  let position = 0;
  let completeBytes = 0;
  let carry: Buffer = Buffer.alloc(0);
  const chunk = Buffer.allocUnsafe(CHUNK);
  for (;;) {
    if (signal?.aborted)
      throw new CancelledError('Interrupted while reading the import journal; nothing was sent.');
    const { bytesRead } = await readAsync(fd, chunk, 0, CHUNK, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data: Buffer =
      carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let start = 0;
    for (let end = data.indexOf(0x0a, start); end !== -1; end = data.indexOf(0x0a, start)) {
      lines++;
      applyLine(states, others, data.toString('utf8', start, end), baseUrl, path, lines);
      completeBytes += end + 1 - start;
      start = end + 1;
    }
    carry = Buffer.from(data.subarray(start));
  }
  let created = 0;
  let failed = 0;
  let unknown = 0;
  for (const state of states.values()) {
    if (state.event === 'created') created++;
    else if (state.event === 'failed') failed++;
    else unknown++;
  }
  const otherBaseUrls: ReplaySummary['otherBaseUrls'] = [];
  for (const [otherUrl, otherStates] of others) {
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
    states,
    replay: { lines, tornTail: position > completeBytes, created, failed, unknown, otherBaseUrls },
    completeBytes,
    totalBytes: position,
  };
}

function applyLine(
  states: Map<string, JournalState>,
  others: Map<string, Map<string, JournalState>>,
  text: string,
  baseUrl: string,
  path: string,
  line: number,
): void {
  if (text.trim() === '') return;
  let record: Partial<JournalRecord> & { event?: string };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    throw new UsageError(
      `The import journal ${path} is damaged at line ${line} (not a JSON record), so it cannot tell which orders were already sent.`,
      [`Look at that line; if you move the journal away, a re-run may create orders a second time.`],
    );
  }
  if (typeof record.externalId !== 'string' || typeof record.event !== 'string') return;
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
