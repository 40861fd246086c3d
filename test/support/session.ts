/** Driving an interactive command (prompts on a terminal) in-process, as a user types. */
import type { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { createTestIO, type TestIO } from '../../src/io/memory.js';
import { testEnv } from './cli.js';

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
  /** Types keys (text, '\r', '\x1b[B', ...) into the prompt's input. */
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
  const done = main(args, { io, env: testEnv(env), signal: new AbortController().signal });
  let seen = 0;
  const screen = () => stripAnsi(io.stdoutText());
  return {
    io,
    done,
    screen,
    async waitFor(text, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = screen();
        const rest = current.slice(seen);
        const at = typeof text === 'string' ? rest.indexOf(text) : rest.search(text);
        if (at >= 0) {
          seen += at;
          // Let the prompt finish rendering and start reading before the next keys.
          await new Promise((resolve) => setTimeout(resolve, 30));
          return;
        }
        if (Date.now() > deadline) {
          throw new Error(
            `timed out waiting for ${String(text)}; screen:\n${current}\nstderr:\n${io.stderrText()}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    type(keys) {
      (io.input as PassThrough).write(keys);
    },
  };
}
