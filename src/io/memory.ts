/**
 * IOStreams that are not the process's: in memory for tests (`createTestIO`), and line-prefixed
 * and wrapped into a parent's for a command run inside another one (`prefixedIO`, the demo).
 */
import { PassThrough, type Readable, Writable } from 'node:stream';
import stringWidth from 'string-width';
import { type IOStreams, NodeStreamsIO } from './streams.js';
import { wrapText } from './wrap.js';

/**
 * IO for a command run inside another one (the demo's steps and receiver): each line it writes goes
 * to the parent, after `prefix` — stdout and stderr both to the parent's stdout, or each to its own
 * with `keepStderr`. On a terminal, a line wider than the parent's width (less the prefix) is
 * wrapped at word boundaries (wrap.ts), each piece after the prefix: the terminal never cuts a
 * word. It never prompts and reads no input; `onLine` sees each line whole, before wrapping.
 */
export function prefixedIO(
  parent: IOStreams,
  prefix: string,
  onLine?: (line: string) => void,
  options: { keepStderr?: boolean } = {},
): IOStreams {
  const room = () => Math.max(40, parent.columns - stringWidth(prefix));
  const lines = (write: (text: string) => void, tty: boolean) => {
    let pending = '';
    return new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        pending += chunk.toString();
        let end = pending.indexOf('\n');
        while (end >= 0) {
          const line = pending.slice(0, end);
          onLine?.(line);
          const pieces = tty ? wrapText(line, room()).split('\n') : [line];
          write(pieces.map((piece) => `${prefix}${piece}\n`).join(''));
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
    lines((text) => parent.out(text), parent.stdoutIsTTY),
    options.keepStderr
      ? lines((text) => parent.err(text), parent.stderrIsTTY)
      : lines((text) => parent.out(text), parent.stdoutIsTTY),
    false,
    parent.stdoutIsTTY,
    options.keepStderr ? parent.stderrIsTTY : parent.stdoutIsTTY,
    room,
    parent.redactor,
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
