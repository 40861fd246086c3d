/**
 * The sandbox of a test file and what its tests send it.
 *
 * `useSandbox(options)` starts one before the tests of the file on a free port of 127.0.0.1, quiet,
 * resets it before each (unless `resetEach: false`) and closes it after them:
 *
 *   const sandbox = useSandbox({ validationDelayMs: 10 });
 *   it('…', () => runCli(['--base-url', sandbox.url, …]));
 *
 * A test that needs a sandbox of its own (a restart on the same `dataDir`, a second service, a
 * port already taken) starts it with `startSandbox({ port: 0, quiet: true, … })` and closes it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';

export function useSandbox(options: SandboxOptions = {}, { resetEach = true } = {}): Sandbox {
  let current: Sandbox | undefined;
  beforeAll(async () => {
    current = await startSandbox({ port: 0, quiet: true, ...options });
  });
  afterAll(async () => {
    await current?.close();
  });
  if (resetEach) beforeEach(() => current!.reset());
  // The tests get the sandbox once it runs; until then (at import time) there is none to give.
  return new Proxy({} as Sandbox, {
    get(_target, key) {
      if (!current) throw new Error('useSandbox: the sandbox starts in beforeAll; use it inside tests');
      const value = Reflect.get(current, key, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

export interface CallOptions {
  token?: string;
  /** Sends the token raw in this header instead of `Authorization: Bearer`. */
  header?: string;
  body?: unknown;
  /** Raw body text, sent as is. */
  raw?: string | Buffer;
}

export interface CallResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  text: string;
}

/** One request to the sandbox's HTTP interface; the body is parsed when it is JSON. */
export async function call(
  sandbox: Pick<Sandbox, 'url'>,
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
  const response = await request(`${sandbox.url}${path}`, { method: method as 'GET', headers, body });
  const text = await response.body.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the test sees the text.
  }
  return { status: response.statusCode, headers: response.headers, body: parsed, text };
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
