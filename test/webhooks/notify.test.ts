import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import {
  buildSalesOrderValidatedBody,
  isRetryableStatus,
  notificationHeaders,
  sendNotification,
} from '../../src/webhooks/notify.js';
import { type Receiver, startReceiver } from '../support/receiver.js';

let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
beforeEach(() => {
  receiver.received.length = 0;
});
afterAll(() => receiver.close());

describe('sendNotification', () => {
  it('POSTs the JSON of an object with the service headers and returns the answer', async () => {
    const result = await sendNotification({
      url: receiver.url,
      event: 'sales_order_validated',
      key: 'k-1',
      body: { id: 10001, code: 'SO-2026-000001' },
    });
    expect(result).toMatchObject({ status: 200, bodyText: 'ok' });
    expect(result.headers['content-type']).toBe('text/plain');
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const [received] = receiver.received;
    expect(received!.method).toBe('POST');
    expect(received!.rawBody.toString()).toBe('{"id":10001,"code":"SO-2026-000001"}');
    expect(received!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-webhook-event': 'sales_order_validated',
      'x-webhook-key': 'k-1',
      'user-agent': `ordercli-sandbox/${VERSION}`,
    });
    expect(received!.headers['user-agent']).toMatch(/^[\w.-]+\/[\w.+-]+$/);
  });

  it('sends bytes and text unchanged (replay is byte-for-byte)', async () => {
    const bytes = Buffer.from('{ "code" : "SO-1",\n  "note": "crème brûlée" }\n', 'utf8');
    await sendNotification({ url: receiver.url, event: 'e', key: 'k', body: bytes });
    await sendNotification({ url: receiver.url, event: 'e', key: 'k', body: bytes.toString('utf8') });
    expect(receiver.received[0]!.rawBody.equals(bytes)).toBe(true);
    expect(receiver.received[1]!.rawBody.equals(bytes)).toBe(true);
  });

  it('replays original headers, except hop-by-hop ones; the given event and key always win', async () => {
    await sendNotification({
      url: receiver.url,
      event: 'sales_order_validated',
      key: 'the-new-key',
      body: '{}',
      headers: {
        'User-Agent': 'OrderService/4.2',
        'X-Request-Id': 'abc',
        'X-WEBHOOK-KEY': '[redacted]',
        'X-Webhook-Event': 'other_event',
        Host: 'service.example',
        'Content-Length': '999',
        Connection: 'close',
        'Transfer-Encoding': 'chunked',
        'Keep-Alive': 'timeout=5',
      },
    });
    const { headers } = receiver.received[0]!;
    expect(headers['user-agent']).toBe('OrderService/4.2');
    expect(headers['x-request-id']).toBe('abc');
    expect(headers['x-webhook-key']).toBe('the-new-key');
    expect(headers['x-webhook-event']).toBe('sales_order_validated');
    expect(headers.host).toBe(new URL(receiver.url).host);
    expect(headers['content-length']).toBe('2');
    expect(headers['keep-alive']).toBeUndefined();
    expect(headers['transfer-encoding']).toBeUndefined();
  });

  it('sends no key header at all when no key is given (forwarding without verification)', async () => {
    await sendNotification({
      url: receiver.url,
      event: 'sales_order_validated',
      key: undefined,
      body: '{}',
      headers: { 'x-webhook-key': '[redacted]' },
    });
    expect(receiver.received[0]!.headers['x-webhook-key']).toBeUndefined();
  });

  it('reads at most maxResponseBytes of the answer', async () => {
    const result = await sendNotification({
      url: receiver.url,
      event: 'e',
      key: 'k',
      body: {},
      maxResponseBytes: 1,
    });
    expect(result.bodyText).toBe('o');
  });

  it('lets an explicit user agent win over the replayed one', () => {
    const headers = notificationHeaders({
      event: 'e',
      key: 'k',
      headers: { 'user-agent': 'Old/1' },
      userAgent: 'ordercli/1.2.3',
    });
    expect(headers['user-agent']).toBe('ordercli/1.2.3');
  });

  it('rejects when the receiver does not answer in time, and when it is down', async () => {
    const silent = await import('node:http').then(({ createServer }) => createServer(() => {}));
    silent.listen(0, '127.0.0.1');
    await new Promise((resolve) => silent.once('listening', resolve));
    try {
      const { port } = silent.address() as { port: number };
      await expect(
        sendNotification({
          url: `http://127.0.0.1:${port}/`,
          event: 'e',
          key: 'k',
          body: {},
          timeoutMs: 100,
        }),
      ).rejects.toThrow();
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
    await expect(
      sendNotification({ url: 'http://127.0.0.1:9/', event: 'e', key: 'k', body: {} }),
    ).rejects.toThrow();
  });
});

describe('buildSalesOrderValidatedBody', () => {
  it('mirrors the order with code, id, status validated and timestamps', () => {
    const body = buildSalesOrderValidatedBody(
      {
        id: 10001,
        code: 'SO-2026-000001',
        status: 'pending',
        externalId: 'EXT-1',
        contact: { internalReferenceId: 301 },
        items: [{ internalReferenceId: 401, orderedQuantity: 2 }],
        createdAt: '2026-03-01T10:00:00.000Z',
        shippingMode: { id: 2 },
      },
      new Date('2026-03-01T10:00:01.000Z'),
    );
    expect(body).toEqual({
      id: 10001,
      code: 'SO-2026-000001',
      externalId: 'EXT-1',
      externalReference: null,
      status: 'validated',
      createdAt: '2026-03-01T10:00:00.000Z',
      validatedAt: '2026-03-01T10:00:01.000Z',
      contact: { internalReferenceId: 301 },
      customer: null,
      invoicingAddress: null,
      deliveryAddress: null,
      items: [{ line: 1, internalReferenceId: 401, orderedQuantity: 2 }],
      shippingMode: { id: 2 },
    });
    expect(Object.keys(body).slice(0, 5)).toEqual([
      'id',
      'code',
      'externalId',
      'externalReference',
      'status',
    ]);
  });
});

describe('isRetryableStatus (the rule of listen --forward-to and of the sandbox deliveries)', () => {
  it('retries 5xx, 408, 425 and 429; any other answer is final', () => {
    const retried = [408, 425, 429, 500, 502, 503, 504, 599];
    const final = [200, 204, 301, 304, 400, 401, 403, 404, 409, 410, 413, 422, 426, 428, 499];
    expect(retried.filter((status) => !isRetryableStatus(status))).toEqual([]);
    expect(final.filter((status) => isRetryableStatus(status))).toEqual([]);
  });
});
