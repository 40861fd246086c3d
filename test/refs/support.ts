/** Helpers for the reference-list tests: seed fixtures, a server of undocumented shapes, prompt driving. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { PassThrough } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { createTestIO, type TestIO } from '../../src/io/memory.js';
import { displayWidth } from '../../src/io/table.js';
import { ROOT, testEnv } from '../support/cli.js';

/** A seed file of the sandbox, as the service returns it. */
export function fixture<T = Record<string, unknown>[]>(name: string): T {
  return JSON.parse(readFileSync(join(ROOT, 'fixtures/sandbox', `${name}.json`), 'utf8')) as T;
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The lines of a framed table (those starting with a box-drawing character). */
export function tableLines(text: string): string[] {
  return stripAnsi(text)
    .split('\n')
    .filter((line) => /^[┌│├└]/.test(line));
}

export function widthOf(line: string): number {
  return displayWidth(line);
}

/** A real HTTP server answering fixed bodies by path: list shapes the interface does not document. */
export async function startShapeServer(
  bodies: Record<string, unknown>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (!(path in bodies)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"title":"Not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(bodies[path]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
