/** Driving an interactive command (prompts on a terminal) in-process, as a user types. */
import type { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { createTestIO, type TestIO } from '../../src/io/memory.js';
import { testEnv } from './cli.js';
import { waitFor } from './wait.js';

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** An interactive run: ordercli in-process on a terminal-like IO whose keystrokes the test types. */
export interface Session {
  io: TestIO;
  done: Promise<number>;
  /** Waits until the screen (stdout, ANSI removed) shows `text` after what was already seen. */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Types keys (text, '\r', '\x1b[B', ...) into the prompt's input, once a prompt reads them. */
  type(keys: string): void;
  screen(): string;
}

export const KEY = { enter: '\r', down: '\x1b[B', up: '\x1b[A', escape: '\x1b', ctrlC: '\x03' } as const;

export function startSession(
  args: string[],
  env: Record<string, string | undefined>,
  columns = 100,
): Session {
  const io = createTestIO({ tty: true, columns });
  const input = io.input as PassThrough;
  // A key that no prompt came to read fails the session: its waits and its outcome.
  let failTyping: (error: unknown) => void = () => undefined;
  const typingFailed = new Promise<never>((_resolve, reject) => {
    failTyping = reject;
  });
  typingFailed.catch(() => undefined);
  const done = Promise.race([
    main(args, { io, env: testEnv(env), signal: new AbortController().signal }),
    typingFailed,
  ]);
  let typing: Promise<void> = Promise.resolve();
  let seen = 0;
  const screen = () => stripAnsi(io.stdoutText());
  const shows = (text: string | RegExp) => {
    const rest = screen().slice(seen);
    const at = typeof text === 'string' ? rest.indexOf(text) : rest.search(text);
    if (at < 0) return false;
    seen += at;
    return true;
  };
  return {
    io,
    done,
    screen,
    async waitFor(text, timeoutMs = 5000) {
      const shown = waitFor(() => shows(text), timeoutMs, String(text)).catch(() => {
        throw new Error(
          `timed out waiting for ${String(text)}; screen:\n${screen()}\nstderr:\n${io.stderrText()}`,
        );
      });
      await Promise.race([shown, typingFailed]);
    },
    type(keys) {
      // In order, each once a prompt reads: keys sent while none does (between two questions, or
      // to a question just answered) would reach the wrong one or none.
      typing = typing.then(async () => {
        await promptReading(input);
        input.write(keys);
      });
      typing.catch(failTyping);
    },
  };
}

/**
 * Whether a prompt reads the keys now: readline resumes the input when a prompt starts and pauses
 * it when the prompt ends, and listens for its keypresses meanwhile.
 */
function promptReads(input: PassThrough): boolean {
  return input.readableFlowing === true && input.listenerCount('keypress') > 0;
}

/**
 * Resolves once a prompt reads the keys and still does a turn of the event loop later: a question
 * just answered reads until its answer settles, a turn later, and then stops.
 */
function promptReading(input: PassThrough): Promise<unknown> {
  return waitFor(
    async () => {
      if (!promptReads(input)) return false;
      await new Promise((resolve) => setImmediate(resolve));
      return promptReads(input);
    },
    10_000,
    'a prompt reading the keys',
  );
}
