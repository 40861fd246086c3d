/** Helpers for the sandbox's tests: real HTTP against a sandbox and a tiny webhook receiver. */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { Agent, request } from 'undici';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';

/** A sandbox on a free loopback port, silent, with a short validation delay. */
export function startTestSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ port: 0, quiet: true, validationDelayMs: 20, deliveryBackoffMs: 20, ...options });
}

export interface CallOptions {
  token?: string;
  /** Sends the token raw in this header instead of `Authorization: Bearer`. */
  header?: string;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string | Buffer;
  dispatcher?: Agent;
}

export interface CallResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  text: string;
}

/** One request; the body is parsed when it is JSON. */
export async function call(
  sandbox: Sandbox,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) {
    if (options.header) headers[options.header] = options.token;
    else headers.authorization = `Bearer ${options.token}`;
  }
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await request(`${sandbox.url}${path}`, {
    method: method as 'GET',
    headers,
    body,
    dispatcher: options.dispatcher,
  });
  const text = await response.body.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the test sees the text.
  }
  return { status: response.statusCode, headers: response.headers, body: parsed, text };
}

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

/** A node:http webhook receiver that records every request. */
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
      for (const wake of waiters.splice(0)) wake();
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

/** Waits until `check` is true, polling; for state that changes on the sandbox's timers. */
export async function eventually(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A valid partner order: contact reference 301, packaging references 401 (two) and 403 (one). */
export function partnerOrder(externalId = 'EXT-0001'): Record<string, unknown> {
  return {
    externalId,
    externalReference: `CMD-${externalId}`,
    contact: { internalReferenceId: 301 },
    customer: { name: 'Maison Rousseau' },
    invoicingAddress: {
      recipient: 'Maison Rousseau',
      street: '12 rue des Halles',
      zipCode: '69002',
      city: 'Lyon',
      country: 'FR',
    },
    deliveryAddress: {
      recipient: 'Maison Rousseau',
      street: '3 quai Saint-Antoine',
      zipCode: '69002',
      city: 'Lyon',
      country: 'FR',
    },
    items: [
      { internalReferenceId: 401, orderedQuantity: 2 },
      { internalReferenceId: 403, orderedQuantity: 1 },
    ],
  };
}

/** A valid order for a client with CRM and catalog access. */
export function fullAccessOrder(externalId = 'EXT-F-0001'): Record<string, unknown> {
  return {
    externalId,
    externalReference: `CMD-${externalId}`,
    contact: { id: 101 },
    customer: { name: 'Épicerie fine Lefèvre' },
    items: [{ packaging: 1101, orderedQuantity: 12 }],
  };
}

export { Agent };
