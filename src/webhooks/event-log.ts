/**
 * `listen --log`: every accepted notification appended as one JSON line to one file descriptor.
 * `append` calls back once the line has been written to the file (handed to the operating system),
 * and the receiver answers 200 only after that. Lines never interleave.
 *
 * The lines appended during one turn of the event loop are encoded into one buffer and written
 * with one synchronous write() at the next `setImmediate`; their callbacks run right after it. An
 * append to a regular file returns as soon as the page cache holds the bytes (tens of
 * microseconds for a batch), so doing it on the main thread is cheaper than a round trip through
 * the thread pool, during which every connection would wait for its 200. (Measured with
 * bench/listen.mjs: a write per event, or a write stream's callback per batch, left the receiver
 * idle a quarter of the time waiting for those callbacks.) It does not wait for the disk itself
 * (no fsync): a crash of the machine may lose the last lines, a crash of `listen` does not.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

type Done = (error?: Error) => void;

/**
 * One line as the log writes it: `text` (as UTF-8; `ascii` says it holds only ASCII, which is
 * copied rather than encoded), then `bytes` as they are, then `end` (short ASCII, such as `}\n`).
 */
export interface LogLine {
  text: string;
  ascii?: boolean;
  bytes?: Uint8Array;
  end?: string;
}

const APPEND = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND;
const INITIAL_BATCH_BYTES = 64 * 1024;
const MAX_KEPT_BATCH_BYTES = 4 * 1024 * 1024;

export class EventLog {
  private fd: number | undefined;
  /** The lines of this turn, encoded as they are appended (no string joined, no copy per line). */
  private batch = Buffer.allocUnsafe(INITIAL_BATCH_BYTES);
  private batchLength = 0;
  private waiters: Done[] = [];
  private scheduled = false;
  private failure: Error | undefined;
  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    const length = this.batchLength;
    this.waiters = [];
    this.batchLength = 0;
    try {
      if (this.failure) throw this.failure;
      writeAll(this.fd!, this.batch, length);
    } catch (error) {
      // A log that failed once may hold a partial line: no later line is appended after it.
      this.failure ??= error as Error;
      for (const done of waiters) done(this.failure);
      return;
    }
    // A burst of large bodies grew the buffer: give the memory back rather than keep it for good.
    if (this.batch.length > MAX_KEPT_BATCH_BYTES) this.batch = Buffer.allocUnsafe(INITIAL_BATCH_BYTES);
    for (const done of waiters) done();
  };

  private constructor(
    readonly path: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /** Opens (creating it and its folder) the log for appending; fails early if it cannot be written. */
  static async open(path: string): Promise<EventLog> {
    await mkdir(dirname(path), { recursive: true });
    return new EventLog(path, openSync(path, APPEND, 0o600));
  }

  /** Appends one line and calls `done` once it is written, or with the error that stopped it. */
  append(line: LogLine, done: Done): void {
    if (this.fd === undefined) {
      done(new Error(`the log ${this.path} is closed`));
      return;
    }
    const { text, bytes, end } = line;
    if (line.ascii) {
      this.reserve(text.length);
      this.batchLength += this.batch.write(text, this.batchLength, 'latin1');
    } else {
      // Room for the worst case (3 bytes per UTF-16 unit), so the text is never cut.
      this.reserve(text.length * 3);
      this.batchLength += this.batch.write(text, this.batchLength, 'utf8');
    }
    if (bytes !== undefined) {
      this.reserve(bytes.length);
      // TypedArray#set: Buffer#copy's argument handling cost more than the copy itself.
      this.batch.set(bytes, this.batchLength);
      this.batchLength += bytes.length;
    }
    if (end !== undefined) {
      this.reserve(end.length);
      for (let i = 0; i < end.length; i++) this.batch[this.batchLength++] = end.charCodeAt(i);
    }
    this.waiters.push(done);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Writes what is pending, then closes the file. */
  close(): Promise<void> {
    if (this.fd === undefined) return Promise.resolve();
    this.flush();
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
    return Promise.resolve();
  }

  private reserve(bytes: number): void {
    const needed = this.batchLength + bytes;
    if (needed <= this.batch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(needed, this.batch.length * 2));
    this.batch.copy(grown, 0, 0, this.batchLength);
    this.batch = grown;
  }
}

/** Writes bytes whole (write() may take less than asked). */
function writeAll(fd: number, buffer: Buffer, length: number): void {
  let offset = 0;
  while (offset < length) offset += writeSync(fd, buffer, offset, length - offset);
}
