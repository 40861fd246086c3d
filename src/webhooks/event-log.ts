/**
 * `listen --log`: every accepted notification appended as one JSON line (`formatEventLine`).
 * `append` calls back once the line has been written to the file (handed to the operating system),
 * and the receiver answers 200 only after that. Lines never interleave.
 *
 * The lines appended during one turn of the event loop are written together with one synchronous
 * write at the next `setImmediate`, and their callbacks run right after it: an append to a regular
 * file returns as soon as the page cache holds the bytes, which is quicker than a round trip
 * through the thread pool during which every connection would wait for its 200. It does not wait
 * for the disk itself (no fsync): a crash of the machine may lose the last lines, a crash of
 * `listen` does not.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

type Done = (error?: Error) => void;

const APPEND = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND;

export class EventLog {
  private fd: number | undefined;
  /** The lines of this turn and who waits for them. */
  private lines: string[] = [];
  private waiters: Done[] = [];
  private failure: Error | undefined;

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

  /** Appends one line (without its newline) and calls `done` once it is written, or with the error that stopped it. */
  append(line: string, done: Done): void {
    if (this.fd === undefined) {
      done(new Error(`the log ${this.path} is closed`));
      return;
    }
    this.lines.push(line, '\n');
    this.waiters.push(done);
    if (this.waiters.length === 1) setImmediate(() => this.flush());
  }

  /** Writes what is pending, then closes the file. */
  async close(): Promise<void> {
    if (this.fd === undefined) return;
    this.flush();
    closeSync(this.fd);
    this.fd = undefined;
  }

  private flush(): void {
    if (this.waiters.length === 0) return;
    const { lines, waiters } = this;
    this.lines = [];
    this.waiters = [];
    try {
      if (this.failure) throw this.failure;
      writeAll(this.fd!, Buffer.from(lines.join(''), 'utf8'));
    } catch (error) {
      // A log that failed once may hold a partial line: no later line is appended after it.
      this.failure ??= error as Error;
      for (const done of waiters) done(this.failure);
      return;
    }
    for (const done of waiters) done();
  }
}

/** Writes bytes whole (write() may take less than asked). */
function writeAll(fd: number, buffer: Buffer): void {
  for (let offset = 0; offset < buffer.length; ) offset += writeSync(fd, buffer, offset);
}
