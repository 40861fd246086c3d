import { beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { call, partnerOrder, useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 20, deliveryBackoffMs: 20 });
let token: string;

beforeAll(() => {
  token = sandbox.tokens.partner;
});

const postOrder = (externalId: string) =>
  call(sandbox, 'POST', '/api/v1/orders', { token, body: partnerOrder(externalId) });
const orderPosts = () => sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/orders');

describe('scripted faults', () => {
  it('reset-before-read: the connection is reset and nothing is processed', async () => {
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read' }]);
    await expect(postOrder('R-1')).rejects.toThrow();
    expect(sandbox.orders()).toHaveLength(0);
    expect(orderPosts()).toEqual([expect.objectContaining({ fault: 'reset-before-read' })]);
    expect(orderPosts()[0]!.status).toBeUndefined();
    expect(orderPosts()[0]!.body).toBeUndefined();

    expect((await postOrder('R-1')).status).toBe(201);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('reset-after: the order IS created, validated and notified, but the client gets no answer', async () => {
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-after-response-computed' }]);
    await expect(postOrder('R-2')).rejects.toThrow();
    expect(sandbox.orders().map((order) => order.externalId)).toEqual(['R-2']);
    expect(orderPosts()).toEqual([expect.objectContaining({ fault: 'reset-after', computedStatus: 201 })]);
    expect(orderPosts()[0]!.status).toBeUndefined();
    expect(orderPosts()[0]!.body).toMatchObject({ externalId: 'R-2' });
    await waitFor(() => sandbox.orders()[0]!.status === 'validated', 10_000, 'the validation');
  });

  it('status: answers the given status with Retry-After, `times` times, without processing', async () => {
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 7, times: 2 },
    ]);
    for (let i = 0; i < 2; i++) {
      const response = await postOrder('S-1');
      expect(response.status).toBe(429);
      expect(response.headers['retry-after']).toBe('7');
      expect(response.headers['content-type']).toBe('application/problem+json');
      expect(response.body).toMatchObject({ status: 429, title: 'Too Many Requests' });
    }
    expect((await postOrder('S-1')).status).toBe(201);
    expect(sandbox.orders()).toHaveLength(1);
    expect(orderPosts().map((r) => [r.status, r.fault])).toEqual([
      [429, 'status'],
      [429, 'status'],
      [201, undefined],
    ]);
    // The body of a refused request is still logged, so a test can check that a retry resent it.
    expect(orderPosts()[0]!.body).toEqual(orderPosts()[2]!.body);
  });

  it('status: 503 and 500 carry no Retry-After unless asked', async () => {
    sandbox.scriptFaults([
      { path: '/api/v1/orders', kind: 'status', status: 503 },
      { path: '/api/v1/orders', kind: 'status', status: 500 },
      { path: '/api/v1/orders', kind: 'status', status: 503, retryAfter: 2 },
    ]);
    const first = await postOrder('S-2');
    expect([first.status, first.headers['retry-after']]).toEqual([503, undefined]);
    const second = await postOrder('S-2');
    expect([second.status, second.headers['retry-after']]).toEqual([500, undefined]);
    expect(second.body).toMatchObject({ status: 500, detail: expect.stringMatching(/not processed/) });
    const third = await postOrder('S-2');
    expect([third.status, third.headers['retry-after']]).toEqual([503, '2']);
  });

  it('matches rules by method and path (exact or pattern); other requests pass', async () => {
    sandbox.scriptFaults([
      { method: 'GET', path: /^\/api\/v1\/orders\/\d+$/, kind: 'status', status: 503 },
      { method: 'POST', path: '/api/v1/contact_references', kind: 'status', status: 500 },
    ]);
    const created = await postOrder('M-1');
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    expect((await call(sandbox, 'GET', '/api/v1/orders', { token })).status).toBe(200);
    expect((await call(sandbox, 'GET', `/api/v1/orders/${id}`, { token })).status).toBe(503);
    expect((await call(sandbox, 'GET', `/api/v1/orders/${id}`, { token })).status).toBe(200);
  });

  it('delay: answers normally, later', async () => {
    sandbox.scriptFaults([{ path: '/api/v1/packaging_references', kind: 'delay', delayMs: 150 }]);
    const started = performance.now();
    const response = await call(sandbox, 'GET', '/api/v1/packaging_references', { token });
    expect(response.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(sandbox.requests[0]).toMatchObject({ fault: 'delay', status: 200 });
  });

  it('delay until a promise: the answer waits for it, whatever the time', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'delay', until: gate }]);
    let answered = false;
    const held = postOrder('H-1').then((response) => {
      answered = true;
      return response;
    });
    // A second request, not held, is answered while the first still waits.
    await waitFor(() => orderPosts().length === 1, 10_000, 'the POST');
    expect((await postOrder('H-2')).status).toBe(201);
    expect(answered).toBe(false);
    // Processed on arrival, answered once released.
    expect(sandbox.orders().map((order) => order.externalId)).toContain('H-1');
    release();
    expect((await held).status).toBe(201);
  });

  it('refuses a rule with a nonsensical count', () => {
    expect(() => sandbox.scriptFaults([{ kind: 'status', times: 0 }])).toThrow(RangeError);
  });
});

describe('random faults', () => {
  it('failRate 1 answers 500 with a JSON body, only under /api/v1', async () => {
    sandbox.setFaults({ failRate: 1 });
    const response = await postOrder('F-1');
    expect(response.status).toBe(500);
    expect(response.body).toMatchObject({ status: 500 });
    expect((await call(sandbox, 'GET', '/health')).status).toBe(404);
    expect(sandbox.orders()).toHaveLength(0);
    sandbox.setFaults({ failRate: 0 });
    expect((await postOrder('F-1')).status).toBe(201);
  });

  it('throttleRate 1 answers 429 with the configured Retry-After', async () => {
    sandbox.setFaults({ throttleRate: 1, retryAfterSeconds: 3 });
    const response = await call(sandbox, 'GET', '/api/v1/shipping_modes', { token });
    expect(response.status).toBe(429);
    expect(response.headers['retry-after']).toBe('3');
  });

  it('resetRate 1 resets every request, before or after processing', async () => {
    sandbox.setFaults({ resetRate: 1 });
    const attempts = 20;
    for (let i = 0; i < attempts; i++) await expect(postOrder(`RR-${i}`)).rejects.toThrow();
    const kinds = orderPosts().map((r) => r.fault);
    expect(kinds).toHaveLength(attempts);
    expect(new Set(kinds)).toEqual(new Set(['reset-before-read', 'reset-after']));
    // Exactly the requests reset after processing created an order.
    expect(sandbox.orders()).toHaveLength(kinds.filter((kind) => kind === 'reset-after').length);
  });

  it('latencyMs delays every API answer', async () => {
    sandbox.setFaults({ latencyMs: 100 });
    const started = performance.now();
    await call(sandbox, 'GET', '/api/v1/shipping_modes', { token });
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });

  it('refuses rates outside 0..1', () => {
    expect(() => sandbox.setFaults({ failRate: 1.5 })).toThrow(RangeError);
    expect(() => sandbox.setFaults({ latencyMs: -1 })).toThrow(RangeError);
  });

  it('starts with the faults given as options', async () => {
    const faulty = await startSandbox({ port: 0, quiet: true, throttleRate: 1, retryAfterSeconds: 5 });
    try {
      const response = await call(faulty, 'GET', '/api/v1/shipping_modes', { token: faulty.tokens.full });
      expect([response.status, response.headers['retry-after']]).toEqual([429, '5']);
    } finally {
      await faulty.close();
    }
  });
});
