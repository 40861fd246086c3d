/**
 * IOStreams that are not the process's: in memory for tests (`createTestIO`), and line-prefixed
 * into a parent's stdout for a command run inside another one (`prefixedIO`, the demo).
 */
import { PassThrough, type Readable, Writable } from 'node:stream';
import { type IOStreams, NodeStreamsIO } from './streams.js';

/**
 * IO for a command run inside another one (the demo's receiver): each line it writes goes to the
 * parent's stdout, after `prefix`; it never prompts and reads no input.
 */
export function prefixedIO(parent: IOStreams, prefix: string, onLine?: (line: string) => void): IOStreams {
  const lines = (write: (text: string) => void) => {
    let pending = '';
    return new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        pending += chunk.toString();
        let end = pending.indexOf('\n');
        while (end >= 0) {
          onLine?.(pending.slice(0, end));
          write(`${prefix}${pending.slice(0, end + 1)}`);
          pending = pending.slice(end + 1);
          end = pending.indexOf('\n');
        }
        callback();
      },
    });
  };
  const stdin = new PassThrough();
  stdin.end();
  const io = new NodeStreamsIO(
    stdin,
    lines((text) => parent.out(text)),
    lines((text) => parent.out(text)),
    false,
    parent.stdoutIsTTY,
    parent.stdoutIsTTY,
    () => Math.max(40, parent.columns - prefix.length),
  );
  return io;
}

export interface TestIOOptions {
  /** Make stdin, stdout and stderr look like a terminal. */
  tty?: boolean;
  stdin?: string | Readable;
  columns?: number;
}

export interface TestIO extends IOStreams {
  stdoutText(): string;
  stderrText(): string;
  /** The stdin stream, to write keystrokes into when it is a PassThrough. */
  readonly input: Readable;
}

/** In-memory streams for tests; with `tty: true` they claim to be a terminal. */
export function createTestIO(options: TestIOOptions = {}): TestIO {
  const tty = options.tty ?? false;
  const stdin =
    typeof options.stdin === 'string' || options.stdin === undefined ? new PassThrough() : options.stdin;
  if (typeof options.stdin === 'string') (stdin as PassThrough).end(options.stdin);
  else if (options.stdin === undefined && !tty) (stdin as PassThrough).end();
  const stdout = new CapturingStream(tty, options.columns ?? 80);
  const stderr = new CapturingStream(tty, options.columns ?? 80);
  Object.assign(stdin, { isTTY: tty, setRawMode: () => stdin });
  const io = new NodeStreamsIO(stdin, stdout, stderr, tty, tty, tty, () => options.columns ?? 80);
  return Object.assign(io, {
    stdoutText: () => stdout.text(),
    stderrText: () => stderr.text(),
    input: stdin,
  });
}

/** A writable that keeps what it is given and can claim to be a TTY (for prompts and tables). */
class CapturingStream extends PassThrough {
  private readonly chunks: Buffer[] = [];
  readonly isTTY: boolean;
  readonly columns: number;
  readonly rows = 24;

  constructor(tty: boolean, columns: number) {
    super();
    this.isTTY = tty;
    this.columns = columns;
    this.on('data', (chunk: Buffer) => this.chunks.push(chunk));
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
