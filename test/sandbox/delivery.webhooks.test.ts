import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
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
    expect(sandbox.deliveries.map((d) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
  });

  it('logs failed attempts when the receiver is down and gives up after the last attempt', async () => {
    const down = await startSandbox({
      port: 0,
      quiet: true,
      validationDelayMs: 20,
      deliveryAttempts: 2,
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
