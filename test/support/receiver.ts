/** A webhook receiver for the tests: a node:http server on 127.0.0.1 that records every request. */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedNotification {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  body: unknown;
}

export interface Receiver {
  url: string;
  received: ReceivedNotification[];
  /** Status to answer for the next requests, consumed one by one; 200 when empty. */
  failNext(...statuses: number[]): void;
  /** Resolves once `count` notifications have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedNotification[]>;
  close(): Promise<void>;
}

/** Starts a receiver; it answers 200 unless told otherwise with `failNext`. */
export async function startReceiver(): Promise<Receiver> {
  const received: ReceivedNotification[] = [];
  const statuses: number[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        body = undefined;
      }
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawBody, body });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'text/plain' });
      res.end('ok');
      for (const resolveWaiter of waiters.splice(0)) resolveWaiter();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    failNext: (...codes) => statuses.push(...codes),
    async waitFor(count, timeoutMs = 3000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`expected ${count} notifications, got ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, remaining);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
