/**
 * `listen --log`: every accepted notification appended as one JSON line to one file descriptor.
 * `append` resolves once the line has been written to the file (handed to the operating system),
 * and the receiver answers 200 only after that. Lines never interleave.
 *
 * The lines appended during one turn of the event loop are joined and written with one
 * synchronous write() at the next `setImmediate`, and their appends resolve right after it. An
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

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const APPEND = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND;

export class EventLog {
  private fd: number | undefined;
  private batch = '';
  private waiters: Waiter[] = [];
  private scheduled = false;
  private failure: Error | undefined;
  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    const text = this.batch;
    this.waiters = [];
    this.batch = '';
    try {
      if (this.failure) throw this.failure;
      writeAll(this.fd!, text);
    } catch (error) {
      // A log that failed once may hold a partial line: no later line is appended after it.
      this.failure ??= error as Error;
      for (const w of waiters) w.reject(this.failure);
      return;
    }
    for (const w of waiters) w.resolve();
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

  /** Appends one line (without its newline); resolves once written. */
  append(line: string): Promise<void> {
    if (this.fd === undefined) return Promise.reject(new Error(`the log ${this.path} is closed`));
    this.batch += `${line}\n`;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
    });
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
}

/** Writes a string whole: as a string (no Buffer to allocate), the rest as bytes after a short write. */
function writeAll(fd: number, text: string): void {
  const written = writeSync(fd, text);
  if (written >= Buffer.byteLength(text, 'utf8')) return;
  const buffer = Buffer.from(text, 'utf8');
  let offset = written;
  while (offset < buffer.length) offset += writeSync(fd, buffer, offset, buffer.length - offset);
}
