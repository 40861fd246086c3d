/**
 * One append-only NDJSON file, under the ledger's write-ahead log, the sandbox's `--data` journal,
 * `listen --log` and the forwarding queue. `append` is a group commit: the lines appended during
 * one turn of the event loop, or while a round is written, go in the next round as ONE write(). A
 * `synced` log writes its rounds from the thread pool and on disk (O_DSYNC, or fdatasync without
 * it) before they resolve; an unsynced one on the main thread (cheaper than the hand-off). A round
 * that fails is cut off the file again and its appends rejected; later appends go on.
 */
import { closeSync, constants, ftruncateSync, type Stats, writeSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CancelledError, CliError, errorCode, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { codeWords } from './code-words.js';
import { closeFd, fdatasyncFd, fstatFd, ftruncateFd, openFd, readFd, writeFd } from './fd.js';
import { fileKind } from './file-kind.js';
import { acquireFileLock, type FileLock, type FileLockOptions } from './file-lock.js';
import { makeFolder } from './output-folder.js';
import { capitalize } from './quote.js';

/** With O_DSYNC each write() returns once its bytes (and the file's new size) are on disk. */
const HAS_DSYNC = typeof constants.O_DSYNC === 'number';
const NEWLINE = 0x0a;
const NEWLINE_BUFFER = Buffer.from('\n');
const READ_CHUNK = 1 << 20;
const noop = (): void => undefined;
/** Why an append to a closed log fails. */
const CLOSED = Object.assign(new Error('closed'), { code: 'EBADF' });

export interface AppendLogOptions {
  /** The file as the user knows it, for messages: "the log events.ndjson". */
  what: string;
  /** Take the file's lock (`<file>.lock`): one writer across processes. */
  lock?: Omit<FileLockOptions, 'what'>;
  /** Each round is on disk before its appends resolve (default false: handed to the system). */
  synced?: boolean;
  /** Permissions of a new file (default 0o600). */
  mode?: number;
}

/** Where a line longer than `maxLineBytes` goes, in pieces, instead of `replay`'s `visit`. */
export interface ReplayBound {
  maxLineBytes: number;
  oversize: (piece: Buffer, line: OversizeLine & { end: boolean; torn: boolean }) => Promise<void> | void;
}

/** A line over the bound: its number, where it starts, and its bytes passed on so far. */
export interface OversizeLine {
  line: number;
  offset: number;
  bytes: number;
}

/** The file could not be opened, read or written; `code` is the system's (ENOSPC, EROFS...). */
export class AppendLogError extends CliError {
  readonly code: string;
  readonly doing: 'open' | 'read' | 'write';

  constructor(what: string, doing: AppendLogError['doing'], cause: unknown) {
    const code = errorCode(cause);
    const exitCode = doing === 'open' ? ExitCode.Usage : ExitCode.Failure;
    super(`Cannot ${doing} ${what} (${codeWords(code)}).`, exitCode);
    this.code = code;
    this.doing = doing;
    this.cause = cause;
  }
}

/** The path names a folder, a device or a pipe: bad usage (exit 2). */
export class NotRegularFileError extends UsageError {
  constructor(what: string, info: Stats) {
    super(`${capitalize(what)} is ${fileKind(info)}, not a regular file.`);
  }
}

type Line = string | Buffer;

/** The lines of the next write, and the one promise of their appends (each line's offset). */
class Round {
  readonly lines: Line[] = [];
  settle!: (result: number[] | Error) => void;
  readonly done = new Promise<number[]>((resolve, reject) => {
    this.settle = (result) => (result instanceof Error ? reject(result) : resolve(result));
  });
}

export class AppendLog {
  /** The round being gathered; `busy`: the round (or truncation) in progress, one at a time. */
  private next: Round | undefined;
  private scheduled = false;
  private busy: Promise<void> | undefined;
  private failure: Error | undefined;

  private constructor(
    readonly path: string,
    readonly what: string,
    private fd: number | undefined,
    /** Bytes in the file: where the next round starts (one writer, O_APPEND). */
    private bytes: number,
    private readonly synced: boolean,
    private readonly lock: FileLock | undefined,
  ) {}

  /** Opens (creating it and its folder) the file for appending, taking its lock if asked. */
  static async open(path: string, options: AppendLogOptions): Promise<AppendLog> {
    const { what, synced = false } = options;
    const openError = fail(what, 'open');
    // A missing file is created; a folder, a device or a pipe is refused before the lock is taken.
    const missing = (error: unknown) =>
      ['ENOENT', 'ENOTDIR'].includes(errorCode(error)) ? undefined : openError(error);
    requireRegularFile(await stat(path).catch(missing), what);
    await makeFolder(dirname(path)).catch(openError);
    const lock = options.lock && (await acquireFileLock(`${path}.lock`, { ...options.lock, what }));
    try {
      const flags = constants.O_RDWR | constants.O_CREAT | constants.O_APPEND;
      const dsync = synced && HAS_DSYNC ? constants.O_DSYNC : 0;
      const fd = await openFd(path, flags | dsync, options.mode ?? 0o600).catch(openError);
      const info = await fstatFd(fd);
      // Replaced by a pipe or a device while the lock was waited for.
      if (!info.isFile()) await closeFd(fd).catch(noop);
      requireRegularFile(info, what);
      return new AppendLog(path, what, fd, info.size, synced, lock);
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
   * Calls `visit` with each complete line from the start (without its newline; the buffer is
   * reused: copy what you keep), then cuts a torn last line off, reported as `tornTail`. Call
   * before appending. With `bound`, a line longer than `bound.maxLineBytes` is never held whole:
   * its bytes go to `bound.oversize` piece by piece (each awaited, in order; `end` with the last,
   * `torn` when the file ends inside it) instead of `visit`, so memory stays bounded.
   */
  async replay(
    visit: (line: Buffer, lineNumber: number, offset: number) => void,
    signal?: AbortSignal,
    bound?: ReplayBound,
  ): Promise<{ lines: number; tornTail?: { bytes: number; line: number } }> {
    const fd = this.openFd();
    const max = bound?.maxLineBytes ?? Number.POSITIVE_INFINITY;
    const chunk = Buffer.allocUnsafe(READ_CHUNK);
    let [total, complete, lines] = [0, 0, 0];
    /** The start of the next line, copied out of earlier chunks (at most `max` bytes). */
    let [carry, carried]: [Buffer[], number] = [[], 0];
    /** The line over the bound being passed on, if any. */
    let long: OversizeLine | undefined;
    const pass = async (piece: Buffer, line: OversizeLine, end: boolean, torn = false) => {
      line.bytes += piece.length;
      await bound!.oversize(piece, { ...line, end, torn });
    };
    /** Passes the carried pieces, then `last`, on as (the start of) the line over the bound. */
    const passCarried = async (last: Buffer, line: OversizeLine, end: boolean) => {
      for (const piece of carry) await pass(piece, line, false);
      await pass(last, line, end);
      [carry, carried] = [[], 0];
    };
    for (;;) {
      if (signal?.aborted) throw new CancelledError(`Interrupted while reading ${this.what}.`);
      const { bytesRead } = await readFd(fd, chunk, 0, READ_CHUNK, total).catch(fail(this.what, 'read'));
      if (bytesRead === 0) break;
      total += bytesRead;
      let data = chunk.subarray(0, bytesRead);
      if (long) {
        const end = data.indexOf(NEWLINE);
        await pass(end === -1 ? data : data.subarray(0, end), long, end !== -1);
        if (end === -1) continue;
        complete += long.bytes + 1;
        long = undefined;
        data = data.subarray(end + 1);
      }
      let start = 0;
      for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
        const [number, length, rest] = [++lines, carried + end - start, data.subarray(start, end)];
        if (length > max) await passCarried(rest, { line: number, offset: complete, bytes: 0 }, true);
        else visit(carried === 0 ? rest : Buffer.concat([...carry, rest], length), number, complete);
        [carry, carried] = [[], 0];
        complete += length + 1;
        start = end + 1;
      }
      const rest = data.subarray(start);
      if (carried + rest.length > max) {
        long = { line: ++lines, offset: complete, bytes: 0 };
        await passCarried(rest, long, false);
      } else if (rest.length > 0) {
        carry.push(Buffer.from(rest)); // a copy: the chunk is read into again
        carried += rest.length;
      }
    }
    if (long) {
      await pass(Buffer.alloc(0), long, true, true);
      lines--;
    }
    if (complete === total) return { lines };
    await ftruncateFd(fd, complete).catch(fail(this.what, 'write'));
    this.bytes = complete;
    return { lines, tornTail: { bytes: total - complete, line: lines + 1 } };
  }

  /**
   * Appends `line` (and a newline) in the next round; resolves with the offset where it starts
   * once written (on disk for a synced log), or rejects with an AppendLogError.
   */
  append(line: Line): Promise<number> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const round = this.gather();
    const index = round.lines.push(line) - 1;
    return round.done.then((offsets) => offsets[index]!);
  }

  /** Writes what is queued and `line` on this thread and returns its offset (an unsynced log). */
  appendNow(line: Line): number {
    if (this.synced) throw new Error('appendNow is for unsynced logs');
    const result = this.writeNextNow(line);
    if (result instanceof Error) throw result;
    return result.at(-1)!;
  }

  /** Resolves once every line appended so far is written; rejects when nothing more can be. */
  async flush(): Promise<void> {
    if (this.next || this.busy) await this.gather().done;
  }

  /** Empties the file, or cuts it to `length` bytes, between two rounds (a reset, a compaction). */
  async truncate(length = 0): Promise<void> {
    while (this.busy) await this.busy;
    this.truncateNow(length);
    if (this.synced) await this.occupy(fdatasyncFd(this.openFd()).catch(fail(this.what, 'write')));
  }

  /** `truncate` on this thread, unsynced (the sandbox's reset answers after it). */
  truncateNow(length = 0): void {
    if (this.busy) throw new Error('truncateNow during a round');
    try {
      ftruncateSync(this.openFd(), length);
    } catch (error) {
      fail(this.what, 'write')(error);
    }
    this.bytes = length;
  }

  /** Reads `length` bytes at `offset` (a line found by `replay` or `append`). */
  async read(offset: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    // One pread: a regular file returns fewer bytes than asked only at its end.
    const { bytesRead } = await readFd(this.openFd(), buffer, 0, length, offset).catch(
      fail(this.what, 'read'),
    );
    return buffer.subarray(0, bytesRead);
  }

  /**
   * Writes what is queued, closes the file and releases the lock; later appends are refused.
   * A write that fails here is reported to its appender only: `flush` first to learn of it.
   */
  async close(): Promise<void> {
    await this.flush().catch(noop);
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    this.next?.settle(this.refusal()!);
    this.next = undefined;
    await closeFd(fd).catch(noop);
    await this.lock?.release();
  }

  /** `close` on this thread, for an unsynced log (what is queued is written first). */
  closeNow(): void {
    if (this.synced) throw new Error('closeNow is for unsynced logs');
    if (this.fd === undefined) return;
    this.writeNextNow();
    closeSync(this.fd);
    this.fd = undefined;
    void this.lock?.release();
  }

  /** Why nothing can be written: the log closed, a round that could not be cut off, the lock lost. */
  private refusal(): Error | undefined {
    if (this.fd === undefined) return new AppendLogError(this.what, 'write', CLOSED);
    this.failure ??= this.lock?.lost;
    return this.failure;
  }

  private openFd(): number {
    if (this.fd === undefined) throw this.refusal();
    return this.fd;
  }

  /** The round that takes the next line; it starts at the next turn of the event loop. */
  private gather(): Round {
    this.next ??= new Round();
    if (!this.scheduled && !this.busy) {
      this.scheduled = true;
      setImmediate(this.startRound);
    }
    return this.next;
  }

  private readonly startRound = (): void => {
    this.scheduled = false;
    const round = this.next;
    if (this.busy || !round) return;
    if (this.synced) {
      this.next = undefined;
      void this.occupy(this.writeRound(round.lines).then(round.settle));
    } else this.writeNextNow();
  };

  /** Marks `work` as the one thing touching the file; when it ends, the next round may start. */
  private occupy(work: Promise<void>): Promise<void> {
    const idle: Promise<void> = work.then(noop, noop).then(() => {
      if (this.busy === idle) this.busy = undefined;
      if (this.next) this.gather();
    });
    this.busy = idle;
    return work;
  }

  /** Writes lines from the thread pool (on disk for a synced log); their offsets, or the error. */
  private async writeRound(lines: Line[]): Promise<number[] | Error> {
    const refused = this.refusal();
    if (refused) return refused;
    const { buffer, offsets, start } = this.encode(lines);
    try {
      const fd = this.openFd();
      for (let done = 0; done < buffer.length; ) {
        done += (await writeFd(fd, buffer, done, buffer.length - done, null)).bytesWritten;
      }
      if (!HAS_DSYNC && buffer.length > 0) await fdatasyncFd(fd);
      return offsets;
    } catch (error) {
      return this.cutRound(start, error);
    }
  }

  /** `writeRound` on this thread. */
  private writeNow(lines: Line[]): number[] | Error {
    const refused = this.refusal();
    if (refused) return refused;
    const { buffer, offsets, start } = this.encode(lines);
    try {
      const fd = this.openFd();
      for (let done = 0; done < buffer.length; ) done += writeSync(fd, buffer, done, buffer.length - done);
      return offsets;
    } catch (error) {
      return this.cutRound(start, error);
    }
  }

  /** Writes the round being gathered, then `extra`, on this thread, and settles the round. */
  private writeNextNow(...extra: Line[]): number[] | Error {
    const round = this.next;
    this.next = undefined;
    const result = this.writeNow([...(round?.lines ?? []), ...extra]);
    round?.settle(result);
    return result;
  }

  /** Cuts what part of a failed round reached the file, so that the next round starts a line. */
  private cutRound(start: number, cause: unknown): Error {
    const failed = new AppendLogError(this.what, 'write', cause);
    try {
      ftruncateSync(this.fd!, start);
    } catch {
      this.failure ??= failed;
    }
    this.bytes = start;
    return failed;
  }

  /** The bytes of `lines` (each with its newline) and where each one starts. */
  private encode(lines: Line[]): { buffer: Buffer; offsets: number[]; start: number } {
    const start = this.bytes;
    const offsets: number[] = [];
    const parts = lines.flatMap((line) => {
      const bytes = typeof line === 'string' ? Buffer.from(line, 'utf8') : line;
      offsets.push(this.bytes);
      this.bytes += bytes.length + 1;
      return [bytes, NEWLINE_BUFFER];
    });
    return { buffer: Buffer.concat(parts, this.bytes - start), offsets, start };
  }
}

/** For `.catch`: throws the system's error as an AppendLogError naming the file. */
function fail(what: string, doing: AppendLogError['doing']): (cause: unknown) => never {
  return (cause) => {
    throw new AppendLogError(what, doing, cause);
  };
}

/** Refuses a folder, a device or a pipe; `undefined` (no file yet) is fine. */
function requireRegularFile(info: Stats | undefined, what: string): void {
  if (info && !info.isFile()) throw new NotRegularFileError(what, info);
}
