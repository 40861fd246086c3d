/** The receiver under slow, half-open and oversized clients: it answers, closes, and stays bounded. */
import { afterEach, describe, expect, it } from 'vitest';
import { type Rejection, startWebhookReceiver, type WebhookReceiver } from '../../src/webhooks/receiver.js';
import { WebhookKeyVerifier } from '../../src/webhooks/verify.js';
import { post, rawExchange } from '../support/listen.js';
import { waitFor } from '../support/wait.js';

const KEY = 'whk_abuse_test_key';
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function start(extra: { headersTimeoutMs?: number; requestTimeoutMs?: number } = {}) {
  const rejections: Rejection[] = [];
  receiver = await startWebhookReceiver({
    host: '127.0.0.1',
    port: 0,
    path: '/',
    verifier: new WebhookKeyVerifier(KEY),
    onRejected: (r) => rejections.push(r),
    ...extra,
  });
  return { receiver, rejections };
}

describe('receiver under abuse', () => {
  it('closes a client that never finishes its headers (408)', async () => {
    const { receiver, rejections } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const answer = await rawExchange(receiver.url, 'POST / HTTP/1.1\r\nHost: x\r\nX-Webhook-', 5_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    await waitFor(() => rejections.some((r) => r.status === 408));
  });

  it('closes a client that stalls in the middle of its body (408)', async () => {
    const { receiver } = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const answer = await rawExchange(
      receiver.url,
      `POST / HTTP/1.1\r\nHost: x\r\nX-Webhook-Key: ${KEY}\r\nContent-Length: 100\r\n\r\n{"code":`,
      5_000,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('stops taking connections when it stops, and drains the request in flight', async () => {
    const accepted: string[] = [];
    let release: (() => void) | undefined;
    receiver = await startWebhookReceiver({
      host: '127.0.0.1',
      port: 0,
      path: '/',
      verifier: new WebhookKeyVerifier(KEY),
      // A slow disk: the 200 waits for it.
      persist: (_event, done) => {
        release = () => done();
      },
      onAccepted: (e) => accepted.push(e.line),
    });
    const inFlight = post(receiver.url, '{"code":"A"}', { 'x-webhook-key': KEY });
    await waitFor(() => release !== undefined, 5_000, 'the request to reach persist');
    const closing = receiver.close(5_000);
    // Stopped: a new connection is refused while the first request is still waiting for its disk.
    await expect(post(receiver.url, '{"code":"B"}', { 'x-webhook-key': KEY })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    release!();
    expect((await inFlight).status).toBe(200);
    await closing;
    expect(accepted).toHaveLength(1);
  });

  it('answers 500 (never 200) when the event cannot be recorded', async () => {
    receiver = await startWebhookReceiver({
      host: '127.0.0.1',
      port: 0,
      path: '/',
      verifier: new WebhookKeyVerifier(KEY),
      persist: (_event, done) => setImmediate(() => done(new Error('ENOSPC: no space left on device'))),
    });
    const answer = await post(receiver.url, '{"code":"A"}', { 'x-webhook-key': KEY });
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body).error).toBe('could not record the event: ENOSPC: no space left on device');
  });

  it('rejects headers too large (431)', async () => {
    const { receiver } = await start();
    const answer = await rawExchange(
      receiver.url,
      `POST / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
  });
});
