/**
 * `listen --log`: every accepted notification appended as one JSON line through ONE write stream.
 * `append` resolves when the stream's write callback has run, i.e. the bytes were handed to the
 * file, and the receiver answers 200 only after that. Concurrent appends are queued by the stream
 * and written together (writev), so the log costs one system call per batch, not per event, and
 * lines never interleave.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

export class EventLog {
  private closed = false;

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
    return new Promise((resolve, reject) => {
      this.stream.write(`${line}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}
