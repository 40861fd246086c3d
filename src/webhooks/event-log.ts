/**
 * `listen --log`: every accepted notification appended as one JSON line through ONE write stream.
 * `append` resolves when the stream's write callback for that line has run, i.e. the bytes were
 * handed to the file, and the receiver answers 200 only after that. Lines never interleave.
 *
 * The lines appended during one turn of the event loop are joined and written as one chunk at the
 * next `setImmediate`, and each append resolves with that chunk's callback: one file operation per
 * batch instead of one per event. (Measured with bench/listen.mjs: a write per event, or a corked
 * writev of one chunk per event, spent about a tenth of the receiver's time converting and
 * dispatching chunks.)
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

export class EventLog {
  private closed = false;
  private batch = '';
  private waiters: Waiter[] = [];
  private scheduled = false;
  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    const text = this.batch;
    this.waiters = [];
    this.batch = '';
    this.stream.write(text, (error) => {
      if (error) for (const w of waiters) w.reject(error);
      else for (const w of waiters) w.resolve();
    });
  };

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
  ) {}

  /** Opens (creating it and its folder) the log for appending; fails early if it cannot be written. */
  static async open(path: string): Promise<EventLog> {
    await mkdir(dirname(path), { recursive: true });
    const stream = createWriteStream(path, { flags: 'a', mode: 0o600 });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    // A later error fails the pending appends through their callbacks; this keeps it from being unhandled.
    stream.on('error', () => undefined);
    return new EventLog(path, stream);
  }

  /** Appends one line (without its newline); resolves once written. */
  append(line: string): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the log ${this.path} is closed`));
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
    if (this.closed) return Promise.resolve();
    this.flush();
    this.closed = true;
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}
