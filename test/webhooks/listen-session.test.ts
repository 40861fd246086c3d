/**
 * The listen session on its own: what it makes durable before a 200, what it reports, and the
 * typed result it ends with (how it ended, the counts, the forwarding queue).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { UsageError } from '../../src/core/errors.js';
import { Redactor } from '../../src/core/redact.js';
import {
  type ListenEnding,
  type ListenReady,
  type ListenResult,
  type ListenSessionOptions,
  type ListenSubscription,
  type QueuedRoute,
  runListenSession,
} from '../../src/webhooks/listen-session.js';
import type { Rejection } from '../../src/webhooks/receiver.js';
import { tempDir } from '../support/cli.js';
import { type LocalApp, post, startApp } from '../support/listen.js';
import { useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const KEY = 'whk_session_test_key_0123456789';
const EVENT = 'sales_order_validated';
const NO_KEY = { key: undefined, source: 'none', trimmed: false };
const BODY = JSON.stringify({ id: 7, code: 'SO-2026-000007' });

/** Starts a session; resolves once it is ready, with what it reported so far and its end. */
async function startSession(options: Partial<ListenSessionOptions> = {}) {
  const stop = new AbortController();
  const seen = {
    accepted: 0,
    rejections: [] as Rejection[],
    ignored: [] as string[],
    subscribed: undefined as ListenSubscription | undefined,
  };
  let stopped: ListenResult | undefined;
  let onReady: (ready: ListenReady) => void = () => undefined;
  const ready = new Promise<ListenReady>((resolve) => {
    onReady = resolve;
  });
  const ending: Promise<ListenEnding> = runListenSession({
    host: '127.0.0.1',
    port: 0,
    path: '/hooks',
    verify: true,
    key: { key: KEY, source: '--key', trimmed: false },
    apiToken: undefined,
    redactor: new Redactor(),
    signal: stop.signal,
    on: {
      accepted: () => seen.accepted++,
      rejected: (rejection) => seen.rejections.push(rejection),
      ignored: (event) => seen.ignored.push(event.event ?? ''),
      forwardAttempt: () => undefined,
      lockWait: () => undefined,
      subscribed: (subscription) => {
        seen.subscribed = subscription;
      },
      ready: onReady,
      stopped: (result) => {
        stopped = result;
      },
    },
    ...options,
  });
  // A session that fails to start rejects `ending` before it is ready.
  const info = await Promise.race([ready, ending.then(() => Promise.reject(new Error('ended early')))]);
  return { info, seen, ending, stop: () => stop.abort(), stopped: () => stopped };
}

/** A plain --forward-to route: every event to `url`. */
function everyEvent(url: string, queueFile: string): QueuedRoute {
  return { target: new URL(url), events: [], others: true, queueFile };
}

let app: LocalApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('runListenSession', () => {
  it('logs and forwards what it accepts, and ends on Ctrl-C with the counts', async () => {
    app = await startApp();
    const dir = tempDir();
    const logFile = join(dir, 'events.ndjson');
    const session = await startSession({
      logFile,
      forward: { routes: [everyEvent(app.url, join(dir, 'queue.ndjson'))] },
    });
    expect(session.info.checkedKey?.source).toBe('--key');
    expect(session.info.logFile).toBe(logFile);
    expect(session.info.forwarding).toEqual([
      { target: app.url, receives: 'every event', queueFile: join(dir, 'queue.ndjson'), resumed: 0 },
    ]);

    const good = await post(session.info.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    const bad = await post(session.info.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': 'wrong' });
    expect([good.status, bad.status]).toEqual([200, 401]);
    await waitFor(() => app!.received.length === 1);

    session.stop();
    expect(await session.ending).toBe('interrupted');
    expect(session.seen.accepted).toBe(1);
    expect(session.seen.rejections.map((r) => r.status)).toEqual([401]);
    expect(session.stopped()).toEqual({
      ending: 'interrupted',
      accepted: 1,
      rejected: 1,
      ignored: 0,
      forwarding: { delivered: 1, refused: 0, waiting: [] },
    });
    const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).body).toEqual(JSON.parse(BODY));
    expect(app.received[0]!.headers['x-webhook-key']).toBe(KEY);
  });

  it('forwards each event on its route, one queue per target: a target that is down holds back only its own events', async () => {
    app = await startApp();
    const orders = await startApp();
    orders.answer = () => 503;
    const dir = tempDir();
    try {
      const session = await startSession({
        forward: {
          routes: [
            {
              target: new URL(orders.url),
              events: [EVENT],
              others: false,
              queueFile: join(dir, 'orders.ndjson'),
            },
            everyEvent(app.url, join(dir, 'others.ndjson')),
          ],
        },
      });
      expect(session.info.forwarding.map((f) => [f.target, f.receives, f.queueFile])).toEqual([
        [orders.url, EVENT, join(dir, 'orders.ndjson')],
        [app.url, 'every other event', join(dir, 'others.ndjson')],
      ]);
      const key = { 'x-webhook-key': KEY };
      await post(session.info.url, BODY, { ...key, 'x-webhook-event': EVENT });
      await post(session.info.url, '{"n":1}', { ...key, 'x-webhook-event': 'contact_updated' });
      await post(session.info.url, '{"n":2}', key);
      await waitFor(() => app!.received.length === 2 && orders.received.length >= 1);
      expect(app.received.map((r) => [r.headers['x-webhook-event'], r.body.toString()])).toEqual([
        ['contact_updated', '{"n":1}'],
        [undefined, '{"n":2}'],
      ]);
      expect(orders.received[0]!.body.toString()).toBe(BODY);
      session.stop();
      await session.ending;
      expect(session.stopped()?.forwarding).toEqual({
        delivered: 2,
        refused: 0,
        waiting: [{ queueFile: join(dir, 'orders.ndjson'), count: 1 }],
      });
    } finally {
      await orders.close();
    }
  });

  it('answers 200 and forwards nowhere an event no route takes (no default), and still logs it', async () => {
    app = await startApp();
    const dir = tempDir();
    const logFile = join(dir, 'events.ndjson');
    const session = await startSession({
      logFile,
      forward: {
        routes: [
          { target: new URL(app.url), events: [EVENT], others: false, queueFile: join(dir, 'q.ndjson') },
        ],
      },
    });
    const other = await post(session.info.url, '{"n":1}', { 'x-webhook-key': KEY, 'x-webhook-event': 'x' });
    await post(session.info.url, BODY, { 'x-webhook-key': KEY, 'x-webhook-event': EVENT });
    expect(other.status).toBe(200);
    await waitFor(() => app!.received.length === 1);
    session.stop();
    await session.ending;
    expect(app.received[0]!.headers['x-webhook-event']).toBe(EVENT);
    expect(readFileSync(logFile, 'utf8').trimEnd().split('\n')).toHaveLength(2);
    expect(session.stopped()).toMatchObject({ accepted: 2, forwarding: { delivered: 1, waiting: [] } });
  });

  it('with events, answers 200 to another event but neither logs, forwards nor counts it as accepted', async () => {
    app = await startApp();
    const dir = tempDir();
    const logFile = join(dir, 'events.ndjson');
    const session = await startSession({
      logFile,
      events: [EVENT],
      forward: { routes: [everyEvent(app.url, join(dir, 'queue.ndjson'))] },
    });
    const other = await post(session.info.url, BODY, {
      'x-webhook-event': 'contact_updated',
      'x-webhook-key': KEY,
    });
    const none = await post(session.info.url, BODY, { 'x-webhook-key': KEY });
    const wanted = await post(session.info.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    expect([other.status, none.status, wanted.status]).toEqual([200, 200, 200]);
    await waitFor(() => app!.received.length === 1);
    expect(session.seen.ignored).toEqual(['contact_updated', '']);
    expect(session.seen.accepted).toBe(1);
    expect(app.received[0]!.headers['x-webhook-event']).toBe(EVENT);
    session.stop();
    await session.ending;
    const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line).event)).toEqual([EVENT]);
  });

  it("ends as 'done' when `until` resolves, and as 'timeout' when its time runs out first", async () => {
    const done = await startSession({ until: Promise.resolve(), untilMs: 60_000 });
    expect(await done.ending).toBe('done');
    expect(done.stopped()?.ending).toBe('done');

    const late = await startSession({ until: new Promise(() => undefined), untilMs: 20 });
    expect(await late.ending).toBe('timeout');
    expect(late.stopped()).toEqual({ ending: 'timeout', accepted: 0, rejected: 0, ignored: 0 });
  });

  it('a busy port is a usage error, and nothing is reported as stopped', async () => {
    const first = await startSession();
    const port = Number(new URL(first.info.url).port);
    let stopped = false;
    const second = runListenSession({
      host: '127.0.0.1',
      port,
      path: '/',
      verify: false,
      key: NO_KEY,
      apiToken: undefined,
      redactor: new Redactor(),
      signal: new AbortController().signal,
      on: {
        accepted: () => undefined,
        rejected: () => undefined,
        forwardAttempt: () => undefined,
        lockWait: () => undefined,
        subscribed: () => undefined,
        ready: () => undefined,
        stopped: () => {
          stopped = true;
        },
      },
    });
    await expect(second).rejects.toThrow(UsageError);
    await expect(second).rejects.toThrow(`Port ${port} on 127.0.0.1 is already in use`);
    expect(stopped).toBe(false);
    first.stop();
    await first.ending;
  });
});

describe('runListenSession --subscribe', () => {
  const sandbox = useSandbox();

  it('learns the key from the subscription answer when none was given, and checks it', async () => {
    const redactor = new Redactor();
    const api = new ApiClient({
      baseUrl: sandbox.url,
      token: sandbox.tokens.full,
      timeoutMs: 10_000,
      userAgent: 'ordercli-test',
      redactor,
    });
    const session = await startSession({
      key: NO_KEY,
      redactor,
      subscribe: { api, events: [EVENT], publicUrl: new URL('http://127.0.0.1:9/elsewhere') },
    });
    expect(session.seen.subscribed).toMatchObject({
      event: EVENT,
      status: 200,
      keyFromAnswer: true,
      pathMismatch: true,
    });
    expect(session.info.checkedKey?.source).toBe('the subscription answer');
    const headers = { 'x-webhook-event': EVENT };
    expect(
      (await post(session.info.url, BODY, { ...headers, 'x-webhook-key': sandbox.webhookKey })).status,
    ).toBe(200);
    expect((await post(session.info.url, BODY, { ...headers, 'x-webhook-key': KEY })).status).toBe(401);
    session.stop();
    expect(await session.ending).toBe('interrupted');
    await api.close();
  });
});
