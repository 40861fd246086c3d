// submitRecords with a real ApiClient, a real local ledger and the sandbox: the guarantees of the
// sending step that the CLI tests cannot see from outside (in-flight bound, order, a claim on disk
// before each request, what the ledger refuses). The ledger is the only thing written.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient, type ApiClientOptions } from '../../../src/api/client.js';
import { Redactor } from '../../../src/core/redact.js';
import type { RecordResult } from '../../../src/import/report/report.js';
import { submitRecords } from '../../../src/import/send/submit.js';
import type { ValidatedRecord } from '../../../src/import/types.js';
import { LocalLedger, shardFileName, shardOf } from '../../../src/ledger/local.js';
import { bodyHash, type RecordSource } from '../../../src/ledger/record.js';
import type { Claim } from '../../../src/ledger/store.js';
import { tempDir } from '../../support/cli.js';
import { createdCounts, externalId, order, orders, postsTo } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

function clientFor(connections: number, options: Partial<ApiClientOptions> = {}): ApiClient {
  return new ApiClient({
    baseUrl: sandbox.url,
    token: sandbox.tokens.partner,
    timeoutMs: 10_000,
    userAgent: 'ordercli-test',
    redactor: new Redactor(),
    connections,
    ...options,
  });
}

function itemsOf(list: Record<string, unknown>[]): ValidatedRecord[] {
  return list.map((body, index) => ({
    source: {
      index,
      key: body.externalId as string,
      body,
      location: { file: 'orders.ndjson', line: index + 1, endLine: index + 1 },
      raw: body,
      problems: [],
      needsProductResolution: false,
    },
    body,
    problems: [],
  }));
}

/** The ledger of the sandbox under `root`, as a command opens it. */
function openLedger(root: string, source: RecordSource = { by: 'orders import' }): Promise<LocalLedger> {
  return LocalLedger.open(root, { baseUrl: sandbox.url, kind: 'orders', source });
}

/** Claims and settles order `i` through a ledger of its own, as another command would. */
async function sendElsewhere(
  root: string,
  i: number,
  outcome: 'created' | 'unknown' | 'claimed',
  source: RecordSource = { by: 'orders create' },
): Promise<LocalLedger> {
  const ledger = await openLedger(root, source);
  const id = externalId(i);
  const result = await ledger.claim({ externalId: id, bodyHash: bodyHash(JSON.stringify(order(i))) });
  if (!result.claimed) throw new Error(`could not claim ${id}: ${result.refusal.reason}`);
  if (outcome === 'created') ledger.created(result.claim, { httpStatus: 201, id: 777, code: 'SO-777' });
  if (outcome === 'unknown') ledger.unknown(result.claim, 'connection reset');
  await ledger.sync();
  return ledger;
}

/** The input's identity that `submit` claims with, unless told another (input-identity.ts). */
const INPUT = 'data/orders.ndjson';

interface Run {
  results: RecordResult[];
  outcome: Awaited<ReturnType<typeof submitRecords>>;
  ledgerRoot: string;
}

async function submit(
  list: Record<string, unknown>[],
  options: {
    concurrency: number;
    client?: Pick<ApiClient, 'request'>;
    signal?: AbortSignal;
    retryUnknown?: boolean;
    /** The input's identity (default INPUT). */
    input?: string;
    ledgerRoot?: string;
  },
): Promise<Run> {
  const input = options.input ?? INPUT;
  const ledgerRoot = options.ledgerRoot ?? tempDir('ordercli-ledger-');
  const ledger = await openLedger(ledgerRoot, { by: 'orders import', input });
  const client = clientFor(options.concurrency);
  const results: RecordResult[] = [];
  try {
    const outcome = await submitRecords(itemsOf(list), {
      client: options.client ?? client,
      input,
      ledger,
      concurrency: options.concurrency,
      retryUnknown: options.retryUnknown,
      signal: options.signal ?? new AbortController().signal,
      onResult: (result) => results.push(result),
    });
    return { results, outcome, ledgerRoot };
  } finally {
    await ledger.close();
    await client.close();
  }
}

function statusOf(run: Run, id: string): RecordResult | undefined {
  return run.results.find((r) => r.key === id);
}

/** A port of 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('submitRecords', () => {
  it('sends a key that comes twice (an input not validated) once: the second claim meets the first', async () => {
    const list = [order(1), order(2), order(1)];
    const run = await submit(list, { concurrency: 4 });
    const posted = sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/orders');
    expect(posted).toHaveLength(2);
    const second = run.results.filter((r) => r.key === externalId(1));
    expect(second.map((r) => r.status).sort()).toEqual(['created', 'skipped']);
  });

  it('keeps exactly `concurrency` requests in flight, never more', async () => {
    sandbox.setFaults({ latencyMs: 30 });
    const real = clientFor(5);
    let inFlight = 0;
    let peak = 0;
    const counting: Pick<ApiClient, 'request'> = {
      request: async (...args: Parameters<ApiClient['request']>) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        try {
          return await real.request(...args);
        } finally {
          inFlight--;
        }
      },
    };
    try {
      const { results, outcome } = await submit(orders(40), { concurrency: 5, client: counting });
      expect(results.filter((r) => r.status === 'created')).toHaveLength(40);
      expect(outcome).toMatchObject({ stopped: undefined, sent: 40 });
      expect(peak).toBe(5);
    } finally {
      await real.close();
    }
  });

  it('sends in input order, each request only once its claim is in the ledger’s shard and synced log', async () => {
    const real = clientFor(4);
    const list = orders(30);
    const ledgerRoot = tempDir('ordercli-ledger-');
    const violations: string[] = [];
    const started: string[] = [];
    const checking: Pick<ApiClient, 'request'> = {
      request: (method, path, options) => {
        const id = (JSON.parse(String(options?.rawBody)) as { externalId: string }).externalId;
        started.push(id);
        const folder = join(ledgerRoot, readdirSync(ledgerRoot)[0]!);
        const claim = `{"externalId":${JSON.stringify(id)},"event":"claim"`;
        const inShard = readFileSync(join(folder, shardFileName(shardOf(id))), 'utf8').includes(claim);
        const wal = readdirSync(join(folder, 'wal')).map((name) =>
          readFileSync(join(folder, 'wal', name), 'utf8'),
        );
        if (!inShard || !wal.some((text) => text.includes(claim))) violations.push(id);
        return real.request(method, path, options);
      },
    };
    try {
      const run = await submit(list, { concurrency: 4, client: checking, ledgerRoot });
      expect(violations).toEqual([]);
      expect(run.results.filter((r) => r.status === 'created')).toHaveLength(30);
      expect(started).toEqual(list.map((o) => o.externalId));
      // Each key's record in the ledger names the input and the line that sent it: its history.
      const reader = await openLedger(ledgerRoot);
      for (const [index, o] of list.entries()) {
        expect(await reader.lookup(String(o.externalId))).toMatchObject({
          status: 'created',
          by: 'orders import',
          input: INPUT,
          line: index + 1,
        });
      }
      await reader.close();
    } finally {
      await real.close();
    }
  });

  it('a 429 pauses every request of the import, not only the refused one', async () => {
    sandbox.setFaults({ latencyMs: 40 });
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 1, times: 1 },
    ]);
    const { results } = await submit(orders(40), { concurrency: 8 });
    expect(results.filter((r) => r.status === 'created')).toHaveLength(40);
    const posts = sandbox.requests.filter((r) => r.method === 'POST');
    const refused = posts.find((r) => r.status === 429)!;
    const answeredAt = Date.parse(refused.at) + 40;
    // Requests already in flight finish; none may start until Retry-After has passed.
    const during = posts.filter((r) => {
      const at = Date.parse(r.at);
      return at > answeredAt + 30 && at < answeredAt + 950;
    });
    expect(during).toEqual([]);
    expect(createdCounts(sandbox).size).toBe(40);
  });

  it('a second 429 that extends the pause holds back a request already waiting', async () => {
    const pauses: number[] = [];
    const client = clientFor(4, { onRetry: (event) => pauses.push(event.delayMs) });
    try {
      sandbox.scriptFaults([
        { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 2, times: 1 },
        { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 1, times: 1 },
      ]);
      const [first, second, third] = orders(3);
      const t0 = Date.now();
      // The first request is answered (429, 2 s) only 500 ms after it arrives.
      sandbox.setFaults({ latencyMs: 500 });
      const slow = client.post('/api/v1/orders', first);
      await waitFor(() => postsTo(sandbox) === 1, 10_000, 'the first request at the sandbox');
      // The second is answered at once (429, 1 s): the client pauses every request for 1 s.
      sandbox.setFaults({ latencyMs: 0 });
      const quick = client.post('/api/v1/orders', second);
      await waitFor(() => pauses.includes(1000), 10_000, 'the pause of the second answer');
      // The third starts waiting for that pause; at t0 + 500 the first answer extends it to t0 + 2500.
      const waiting = client.post('/api/v1/orders', third);
      await Promise.all([slow, quick, waiting]);
      const arrival = sandbox.requests.find(
        (r) => (r.body as { externalId?: string })?.externalId === externalId(3),
      )!;
      expect(Date.parse(arrival.at) - t0).toBeGreaterThanOrEqual(2400);
    } finally {
      await client.close();
    }
  });

  it('an interrupt while an order waits for a request slot records it not-sent: an unknown order stays unknown', async () => {
    const ledgerRoot = join(tempDir(), 'ledger');
    const list = orders(20);
    // An earlier run of the same input left order 1 unknown in the ledger.
    const earlierLedger = await openLedger(ledgerRoot, { by: 'orders import', input: INPUT });
    const result = await earlierLedger.claim({ externalId: externalId(1), bodyHash: 'h', line: 1 });
    const claim = (result as { claim: Claim }).claim;
    earlierLedger.unknown(claim, 'connection reset');
    await earlierLedger.close();

    sandbox.setFaults({ latencyMs: 1000 });
    const controller = new AbortController();
    // The interrupt comes once order 2's request has reached the sandbox (held there 1 s), not
    // after a fixed delay, which a loaded machine could overrun before anything was sent.
    const interrupted = waitFor(() => postsTo(sandbox) > 0, 10_000, "order 2's request at the sandbox").then(
      () => controller.abort(),
    );
    // Order 1 waits behind order 2 for the single slot when the interrupt comes.
    const reordered = [list[1]!, list[0]!, ...list.slice(2)];
    const run = await submit(reordered, {
      concurrency: 1,
      retryUnknown: true,
      signal: controller.signal,
      ledgerRoot,
    });
    await interrupted;
    expect(run.outcome.stopped?.kind).toBe('interrupted');
    expect(statusOf(run, externalId(2))?.status).toBe('created');
    expect(statusOf(run, externalId(1))).toMatchObject({
      status: 'not-sent',
      message: 'not sent: the import was interrupted',
    });
    expect(run.results.filter((r) => r.status === 'not-sent')).toHaveLength(19);
    expect(createdCounts(sandbox).has(externalId(1))).toBe(false);

    const ledger = await openLedger(ledgerRoot);
    expect(await ledger.lookup(externalId(1))).toMatchObject({
      status: 'in-doubt',
      reason: 'connection reset',
      input: INPUT,
      line: 1,
    });
    expect(await ledger.lookup(externalId(2))).toMatchObject({ status: 'created' });
    expect(await ledger.lookup(externalId(3))).toBeUndefined();
    await ledger.close();
  });

  it('stops at the first refusal of the credentials: nothing more is sent, and no claim is left', async () => {
    sandbox.setFaults({ latencyMs: 20 });
    const refused = clientFor(1, { token: 'not-a-valid-token' });
    try {
      const run = await submit(orders(10), { concurrency: 1, client: refused });
      expect(run.outcome.stopped?.kind).toBe('credentials');
      expect(statusOf(run, externalId(1))).toMatchObject({ status: 'failed', httpStatus: 401 });
      const rest = run.results.filter((r) => r.key !== externalId(1));
      expect(rest.map((r) => r.status)).toEqual(Array(9).fill('not-sent'));
      expect(rest.every((r) => r.message === 'not sent: the service refused the credentials')).toBe(true);
      expect(postsTo(sandbox)).toBe(1);
      const ledger = await openLedger(run.ledgerRoot);
      expect((await ledger.lookup(externalId(1)))?.status).toBe('not-created');
      // Orders claimed ahead of the request slot and not sent: as if never claimed.
      for (let i = 2; i <= 10; i++) expect(await ledger.lookup(externalId(i))).toBeUndefined();
      await ledger.close();
    } finally {
      await refused.close();
    }
  });

  it('stops when the service cannot be reached: the order is not sent and its earlier state stands', async () => {
    const unreachable = clientFor(2, { baseUrl: `http://127.0.0.1:${await closedPort()}`, maxRetries: 0 });
    const ledgerRoot = tempDir('ordercli-ledger-');
    // Refused earlier by the service: sendable, and still refused after this run.
    const earlier = await openLedger(ledgerRoot);
    const claim = await earlier.claim({ externalId: externalId(1), bodyHash: 'h' });
    earlier.failed((claim as { claim: Claim }).claim, { httpStatus: 422, message: 'invalid' });
    await earlier.close();
    try {
      const run = await submit(orders(6), { concurrency: 2, client: unreachable, ledgerRoot });
      expect(run.outcome.stopped?.kind).toBe('unreachable');
      expect(run.outcome.stopped?.error).toBeDefined();
      expect(run.results).toHaveLength(6);
      expect(run.results.every((r) => r.status === 'not-sent')).toBe(true);
      expect(statusOf(run, externalId(1))?.message).toMatch(/^not sent: /);
      const ledger = await openLedger(ledgerRoot);
      expect(await ledger.lookup(externalId(1))).toMatchObject({ status: 'not-created', message: 'invalid' });
      for (let i = 2; i <= 6; i++) expect(await ledger.lookup(externalId(i))).toBeUndefined();
      // Nothing of this run in the input's history: none of its orders left.
      expect(await ledger.list({ inputs: [INPUT] })).toEqual([]);
      await ledger.close();
    } finally {
      await unreachable.close();
    }
  });

  it('skips an order another command created (through the ledger), saying so', async () => {
    const ledgerRoot = tempDir('ordercli-ledger-');
    const other = await sendElsewhere(ledgerRoot, 2, 'created');
    await other.close();
    const run = await submit(orders(3), { concurrency: 2, ledgerRoot });
    expect(statusOf(run, externalId(2))).toMatchObject({
      status: 'skipped',
      id: 777,
      code: 'SO-777',
      httpStatus: 201,
    });
    expect(statusOf(run, externalId(2))?.message).toMatch(
      /^already created at .* by orders create \(id 777, code SO-777\)$/,
    );
    expect(statusOf(run, externalId(1))?.status).toBe('created');
    expect(statusOf(run, externalId(3))?.status).toBe('created');
    expect(createdCounts(sandbox).has(externalId(2))).toBe(false);
    expect(run.outcome.sent).toBe(2);
    // It stays orders create's, not this input's: the ledger refused the claim.
    const ledger = await openLedger(ledgerRoot);
    expect(await ledger.lookup(externalId(2))).toMatchObject({ status: 'created', by: 'orders create' });
    expect((await ledger.list({ inputs: [INPUT] })).map((listed) => listed.externalId).sort()).toEqual([
      externalId(1),
      externalId(3),
    ]);
    await ledger.close();
  });

  it('skips an order being sent right now by another live ordercli, and holds back one in doubt elsewhere', async () => {
    const ledgerRoot = tempDir('ordercli-ledger-');
    const busy = await sendElsewhere(ledgerRoot, 1, 'claimed');
    const doubt = await sendElsewhere(ledgerRoot, 2, 'unknown');
    await doubt.close();
    try {
      const run = await submit(orders(3), { concurrency: 2, ledgerRoot });
      expect(statusOf(run, externalId(1))?.status).toBe('skipped');
      expect(statusOf(run, externalId(1))?.message).toContain('being sent by another ordercli');
      expect(statusOf(run, externalId(1))?.message).toContain(`pid ${process.pid}`);
      expect(statusOf(run, externalId(2))?.status).toBe('unknown');
      expect(statusOf(run, externalId(2))?.message).toMatch(
        /sent with an unknown outcome \(connection reset\) .*; not sent: check at the service, then record what you found with ordercli orders resolve --created or --not-created \(or send it again with --retry-unknown\)$/,
      );
      expect(statusOf(run, externalId(3))?.status).toBe('created');
      expect(postsTo(sandbox)).toBe(1);
    } finally {
      await busy.close();
    }
  });

  it('from another input (another folder, a fresh CI workspace), sends nothing the ledger knows again', async () => {
    const ledgerRoot = tempDir('ordercli-ledger-');
    const list = orders(12);
    const first = await submit(list, { concurrency: 3, ledgerRoot });
    expect(first.results.filter((r) => r.status === 'created')).toHaveLength(12);
    expect(postsTo(sandbox)).toBe(12);
    // The same orders from an input of another name: the ledger still refuses, and says who sent them.
    const second = await submit(list, { concurrency: 3, ledgerRoot, input: 'elsewhere/orders.ndjson' });
    expect(second.results.map((r) => r.status)).toEqual(Array(12).fill('skipped'));
    expect(second.results.every((r) => r.message?.startsWith('already created at '))).toBe(true);
    expect(second.results.every((r) => r.message?.includes(`by orders import of ${INPUT}`))).toBe(true);
    expect(second.outcome.sent).toBe(0);
    expect(postsTo(sandbox)).toBe(12);
    expect([...createdCounts(sandbox).values()].every((count) => count === 1)).toBe(true);
  });

  it('a re-run of the same input skips what it created, and says when the order changed since', async () => {
    const ledgerRoot = tempDir('ordercli-ledger-');
    await submit(orders(3), { concurrency: 2, ledgerRoot });
    const changed = [order(1), { ...order(2), externalReference: 'PO-CHANGED' }, order(3)];
    const run = await submit(changed, { concurrency: 2, ledgerRoot });
    expect(run.results.map((r) => r.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(statusOf(run, externalId(1))?.message).toBe('already created by an earlier run');
    expect(statusOf(run, externalId(2))?.message).toBe(
      'already created by an earlier run; the order has changed in the input since, and was not sent again',
    );
    expect(postsTo(sandbox)).toBe(3);
  });

  it('sends again, with --retry-unknown, an order in doubt, and records the new claim over the doubt', async () => {
    const ledgerRoot = tempDir('ordercli-ledger-');
    const doubt = await sendElsewhere(ledgerRoot, 1, 'unknown');
    await doubt.close();
    const run = await submit(orders(2), { concurrency: 1, ledgerRoot, retryUnknown: true });
    expect(run.results.map((r) => r.status)).toEqual(['created', 'created']);
    const ledger = await openLedger(ledgerRoot);
    expect(await ledger.lookup(externalId(1))).toMatchObject({ status: 'created' });
    await ledger.close();
  });
});
