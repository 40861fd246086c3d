import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../src/io/free-port.js';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';
import { VERSION } from '../../src/version.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { call, partnerOrder, useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const sandbox = useSandbox({ webhookKey: 'whk_test_key', validationDelayMs: 20, deliveryBackoffMs: 20 });
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

async function subscribe(token: string, url: string, event = 'sales_order_validated') {
  return call(sandbox, 'PUT', '/api/v1/webhooks', { token, body: { event, url } });
}

describe('webhook subscriptions', () => {
  it('lists the events available to each caller', async () => {
    const forPartner = await call(sandbox, 'GET', '/api/v1/webhooks/available', {
      token: sandbox.tokens.partner,
    });
    expect(forPartner.body).toEqual([{ event: 'sales_order_validated', description: expect.any(String) }]);
    const forFull = await call(sandbox, 'GET', '/api/v1/webhooks/available', { token: sandbox.tokens.full });
    expect((forFull.body as Array<{ event: string }>).map((e) => e.event)).toEqual([
      'sales_order_validated',
      'contact_updated',
      'packaging_updated',
    ]);
  });

  it('subscribes with 200 {id, event, url, key}; the same event and URL again updates, not duplicates', async () => {
    const first = await subscribe(sandbox.tokens.partner, receiver.url);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      id: 1,
      event: 'sales_order_validated',
      url: receiver.url,
      key: 'whk_test_key',
    });
    const again = await subscribe(sandbox.tokens.partner, receiver.url);
    expect(again.body).toEqual(first.body);
    const list = await call(sandbox, 'GET', '/api/v1/webhooks', { token: sandbox.tokens.partner });
    expect(list.body).toEqual([first.body]);
    expect(
      (await call(sandbox, 'GET', '/api/v1/webhooks/1', { token: sandbox.tokens.partner })).body,
    ).toEqual(first.body);
  });

  it('answers 422 to an invalid subscription and to an event the caller may not subscribe to', async () => {
    const badUrl = await subscribe(sandbox.tokens.partner, 'ftp://example.test/hook');
    expect(badUrl.status).toBe(422);
    expect((badUrl.body as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual(['url']);
    const notAllowed = await subscribe(sandbox.tokens.partner, receiver.url, 'contact_updated');
    expect(notAllowed.status).toBe(422);
    expect(notAllowed.body).toMatchObject({
      errors: [{ field: 'event', message: expect.stringMatching(/not available/) }],
    });
    expect((await subscribe(sandbox.tokens.full, receiver.url, 'contact_updated')).status).toBe(200);
  });
});

describe('sales_order_validated deliveries', () => {
  it('POSTs the validated order to each subscriber with the exact headers and the key', async () => {
    await subscribe(sandbox.tokens.partner, receiver.url);
    const created = await call(sandbox, 'POST', '/api/v1/orders', {
      token: sandbox.tokens.partner,
      body: partnerOrder('WH-1'),
    });
    const order = created.body as { id: number; code: string };
    const [notification] = await receiver.waitFor(1);

    expect(notification!.method).toBe('POST');
    expect(notification!.url).toBe('/hook');
    const headers = notification!.headers;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-webhook-event']).toBe('sales_order_validated');
    expect(headers['x-webhook-key']).toBe('whk_test_key');
    expect(headers['user-agent']).toBe(`ordercli-sandbox/${VERSION}`);
    expect(headers.authorization).toBeUndefined();
    expect(notification!.body).toMatchObject({
      id: order.id,
      code: order.code,
      externalId: 'WH-1',
      externalReference: 'CMD-WH-1',
      status: 'validated',
      validatedAt: expect.any(String),
      customer: { name: 'Maison Rousseau' },
      items: [
        { line: 1, internalReferenceId: 401, orderedQuantity: 2 },
        { line: 2, internalReferenceId: 403, orderedQuantity: 1 },
      ],
    });
    await waitFor(() => sandbox.deliveries.length === 1, 10_000, 'the delivery');
    expect(sandbox.deliveries[0]).toMatchObject({
      event: 'sales_order_validated',
      url: receiver.url,
      status: 200,
      attempt: 1,
      code: order.code,
    });
    expect(JSON.stringify(sandbox.deliveries)).not.toContain('whk_test_key');
  });

  it('retries with back-off while the receiver fails, sending the same bytes', async () => {
    await subscribe(sandbox.tokens.partner, receiver.url);
    receiver.failNext(500, 503);
    await call(sandbox, 'POST', '/api/v1/orders', {
      token: sandbox.tokens.partner,
      body: partnerOrder('WH-2'),
    });
    const received = await receiver.waitFor(3);
    expect(received[1]!.rawBody.equals(received[0]!.rawBody)).toBe(true);
    expect(received[2]!.rawBody.equals(received[0]!.rawBody)).toBe(true);
    await waitFor(() => sandbox.deliveries.length === 3, 10_000, 'three deliveries');
    expect(sandbox.deliveries.map((d) => [d.attempt, d.status, d.retryInMs])).toEqual([
      [1, 500, 20],
      [2, 503, 40],
      [3, 200, undefined],
    ]);
  });

  it('logs failed attempts when the receiver is down and gives up after the last attempt', async () => {
    const down = await startSandbox({
      port: 0,
      quiet: true,
      validationDelayMs: 20,
      deliveryRetries: 1,
      deliveryBackoffMs: 10,
    });
    try {
      const gone = await startReceiver();
      await gone.close();
      await call(down, 'PUT', '/api/v1/webhooks', {
        token: down.tokens.partner,
        body: { event: 'sales_order_validated', url: gone.url },
      });
      await call(down, 'POST', '/api/v1/orders', { token: down.tokens.partner, body: partnerOrder('WH-3') });
      await waitFor(() => down.deliveries.length === 2, 10_000, 'two attempts');
      expect(down.deliveries.map((d) => d.attempt)).toEqual([1, 2]);
      for (const delivery of down.deliveries) {
        expect(delivery.status).toBeUndefined();
        expect(delivery.error).toMatch(/ECONNREFUSED/);
      }
      // Nothing is left to run (no retry waiting, no attempt in flight): the two attempts were all.
      await waitFor(() => down.pending().deliveries === 0, 10_000, 'the deliveries settled');
      expect(down.pending()).toEqual({ validations: 0, deliveries: 0 });
      expect(down.deliveries).toHaveLength(2);
    } finally {
      await down.close();
    }
  });

  it('delivers to every subscriber of the event', async () => {
    const second = await startReceiver();
    try {
      await subscribe(sandbox.tokens.partner, receiver.url);
      await subscribe(sandbox.tokens.partner, second.url);
      const created = await call(sandbox, 'POST', '/api/v1/orders', {
        token: sandbox.tokens.partner,
        body: partnerOrder('WH-4'),
      });
      const order = created.body as { id: number; code: string };
      const [first] = await receiver.waitFor(1);
      const [other] = await second.waitFor(1);
      for (const notification of [first!, other!]) {
        expect(notification.headers['x-webhook-key']).toBe('whk_test_key');
        expect(notification.headers['x-webhook-event']).toBe('sales_order_validated');
        expect(notification.body).toMatchObject({
          id: order.id,
          code: order.code,
          externalId: 'WH-4',
          status: 'validated',
        });
      }
      // Both got the same bytes, once each.
      expect(other!.rawBody.equals(first!.rawBody)).toBe(true);
      await waitFor(() => sandbox.deliveries.length === 2, 10_000, 'two deliveries');
      expect(receiver.received).toHaveLength(1);
      expect(second.received).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('uses a random key by default', async () => {
    const a = await startSandbox({ port: 0, quiet: true });
    const b = await startSandbox({ port: 0, quiet: true });
    try {
      expect(a.webhookKey).toMatch(/^whk_[0-9a-f]{48}$/);
      expect(a.webhookKey).not.toBe(b.webhookKey);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

/** A sandbox of one test, with fast retries, subscribed to `url`. */
async function subscribedSandbox(url: string, options: SandboxOptions = {}): Promise<Sandbox> {
  const own = await startSandbox({
    port: 0,
    quiet: true,
    validationDelayMs: 1,
    deliveryBackoffMs: 5,
    ...options,
  });
  const subscribed = await call(own, 'PUT', '/api/v1/webhooks', {
    token: own.tokens.partner,
    body: { event: 'sales_order_validated', url },
  });
  expect(subscribed.status).toBe(200);
  return own;
}

/** Waits until the sandbox has nothing left to do, then returns its delivery log. */
async function settledDeliveries(own: Sandbox) {
  await waitFor(
    () => own.pending().validations === 0 && own.pending().deliveries === 0,
    10_000,
    'the deliveries settled',
  );
  return own.deliveries;
}

/**
 * A receiver whose first `resets` connections are reset as soon as they open (a receiver that
 * crashes or refuses), and whose later ones reach an HTTP server answering 200.
 */
async function resettingReceiver(resets: number): Promise<{ url: string; close(): Promise<void> }> {
  let connections = 0;
  const http: Server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const tcp: TcpServer = createTcpServer((socket) => {
    connections++;
    if (connections <= resets) socket.resetAndDestroy();
    else http.emit('connection', socket);
  });
  tcp.listen(0, '127.0.0.1');
  await once(tcp, 'listening');
  const { port } = tcp.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hook`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

describe('delivery retries (--delivery-retries)', () => {
  it('retries a receiver that resets the first two connections: the third attempt gets through', async () => {
    const flaky = await resettingReceiver(2);
    const own = await subscribedSandbox(flaky.url, { deliveryBackoffMs: 10 });
    try {
      await call(own, 'POST', '/api/v1/orders', { token: own.tokens.partner, body: partnerOrder('RT-1') });
      const deliveries = await settledDeliveries(own);
      expect(deliveries.map((d) => [d.attempt, d.status, d.retryInMs])).toEqual([
        [1, undefined, 10],
        [2, undefined, 20],
        [3, 200, undefined],
      ]);
      expect(deliveries[0]!.error).toMatch(/ECONNRESET|socket/i);
    } finally {
      await own.close();
      await flaky.close();
    }
  });

  it('delivers to a receiver that starts late, after two refused attempts', async () => {
    const port = await freeLoopbackPort();
    const url = `http://127.0.0.1:${port}/hook`;
    let lateServer: Server | undefined;
    const received: string[] = [];
    const own = await subscribedSandbox(url, {
      // Told of each attempt before its retry is scheduled: the receiver starts after the second
      // refusal, and binds before any timer (the retry) can fire.
      quiet: false,
      onDelivery: (entry) => {
        if (entry.attempt !== 2 || lateServer) return;
        lateServer = createHttpServer((req, res) => {
          req.resume();
          req.on('end', () => {
            received.push(String(req.headers['x-webhook-event']));
            res.end('ok');
          });
        });
        lateServer.listen(port, '127.0.0.1');
      },
    });
    try {
      await call(own, 'POST', '/api/v1/orders', { token: own.tokens.partner, body: partnerOrder('RT-2') });
      const deliveries = await settledDeliveries(own);
      expect(deliveries.map((d) => [d.attempt, d.status])).toEqual([
        [1, undefined],
        [2, undefined],
        [3, 200],
      ]);
      expect(deliveries[0]!.error).toMatch(/ECONNREFUSED/);
      expect(received).toEqual(['sales_order_validated']);
    } finally {
      await own.close();
      if (lateServer) await new Promise<void>((resolve) => lateServer!.close(() => resolve()));
    }
  });

  it('makes one attempt only with deliveryRetries 0', async () => {
    const own = await subscribedSandbox(receiver.url, { deliveryRetries: 0 });
    try {
      receiver.failNext(503);
      await call(own, 'POST', '/api/v1/orders', { token: own.tokens.partner, body: partnerOrder('RT-3') });
      const deliveries = await settledDeliveries(own);
      expect(deliveries.map((d) => [d.attempt, d.status, d.retryInMs])).toEqual([[1, 503, undefined]]);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await own.close();
    }
  });

  it('takes a 4xx answer as final (a wrong key will not change), and retries 5xx, 408 and 429', async () => {
    const own = await subscribedSandbox(receiver.url);
    try {
      receiver.failNext(401);
      await call(own, 'POST', '/api/v1/orders', { token: own.tokens.partner, body: partnerOrder('RT-4') });
      expect((await settledDeliveries(own)).map((d) => [d.attempt, d.status])).toEqual([[1, 401]]);

      own.reset();
      await call(own, 'PUT', '/api/v1/webhooks', {
        token: own.tokens.partner,
        body: { event: 'sales_order_validated', url: receiver.url },
      });
      receiver.failNext(408, 429, 502);
      await call(own, 'POST', '/api/v1/orders', { token: own.tokens.partner, body: partnerOrder('RT-5') });
      expect((await settledDeliveries(own)).map((d) => [d.attempt, d.status])).toEqual([
        [1, 408],
        [2, 429],
        [3, 502],
        [4, 200],
      ]);
    } finally {
      await own.close();
    }
  });

  it('gives up after the default 3 retries, waiting 0.5 s, 1 s and 2 s by default', async () => {
    const port = await freeLoopbackPort();
    // The default back-off, read from the log rather than waited for: the retries are cut short
    // by closing the sandbox once the first attempt is logged.
    const own = await subscribedSandbox(`http://127.0.0.1:${port}/hook`, { deliveryBackoffMs: undefined });
    try {
      await call(own, 'POST', '/api/v1/orders', { token: own.tokens.partner, body: partnerOrder('RT-6') });
      await waitFor(() => own.deliveries.length === 1, 10_000, 'the first attempt');
      expect(own.deliveries[0]).toMatchObject({ attempt: 1, retryInMs: 500 });
    } finally {
      await own.close();
    }
    const fast = await subscribedSandbox(`http://127.0.0.1:${port}/hook`, { deliveryBackoffMs: 1 });
    try {
      await call(fast, 'POST', '/api/v1/orders', { token: fast.tokens.partner, body: partnerOrder('RT-7') });
      const deliveries = await settledDeliveries(fast);
      expect(deliveries.map((d) => [d.attempt, d.retryInMs])).toEqual([
        [1, 1],
        [2, 2],
        [3, 4],
        [4, undefined],
      ]);
    } finally {
      await fast.close();
    }
  });

  it('refuses a retry count or a back-off out of range', async () => {
    await expect(startSandbox({ port: 0, quiet: true, deliveryRetries: -1 })).rejects.toThrow(RangeError);
    await expect(startSandbox({ port: 0, quiet: true, deliveryRetries: 1.5 })).rejects.toThrow(RangeError);
    await expect(startSandbox({ port: 0, quiet: true, deliveryBackoffMs: -5 })).rejects.toThrow(RangeError);
  });
});
