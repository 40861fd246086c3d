/**
 * One append-only NDJSON file: the import journal, the order ledger's write-ahead log, the
 * sandbox's `--data` state, `listen --log` and the forwarding queue are all built on it and keep
 * only their record formats and rules.
 *
 * - `open` creates the folder, refuses what is not a regular file (reading a device or a pipe as
 *   a log never ends), optionally takes the one lock of the file (`<file>.lock`, file-lock.ts).
 * - `replay` reads the complete lines back and cuts a torn last line (no final newline: a kill
 *   during a write), so that the next line does not glue onto it; the cut is reported.
 * - `append` is a group commit: the lines appended while a round is being written, or during one
 *   turn of the event loop, go in the next round, as ONE write(). A `synced` log writes its rounds
 *   from the thread pool and on disk (O_DSYNC, or fdatasync where the platform has no O_DSYNC)
 *   before their promises resolve; an unsynced one writes them on the main thread, since an append
 *   that only has to reach the page cache costs less than a hand-off to the thread pool.
 * - A round that fails is cut off the file again and its appends are rejected; later appends go on
 *   (a caller that must stop after a failure, like the import journal, stops itself).
 */
import { closeSync, constants, ftruncateSync, type Stats, writeSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CancelledError, CliError, errorCode, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { closeFd, fdatasyncFd, fstatFd, ftruncateFd, openFd, readFd, writeFd } from './fd.js';
import { fileKind } from './file-kind.js';
import { acquireFileLock, describeCode, type FileLock, type FileLockOptions } from './file-lock.js';
import { capitalize } from './quote.js';

/** With O_DSYNC each write() returns once its bytes (and the file's new size) are on disk. */
const HAS_DSYNC = typeof constants.O_DSYNC === 'number';
const NEWLINE = 0x0a;
const NEWLINE_BUFFER = Buffer.from('\n');
const EMPTY = Buffer.alloc(0);
/** Queued by `flush`: resolves with its round, writes nothing. */
const FLUSH_MARKER = Buffer.alloc(0);
const noop = (): void => undefined;
const READ_CHUNK = 1 << 20;

export interface AppendLogOptions {
  /** The file as the user knows it, for messages: "the import journal orders.journal.ndjson". */
  what: string;
  /** Take the file's lock (`<file>.lock`): one writer across processes. */
  lock?: Omit<FileLockOptions, 'what'>;
  /** Each round is on disk before its appends resolve (default false: handed to the system). */
  synced?: boolean;
  /** Permissions of a new file (default 0o600). */
  mode?: number;
  /**
   * A synced log starts a round at most every `roundMs` milliseconds (default 0: as soon as the
   * previous one ends), so that more lines share each synced write: for writers, like the import,
   * that append ahead of when they need the line on disk.
   */
  roundMs?: number;
}

/** What `replay` found: complete lines, and the torn last line it cut off, if any. */
export interface ReplayResult {
  lines: number;
  tornTail?: { bytes: number; line: number };
}

/** Called with each complete line (without its newline; the buffer is reused: copy what you keep). */
export type LineVisitor = (line: Buffer, lineNumber: number, offset: number) => void;

/** The file could not be opened, read or written; `code` is the system's (ENOSPC, EROFS...). */
export class AppendLogError extends CliError {
  readonly path: string;
  readonly code: string;
  /** `ENOSPC: no space left on the device`, for the callers' own sentences. */
  readonly reason: string;
  readonly doing: 'open' | 'read' | 'write';

  constructor(path: string, what: string, doing: 'open' | 'read' | 'write', cause: unknown) {
    const code = errorCode(cause);
    const reason = `${code}: ${describeCode(code)}`;
    super(`Cannot ${doing} ${what} (${reason}).`, doing === 'open' ? ExitCode.Usage : ExitCode.Failure);
    this.path = path;
    this.code = code;
    this.reason = reason;
    this.doing = doing;
    this.cause = cause;
  }
}

/** The path names a folder, a device or a pipe: bad usage (exit 2). */
export class NotRegularFileError extends UsageError {
  readonly path: string;
  /** `a folder`, `a device`, `a pipe`, `not a regular file`. */
  readonly kind: string;

  constructor(path: string, what: string, kind: string) {
    super(`${capitalize(what)} is ${kind}, not a regular file.`);
    this.path = path;
    this.kind = kind;
  }
}

interface Queued {
  line: string | Buffer;
  resolve: (offset: number) => void;
  reject: (error: Error) => void;
}

export class AppendLog {
  readonly path: string;
  readonly what: string;
  private fd: number | undefined;
  private readonly lock: FileLock | undefined;
  private readonly synced: boolean;
  /** Bytes in the file: where the next round starts (one writer, O_APPEND). */
  private bytes: number;
  private queue: Queued[] = [];
  private scheduled = false;
  private readonly roundMs: number;
  /** When the last round started (performance.now()), for `roundMs`. */
  private lastRoundAt = Number.NEGATIVE_INFINITY;
  /** The round (or truncation) in progress; no other starts before it ends. */
  private busy: Promise<void> | undefined;
  /** Set when a failed round could not be cut off again, or the lock was lost: nothing more is written. */
  private failure: Error | undefined;

  private constructor(
    path: string,
    what: string,
    fd: number,
    bytes: number,
    synced: boolean,
    roundMs: number,
    lock?: FileLock,
  ) {
    this.roundMs = roundMs;
    this.path = path;
    this.what = what;
    this.fd = fd;
    this.bytes = bytes;
    this.synced = synced;
    this.lock = lock;
  }

  /** Opens (creating it and its folder) the file for appending, taking its lock if asked. */
  static async open(path: string, options: AppendLogOptions): Promise<AppendLog> {
    await requireRegularFile(path, options.what);
    await mkdir(dirname(path), { recursive: true }).catch((error: unknown) => {
      throw new AppendLogError(path, options.what, 'open', error);
    });
    const lock = options.lock
      ? await acquireFileLock(`${path}.lock`, { ...options.lock, what: options.what })
      : undefined;
    try {
      const synced = options.synced ?? false;
      const flags =
        constants.O_RDWR |
        constants.O_CREAT |
        constants.O_APPEND |
        (synced && HAS_DSYNC ? constants.O_DSYNC : 0);
      const fd = await openFd(path, flags, options.mode ?? 0o600).catch((error: unknown) => {
        throw new AppendLogError(path, options.what, 'open', error);
      });
      const info = await fstatFd(fd);
      if (!info.isFile()) {
        // Replaced by a pipe or a device while the lock was waited for: reading it would never end.
        await closeFd(fd).catch(noop);
        throw new NotRegularFileError(path, options.what, fileKind(info));
      }
      const { size } = info;
      return new AppendLog(path, options.what, fd, size, synced, synced ? (options.roundMs ?? 0) : 0, lock);
    } catch (error) {
      await lock?.release();
      throw error;
    }
  }

  /** Bytes in the file, counting the rounds taken so far. */
  get size(): number {
    return this.bytes;
  }

  /**
   * Reads every complete line from the start, then cuts a torn last line off the file (reported
   * in the result) so that the next append starts a line of its own. Call before appending.
   */
  async replay(visit: LineVisitor, signal?: AbortSignal): Promise<ReplayResult> {
    const fd = this.openFd();
    const { lines, complete, total } = await readLines(fd, this, visit, signal);
    if (complete === total) return { lines };
    await ftruncateFd(fd, complete).catch((error: unknown) => {
      throw new AppendLogError(this.path, this.what, 'write', error);
    });
    this.bytes = complete;
    return { lines, tornTail: { bytes: total - complete, line: lines + 1 } };
  }

  /**
   * Appends `line` (a newline is added) in the next round; resolves with the offset where it
   * starts once it is written (on disk for a synced log), or rejects with an AppendLogError.
   */
  append(line: string | Buffer): Promise<number> {
    return new Promise((resolve, reject) => {
      const refused = this.refusal();
      if (refused) {
        reject(refused);
        return;
      }
      this.queue.push({ line, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Writes what is queued and `line` now, on this thread, before returning the line's offset
   * (an unsynced log only): for a caller that must have the line in the file before it answers.
   */
  appendNow(line: string | Buffer): number {
    if (this.synced) throw new Error('appendNow is for unsynced logs');
    const refused = this.refusal();
    if (refused) throw refused;
    const queued = this.queue;
    this.queue = [];
    const now: Queued = { line, resolve: () => undefined, reject: () => undefined };
    const offsets = this.writeRoundNow([...queued, now]);
    if (offsets instanceof Error) throw offsets;
    return offsets;
  }

  /**
   * Resolves once every line appended so far is written (on disk for a synced log); rejects when
   * the log can write nothing more.
   */
  async flush(): Promise<void> {
    if (this.queue.length > 0 || this.busy) await this.append(FLUSH_MARKER);
  }

  /** Empties the file, or cuts it to `length` bytes, between two rounds (a reset, a compaction). */
  async truncate(length = 0): Promise<void> {
    await this.exclusive(async () => {
      const fd = this.openFd();
      try {
        await ftruncateFd(fd, length);
        if (this.synced) await fdatasyncFd(fd);
      } catch (error) {
        throw new AppendLogError(this.path, this.what, 'write', error);
      }
      this.bytes = length;
    });
  }

  /** `truncate` on this thread (an unsynced log: the sandbox's reset answers after it). */
  truncateNow(length = 0): void {
    if (this.busy) throw new Error('truncateNow during a round');
    try {
      ftruncateSync(this.openFd(), length);
    } catch (error) {
      throw new AppendLogError(this.path, this.what, 'write', error);
    }
    this.bytes = length;
  }

  /** Reads `length` bytes at `offset` (a line found by `replay` or `append`). */
  async read(offset: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await readFd(this.openFd(), buffer, done, length - done, offset + done).catch(
        (error: unknown) => {
          throw new AppendLogError(this.path, this.what, 'read', error);
        },
      );
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return buffer.subarray(0, done);
  }

  /**
   * Writes what is queued, closes the file and releases the lock; later appends are refused.
   * A write that fails here is reported to its appender only: `flush` first to learn of it.
   */
  async close(): Promise<void> {
    if (this.fd === undefined) return;
    try {
      await this.flush().catch(noop);
    } finally {
      const fd = this.fd;
      this.fd = undefined;
      for (const queued of this.queue.splice(0)) queued.reject(this.closedError());
      if (fd !== undefined) await closeFd(fd).catch(() => undefined);
      await this.lock?.release();
    }
  }

  /** `close` on this thread, for an unsynced log (what is queued is written first). */
  closeNow(): void {
    if (this.synced) throw new Error('closeNow is for unsynced logs');
    if (this.fd === undefined) return;
    if (this.queue.length > 0) this.writeRoundNow(this.queue.splice(0));
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
    void this.lock?.release();
  }

  private refusal(): Error | undefined {
    if (this.fd === undefined) return this.closedError();
    this.failure ??= this.lock?.lost;
    return this.failure;
  }

  private closedError(): Error {
    return new AppendLogError(
      this.path,
      this.what,
      'write',
      Object.assign(new Error('closed'), { code: 'EBADF' }),
    );
  }

  private openFd(): number {
    if (this.fd === undefined) throw this.closedError();
    return this.fd;
  }

  /**
   * Starts a round at the next turn of the event loop, so that the lines of this turn join it (or,
   * with `roundMs`, once that long has passed since the last round started).
   */
  private schedule(): void {
    if (this.scheduled || this.busy) return;
    this.scheduled = true;
    const wait = this.lastRoundAt + this.roundMs - performance.now();
    if (wait > 0) setTimeout(this.startRound, wait);
    else setImmediate(this.startRound);
  }

  private readonly startRound = (): void => {
    this.scheduled = false;
    if (this.busy || this.queue.length === 0) return;
    this.lastRoundAt = performance.now();
    const round = this.queue;
    this.queue = [];
    const refused = this.refusal();
    if (refused) {
      for (const queued of round) queued.reject(refused);
      return;
    }
    if (this.synced) this.occupy(this.writeRound(round));
    else this.writeRoundNow(round);
  };

  /** Marks `work` as the one thing touching the file; when it ends, the next round may start. */
  private occupy(work: Promise<void>): Promise<void> {
    const idle: Promise<void> = work.then(noop, noop).then(() => {
      if (this.busy === idle) this.busy = undefined;
      if (this.queue.length > 0) this.schedule();
    });
    this.busy = idle;
    return work;
  }

  private async exclusive(task: () => Promise<void>): Promise<void> {
    while (this.busy) await this.busy;
    return this.occupy(task());
  }

  private async writeRound(round: Queued[]): Promise<void> {
    const { buffer, offsets, start } = this.encodeRound(round);
    const fd = this.openFd();
    try {
      for (let written = 0; written < buffer.length; ) {
        const { bytesWritten } = await writeFd(fd, buffer, written, buffer.length - written, null);
        written += bytesWritten;
      }
      if (!HAS_DSYNC && buffer.length > 0) await fdatasyncFd(fd);
    } catch (error) {
      const failed = new AppendLogError(this.path, this.what, 'write', error);
      // Cut off what part of the round reached the file, so that the next round starts a line.
      await ftruncateFd(fd, start).catch(() => {
        this.failure ??= failed;
      });
      this.bytes = start;
      for (const queued of round) queued.reject(failed);
      return;
    }
    for (const [index, queued] of round.entries()) queued.resolve(offsets[index]!);
  }

  /** Writes a round on this thread; returns the last line's offset, or the error (already reported). */
  private writeRoundNow(round: Queued[]): number | Error {
    const { buffer, offsets, start } = this.encodeRound(round);
    const fd = this.openFd();
    try {
      for (let written = 0; written < buffer.length; ) {
        written += writeSync(fd, buffer, written, buffer.length - written);
      }
    } catch (error) {
      const failed = new AppendLogError(this.path, this.what, 'write', error);
      try {
        ftruncateSync(fd, start);
      } catch {
        this.failure ??= failed;
      }
      this.bytes = start;
      for (const queued of round) queued.reject(failed);
      return failed;
    }
    for (const [index, queued] of round.entries()) queued.resolve(offsets[index]!);
    return offsets[offsets.length - 1]!;
  }

  /** The round's bytes (each line and its newline; `flush`'s empty marker adds nothing). */
  private encodeRound(round: Queued[]): { buffer: Buffer; offsets: number[]; start: number } {
    const start = this.bytes;
    const parts: Buffer[] = [];
    const offsets: number[] = [];
    let at = start;
    for (const queued of round) {
      offsets.push(at);
      if (queued.line === FLUSH_MARKER) continue;
      const bytes = typeof queued.line === 'string' ? Buffer.from(queued.line, 'utf8') : queued.line;
      parts.push(bytes, NEWLINE_BUFFER);
      at += bytes.length + 1;
    }
    this.bytes = at;
    return { buffer: parts.length === 0 ? EMPTY : Buffer.concat(parts, at - start), offsets, start };
  }
}

/**
 * Reads the complete lines of a log without opening it for writing (a dry run, a report); a
 * missing file has none. A torn last line is reported, not cut.
 */
export async function readLog(
  path: string,
  what: string,
  visit: LineVisitor,
  signal?: AbortSignal,
): Promise<ReplayResult> {
  await requireRegularFile(path, what);
  let fd: number;
  try {
    fd = await openFd(path, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { lines: 0 };
    throw new AppendLogError(path, what, 'read', error);
  }
  try {
    const { lines, complete, total } = await readLines(fd, { path, what }, visit, signal);
    return complete === total ? { lines } : { lines, tornTail: { bytes: total - complete, line: lines + 1 } };
  } finally {
    await closeFd(fd).catch(noop);
  }
}

/** Visits each complete line from the start of `fd`, a chunk at a time. */
async function readLines(
  fd: number,
  file: { path: string; what: string },
  visit: LineVisitor,
  signal: AbortSignal | undefined,
): Promise<{ lines: number; complete: number; total: number }> {
  const chunk = Buffer.allocUnsafe(READ_CHUNK);
  let carry: Buffer = EMPTY;
  let total = 0;
  let complete = 0;
  let lines = 0;
  for (;;) {
    if (signal?.aborted) throw new CancelledError(`Interrupted while reading ${file.what}.`);
    const { bytesRead } = await readFd(fd, chunk, 0, READ_CHUNK, total).catch((error: unknown) => {
      throw new AppendLogError(file.path, file.what, 'read', error);
    });
    if (bytesRead === 0) break;
    total += bytesRead;
    const data =
      carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      lines++;
      visit(data.subarray(start, end), lines, complete);
      complete += end + 1 - start;
      start = end + 1;
    }
    // The rest of the line continues in the next chunk (copied: the chunk is reused).
    carry = Buffer.from(data.subarray(start));
  }
  return { lines, complete, total };
}

/** Refuses a folder, a device or a pipe; a missing file is fine (it is created). */
async function requireRegularFile(path: string, what: string): Promise<void> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return;
    throw new AppendLogError(path, what, 'open', error);
  }
  if (info.isFile()) return;
  throw new NotRegularFileError(path, what, fileKind(info));
}
