/**
 * The process's streams behind one object: commands write through it, never to `process` or
 * `console`, and everything written is redacted. In-memory variants (tests, a command run inside
 * another) are in memory.ts, so that start-up does not load node:stream.
 */
import { write } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { Redactor } from '../core/redact.js';

export interface IOStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdinIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** Terminal width of stdout (of stderr when only stderr is a terminal; 80 when unknown). */
  readonly columns: number;
  /** Masks tokens and webhook keys in everything written. */
  readonly redactor: Redactor;
  /** Colour on stdout/stderr; decided once the global options are known. */
  colorEnabled: boolean;
  /** `--yes`, CI or non-TTY stdin: never prompt. */
  neverPrompt: boolean;
  /** Writes results to stdout. */
  out(text: string): void;
  /**
   * Writes results to stdout without holding up the event loop while a slow reader (a pipe read
   * by a busy process, `| less` at a prompt) takes them: resolves once written. Node writes to a
   * pipe synchronously, so a long-running server (`listen`) would stop answering requests for as
   * long as its reader lags. Do not mix with `out()` while one is pending: order is not kept
   * between the two.
   */
  outAsync(text: string): Promise<void>;
  /**
   * Writes to stdout without masking secrets: only for what the user asked to see with
   * `--show-secrets`. Everything else goes through `out()`.
   */
  outUnredacted(text: string): void;
  /** Writes progress, warnings and errors to stderr. */
  err(text: string): void;
  /** Whether an interactive prompt can be shown. */
  canPrompt(): boolean;
  /** Resolves once everything written to stdout has been flushed. */
  flush(): Promise<void>;
}

/** IOStreams over any three streams; see processIO(), and src/io/memory.ts for the others. */
export class StreamsIO implements IOStreams {
  readonly redactor = new Redactor();
  colorEnabled = false;
  neverPrompt = false;

  constructor(
    readonly stdin: Readable,
    readonly stdout: Writable,
    readonly stderr: Writable,
    readonly stdinIsTTY: boolean,
    readonly stdoutIsTTY: boolean,
    readonly stderrIsTTY: boolean,
    private readonly width: () => number,
    /** The file descriptor behind `stdout` when it is a pipe or a file (written from the thread pool). */
    private readonly stdoutFd?: number,
  ) {}

  get columns(): number {
    return this.width();
  }

  out(text: string): void {
    this.stdout.write(this.redactor.redact(text));
  }

  outUnredacted(text: string): void {
    this.stdout.write(text);
  }

  err(text: string): void {
    this.stderr.write(this.redactor.redact(text));
  }

  outAsync(text: string): Promise<void> {
    const redacted = this.redactor.redact(text);
    const fd = this.stdoutFd;
    if (fd === undefined) {
      return new Promise((resolve) => this.stdout.write(redacted, () => resolve()));
    }
    const buffer = Buffer.from(redacted, 'utf8');
    return new Promise((resolve) => {
      const from = (offset: number): void => {
        write(fd, buffer, offset, buffer.length - offset, null, (error, written) => {
          if (!error) {
            if (offset + written < buffer.length) from(offset + written);
            else resolve();
            return;
          }
          // A reader that went away (`| head`) is not an error.
          if (error.code === 'EPIPE') {
            resolve();
            return;
          }
          // EAGAIN: the pipe is full and its descriptor non-blocking (libuv's). The rest goes through
          // the stream, which waits for room without holding the event loop; the next write starts
          // only once it is out, so the order holds.
          this.stdout.write(buffer.subarray(offset), () => resolve());
        });
      };
      from(0);
    });
  }

  canPrompt(): boolean {
    return !this.neverPrompt && this.stdinIsTTY && this.stdoutIsTTY;
  }

  flush(): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.writableLength === 0) resolve();
      else this.stdout.once('drain', () => resolve());
    });
  }
}

/** The real process streams. */
export function processIO(): IOStreams {
  // A reader that stops early (`ordercli … | head`) closes the pipe: drop the rest quietly.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  return new StreamsIO(
    process.stdin,
    process.stdout,
    process.stderr,
    Boolean(process.stdin.isTTY),
    Boolean(process.stdout.isTTY),
    Boolean(process.stderr.isTTY),
    () => process.stdout.columns || process.stderr.columns || 80,
    // A terminal keeps Node's own writes (its descriptor may be non-blocking).
    process.stdout.isTTY ? undefined : process.stdout.fd,
  );
}
