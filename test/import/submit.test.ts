// submitOrders with a real ApiClient, a real journal and the sandbox: the guarantees of the
// sending step that the CLI tests cannot see from outside (in-flight bound, order, durability).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { Redactor } from '../../src/core/redact.js';
import { OrderJournal } from '../../src/import/journal.js';
import type { OrderResult } from '../../src/import/report.js';
import { submitOrders } from '../../src/import/submit.js';
import type { ValidatedOrder } from '../../src/import/types.js';
import { tempDir } from '../support/cli.js';
import { createdCounts, externalId, orders, postsTo, readLines } from '../support/orders.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

function clientFor(connections: number): ApiClient {
  return new ApiClient({
    baseUrl: sandbox.url,
    token: sandbox.tokens.partner,
    timeoutMs: 10_000,
    userAgent: 'ordercli-test',
    redactor: new Redactor(),
    connections,
  });
}

function itemsOf(list: Record<string, unknown>[]): ValidatedOrder[] {
  return list.map((body, index) => ({
    source: {
      index,
      externalId: body.externalId as string,
      order: body,
      location: { file: 'orders.ndjson', line: index + 1, endLine: index + 1 },
      raw: body,
      problems: [],
      needsProductResolution: false,
    },
    body,
    problems: [],
  }));
}

interface Run {
  results: OrderResult[];
  outcome: Awaited<ReturnType<typeof submitOrders>>;
  journalPath: string;
}

async function submit(
  list: Record<string, unknown>[],
  options: {
    concurrency: number;
    client?: Pick<ApiClient, 'request'>;
    signal?: AbortSignal;
    retryUnknown?: boolean;
    journalPath?: string;
  },
): Promise<Run> {
  const journalPath = options.journalPath ?? join(tempDir(), 'j.ndjson');
  const journal = await OrderJournal.open(journalPath, { baseUrl: sandbox.url });
  const client = clientFor(options.concurrency);
  const results: OrderResult[] = [];
  try {
    const outcome = await submitOrders(itemsOf(list), {
      client: options.client ?? client,
      journal,
      concurrency: options.concurrency,
      retryUnknown: options.retryUnknown,
      signal: options.signal ?? new AbortController().signal,
      onResult: (result) => results.push(result),
    });
    return { results, outcome, journalPath };
  } finally {
    await journal.close();
    await client.close();
  }
}

describe('submitOrders', () => {
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
      const { results } = await submit(orders(40), { concurrency: 5, client: counting });
      expect(results.filter((r) => r.status === 'created')).toHaveLength(40);
      expect(peak).toBe(5);
    } finally {
      await real.close();
    }
  });

  it('sends in input order, each request only once its `sending` record is in the journal file', async () => {
    const real = clientFor(4);
    const list = orders(30);
    let journalPath = '';
    const violations: string[] = [];
    const checking: Pick<ApiClient, 'request'> = {
      request: (method, path, options) => {
        const id = (JSON.parse(String(options?.rawBody)) as { externalId: string }).externalId;
        const onDisk = readFileSync(journalPath, 'utf8').includes(`"event":"sending","externalId":"${id}"`);
        if (!onDisk) violations.push(id);
        return real.request(method, path, options);
      },
    };
    try {
      journalPath = join(tempDir(), 'j.ndjson');
      const run = await submit(list, { concurrency: 4, client: checking, journalPath });
      expect(violations).toEqual([]);
      const sending = readLines(run.journalPath)
        .filter((r) => r.event === 'sending')
        .map((r) => r.externalId);
      expect(sending).toEqual(list.map((o) => o.externalId));
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
    const client = clientFor(4);
    try {
      sandbox.scriptFaults([
        { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 2, times: 1 },
        { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 1, times: 1 },
      ]);
      const [first, second, third] = orders(3);
      const t0 = Date.now();
      // The first request is answered (429, 2 s) only after 500 ms.
      sandbox.setFaults({ latencyMs: 500 });
      const slow = client.post('/api/v1/orders', first);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // The second is answered at once (429, 1 s): the pause now lasts until about t0 + 1050 ms.
      sandbox.setFaults({ latencyMs: 0 });
      const quick = client.post('/api/v1/orders', second);
      await new Promise((resolve) => setTimeout(resolve, 100));
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
    const dir = tempDir();
    const journalPath = join(dir, 'j.ndjson');
    const list = orders(20);
    // An earlier run left order 1 unknown.
    const earlier = await OrderJournal.open(journalPath, { baseUrl: sandbox.url });
    await earlier.sending(externalId(1), 'h');
    earlier.unknown(externalId(1), 'connection reset');
    await earlier.close();

    sandbox.setFaults({ latencyMs: 1000 });
    const controller = new AbortController();
    // The interrupt comes once order 2's request has reached the sandbox (held there 1 s), not
    // after a fixed delay, which a loaded machine could overrun before anything was sent.
    const watch = setInterval(() => {
      if (postsTo(sandbox) > 0) {
        clearInterval(watch);
        controller.abort();
      }
    }, 5);
    // Order 1 waits behind order 2 for the single slot when the interrupt comes.
    const reordered = [list[1]!, list[0]!, ...list.slice(2)];
    const run = await submit(reordered, {
      concurrency: 1,
      retryUnknown: true,
      signal: controller.signal,
      journalPath,
    });
    clearInterval(watch);
    expect(run.outcome.stopped?.kind).toBe('interrupted');
    expect(run.results.find((r) => r.externalId === externalId(2))?.status).toBe('created');
    expect(run.results.find((r) => r.externalId === externalId(1))).toMatchObject({ status: 'not-sent' });
    expect(createdCounts(sandbox).has(externalId(1))).toBe(false);

    const after = await OrderJournal.open(journalPath, { baseUrl: sandbox.url });
    expect(after.stateOf(externalId(1))).toMatchObject({ event: 'unknown', reason: 'connection reset' });
    expect(after.stateOf(externalId(3))).toBeUndefined();
    await after.close();
  });
});
