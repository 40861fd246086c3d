/** Helpers for the reference-list tests: seed fixtures, a server of undocumented shapes. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { displayWidth } from '../../src/io/table.js';
import { ROOT } from './cli.js';
import { stripAnsi } from './session.js';

/** A seed file of the sandbox, as the service returns it. */
export function fixture<T = Record<string, unknown>[]>(name: string): T {
  return JSON.parse(readFileSync(join(ROOT, 'fixtures/sandbox', `${name}.json`), 'utf8')) as T;
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
