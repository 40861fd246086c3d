/**
 * `listen --inspect` over HTTP, without a browser (the page's own behaviour is driven in Chromium
 * by the browser test): who may reach the inspector, what its event stream carries (history from
 * --log, accepted and refused requests, forwarding attempts), that no key reaches the page, and
 * that Replay sends the recorded bytes and headers again with the key added back.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type ClientRequest, request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../src/core/redact.js';
import { shellWord as shellQuote } from '../../src/io/quote.js';
import { formatEventLine } from '../../src/webhooks/event-record.js';
import { type ListenReady, runListenSession } from '../../src/webhooks/listen-session.js';
import type { Rejection } from '../../src/webhooks/receiver.js';
import { runCli, tempDir } from '../support/cli.js';
import { type LocalApp, post, type RunningListen, startApp, startListen } from '../support/listen.js';
import { requireTool } from '../support/requirements.js';
import { waitFor } from '../support/wait.js';

const KEY = 'whk_inspector_test_key_0123456789';
const EVENT = 'sales_order_validated';
const BODY =
  '{"id":41,"code":"SO-2026-000041","customer":{"name":"Café Ünïcode"},"items":[{"sku":"A","qty":2}]}';
const INSPECTOR = /Inspector: (\S+)/;

interface StreamEvent {
  name: string;
  data: string;
}

/** An event-stream client that keeps every event it reads. */
function openEvents(url: string, headers: Record<string, string> = { 'x-ordercli-token': secret }) {
  const events: StreamEvent[] = [];
  let status: number | undefined;
  let buffer = '';
  const req: ClientRequest = request(url, { headers, agent: false }, (res) => {
    status = res.statusCode;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) name = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (data !== '') events.push({ name, data });
      }
    });
  });
  req.on('error', () => undefined);
  req.end();
  return {
    events,
    status: () => status,
    /** The JSON of every `event: request`. */
    requests: () => events.filter((e) => e.name === 'request').map((e) => JSON.parse(e.data)),
    forwards: () => events.filter((e) => e.name === 'forward').map((e) => JSON.parse(e.data)),
    close: () => req.destroy(),
  };
}

type Stream = ReturnType<typeof openEvents>;

const HAS_CURL = requireTool('curl', {
  what: 'the inspector refusing a plain curl (test/webhooks/inspector.test.ts)',
  missing: existsSync('/usr/bin/curl') ? undefined : 'no /usr/bin/curl',
  how: 'apt-get install -y curl',
});

/** What the curl of this machine prints (headers with -D -, then the body). */
function curl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('/usr/bin/curl', args, (error, stdout) => (error ? reject(error) : resolve(stdout))),
  );
}

let listen: RunningListen | undefined;
let app: LocalApp | undefined;
let stream: Stream | undefined;
afterEach(async () => {
  stream?.close();
  stream = undefined;
  await listen?.stop();
  listen = undefined;
  await app?.close();
  app = undefined;
});

/** The secret of the inspector last opened (the page sends it in `X-Ordercli-Token`). */
let secret = '';

/** Starts listen --inspect, and opens the printed address as a browser does: `page` is the address without the secret. */
async function startInspected(args: string[] = [], env: Record<string, string> = {}, globals: string[] = []) {
  const key = globals.includes('--profile') ? [] : ['--key', KEY];
  listen = await startListen([...key, '--inspect', '0', ...args], { env, globals });
  const printed = INSPECTOR.exec(listen.io.stderrText())![1]!;
  const page = `${new URL(printed).origin}/`;
  const opened = await post(printed, '', {}, 'GET');
  expect(opened.status).toBe(200);
  secret = new URL(printed).searchParams.get('token')!;
  return { listen, page, printed, port: new URL(page).port };
}

/** A request with the secret in its header, as the page's own requests carry it (`headers` may replace it). */
function ask(url: string, body: string, headers: Record<string, string>, method?: string) {
  return post(url, body, { 'x-ordercli-token': secret, ...headers }, method);
}

function replay(page: string, body: unknown, headers: Record<string, string>) {
  return ask(`${page}replay`, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
}

/** The same secret with its last character changed. */
function wrong(text: string): string {
  return `${text.slice(0, -1)}${text.endsWith('A') ? 'B' : 'A'}`;
}

describe('listen --inspect', () => {
  it('prints the page address with its secret before the ready line; the page itself holds no secret', async () => {
    const { listen, page, printed } = await startInspected();
    const stderr = listen.io.stderrText();
    expect(stderr.indexOf('Inspector: ')).toBeLessThan(stderr.indexOf('Ready: listening on'));
    expect(printed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    for (const url of [printed, page]) {
      const answer = await post(url, '', {}, 'GET');
      expect(answer.status, url).toBe(200);
      expect(answer.body).not.toContain(secret);
    }
  });

  it('needs the secret in X-Ordercli-Token for everything but the empty page: 403 without it, with a wrong one, or with it in a cookie', async () => {
    app = await startApp();
    const { page, port } = await startInspected(['--forward-to', app.url]);
    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    await waitFor(() => app!.received.length === 1, 10_000, 'the forwarded event');
    const asks: [string, string, string?][] = [
      ['GET', `${page}?token=${wrong(secret)}`],
      ['GET', `${page}?token=`],
      ['HEAD', `${page}?token=${wrong(secret)}`],
      ['GET', `${page}events`],
      ['GET', `${page}events?token=${secret}`],
      ['GET', `${page}command?seq=1`],
      ['GET', `${page}command?seq=1&token=${secret}`],
      ['GET', `${page}body?seq=1`],
      ['POST', `${page}replay`, JSON.stringify({ seq: 1 })],
      ['POST', `${page}replay?token=${secret}`, JSON.stringify({ seq: 1 })],
      ['GET', `${page}no-such-page`],
      ['POST', page],
    ];
    // What a browser could send by itself (a cookie of any name, even holding the secret) opens nothing.
    const credentials: Record<string, string>[] = [
      {},
      { 'x-ordercli-token': wrong(secret) },
      { 'x-ordercli-token': '' },
      { cookie: `ordercli-inspector-${port}=${secret}` },
      { cookie: `ordercli-inspector-token=${secret}; x-ordercli-token=${secret}` },
      { authorization: `Bearer ${secret}` },
    ];
    for (const given of credentials) {
      for (const [method, url, body] of asks) {
        const answer = await post(url, body ?? '', { 'content-type': 'application/json', ...given }, method);
        const what = `${method} ${url} with ${JSON.stringify(given)}`;
        expect(answer.status, what).toBe(403);
        expect(answer.headers['set-cookie'], what).toBeUndefined();
        for (const hidden of ['SO-2026-000041', secret, 'webhooks replay', '<script'])
          expect(answer.body, what).not.toContain(hidden);
      }
    }
    expect(app.received).toHaveLength(1);
    const refused = await post(`${page}events`, '', {}, 'GET');
    expect(refused.body).toContain('Open the inspector with the address listen printed on its terminal');
    expect(refused.body).not.toContain(secret);
    // The same requests with the secret in the header pass the gate (so the refusals above are its).
    expect((await ask(`${page}command?seq=1`, '', {}, 'GET')).status).toBe(200);
    expect((await ask(`${page}no-such-page`, '', {}, 'GET')).status).toBe(404);
    expect((await replay(page, { seq: 1 }, {})).status).toBe(200);
    expect(app.received).toHaveLength(2);
  });

  it('sets no cookie, ever: not with the printed address, not on any answer', async () => {
    app = await startApp();
    const { page, printed } = await startInspected(['--forward-to', app.url]);
    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    await waitFor(() => app!.received.length === 1, 10_000, 'the forwarded event');
    const answers = [
      await post(printed, '', {}, 'GET'),
      await post(printed, '', {}, 'HEAD'),
      await post(page, '', {}, 'GET'),
      await ask(page, '', {}, 'GET'),
      await ask(`${page}command?seq=1`, '', {}, 'GET'),
      await ask(`${page}body?seq=1`, '', {}, 'GET'),
      await replay(page, { seq: 1 }, {}),
      await ask(`${page}no-such-page`, '', {}, 'GET'),
      await post(`${page}events`, '', {}, 'GET'),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 404, 403]);
    for (const answer of answers) expect(answer.headers['set-cookie']).toBeUndefined();
    stream = openEvents(`${page}events`);
    await waitFor(() => stream!.requests().length === 1, 10_000, 'the stream');
    // The page is the same with or without the secret in the address: static, no data, no secret.
    const shown = (html: string) => html.replace(/nonce="[^"]*"/g, '');
    expect(shown(answers[0]!.body)).toBe(shown(answers[2]!.body));
    expect(answers[0]!.body).not.toContain('SO-2026-000041');
  });

  it.skipIf(!HAS_CURL)(
    'refuses a plain curl: an empty page, no stream, no command, no body, no replay',
    async () => {
      app = await startApp();
      const { page } = await startInspected(['--forward-to', app.url]);
      await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
      await waitFor(() => app!.received.length === 1, 10_000, 'the forwarded event');
      const empty = await curl(['-sS', '--max-time', '10', '-D', '-', page]);
      expect(empty).toMatch(/^HTTP\/1\.1 200 /);
      expect(empty).not.toContain('SO-2026-000041');
      expect(empty).not.toContain(secret);
      for (const path of ['events', 'command?seq=1', 'body?seq=1']) {
        const out = await curl(['-sS', '--max-time', '10', '-D', '-', `${page}${path}`]);
        expect(out, path).toMatch(/^HTTP\/1\.1 403 /);
        expect(out).not.toContain('SO-2026-000041');
      }
      const replayed = await curl([
        '-sS',
        '--max-time',
        '10',
        '-D',
        '-',
        '-X',
        'POST',
        '-H',
        'content-type: application/json',
        '--data',
        `{"seq":1,"url":"${app.url}"}`,
        `${page}replay`,
      ]);
      expect(replayed).toMatch(/^HTTP\/1\.1 403 /);
      expect(app.received).toHaveLength(1);
    },
  );

  it('listens on 127.0.0.1 whatever --host says, on its own port', async () => {
    const { listen, page } = await startInspected(['--host', '127.0.0.2']);
    expect(listen.url).toMatch(/^http:\/\/127\.0\.0\.2:/);
    expect(page).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(new URL(page).port).not.toBe(new URL(listen.url).port);
    // The receiver does not serve the page.
    expect((await post(listen.url, '', {}, 'GET')).status).toBe(405);
  });

  it('refuses any Host but 127.0.0.1:<port> and localhost:<port>', async () => {
    const { page, port } = await startInspected();
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1:${Number(port) + 1}`,
      '127.0.0.1',
    ]) {
      const answer = await ask(page, '', { host }, 'GET');
      expect(answer.status, host).toBe(403);
      expect(answer.body).not.toContain('<script');
    }
    const events = await ask(`${page}events`, '', { host: 'rebound.example' }, 'GET');
    expect(events.status).toBe(403);
    expect((await ask(`${page}events?x`, '', { host: 'rebound.example' }, 'GET')).status).toBe(403);
    expect((await ask(page, '', { host: `localhost:${port}` }, 'GET')).status).toBe(200);
    expect((await ask(page, '', { host: `127.0.0.1:${port}` }, 'GET')).status).toBe(200);
  });

  it('serves the page with a nonce CSP, nosniff, no-referrer, no-store, and no CORS header', async () => {
    const { page } = await startInspected();
    const answer = await ask(page, '', {}, 'GET');
    const csp = String(answer.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(answer.body).toContain(`<script nonce="${nonce}">`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    // No resource from elsewhere.
    expect(answer.body).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('replay needs the secret, a JSON body, and no foreign Origin', async () => {
    app = await startApp();
    const { page, port } = await startInspected(['--forward-to', app.url]);
    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    await waitFor(() => app!.received.length === 1, 10_000, 'the forwarded event');

    expect((await replay(page, { seq: 1 }, { 'x-ordercli-token': wrong(secret) })).status).toBe(403);
    expect((await replay(page, { seq: 1 }, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await replay(page, { seq: 1 }, { origin: `http://127.0.0.1:${Number(port) + 1}` })).status).toBe(
      403,
    );
    expect((await replay(page, { seq: 1 }, { origin: `http://localhost:${port}` })).status).toBe(403);
    const form = await ask(`${page}replay`, 'seq=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
    expect(app.received).toHaveLength(1);

    const ok = await replay(page, { seq: 1 }, { origin: `http://127.0.0.1:${port}` });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ ok: true, status: 200, url: app.url });
    expect(JSON.parse(ok.body).text).toMatch(/^200 OK in \d+ ms$/);
    expect(app.received).toHaveLength(2);
  });

  it('refuses event streams asked for by other origins', async () => {
    const { page } = await startInspected();
    stream = openEvents(`${page}events`, { 'x-ordercli-token': secret, origin: 'http://evil.example' });
    expect(await waitFor(() => stream!.status())).toBe(403);
  });

  it('streams the --log history, then accepted and refused requests as they come, with the console reason', async () => {
    const dir = tempDir();
    const log = join(dir, 'events.ndjson');
    const old = (n: number) =>
      formatEventLine(
        `2026-01-0${n}T10:00:00.000Z`,
        EVENT,
        { 'x-webhook-event': EVENT, 'x-webhook-key': '[redacted]' },
        Buffer.from(`{"id":${n},"code":"SO-OLD-${n}"}`),
        `{"id":${n},"code":"SO-OLD-${n}"}`,
        { id: n, code: `SO-OLD-${n}` },
      );
    writeFileSync(log, `${old(1)}\n${old(2)}\n`);
    const { page } = await startInspected(['--log', log]);

    stream = openEvents(`${page}events`);
    await waitFor(() => stream!.requests().length === 2, 10_000, 'the history');
    expect(stream.events[0]!.name).toBe('hello');
    expect(JSON.parse(stream.events[0]!.data)).toMatchObject({ logFile: log, forwarding: [] });
    expect(stream.requests().map((r) => [r.seq, r.source, r.status, r.code])).toEqual([
      [1, 'log', 200, 'SO-OLD-1'],
      [2, 'log', 200, 'SO-OLD-2'],
    ]);

    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY, 'x-trace': 't-1' });
    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': 'not-the-key' });
    await post(listen!.url, 'not json', { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    await waitFor(() => stream!.requests().length === 5, 10_000, 'three live requests');
    const [accepted, wrongKey, notJson] = stream.requests().slice(2);
    expect(accepted).toMatchObject({
      seq: 3,
      source: 'live',
      status: 200,
      event: EVENT,
      code: 'SO-2026-000041',
      body: BODY,
      replayable: true,
    });
    expect(accepted.headers['x-trace']).toBe('t-1');
    expect(accepted.headers['x-webhook-key']).toBe('[redacted]');
    expect(wrongKey).toMatchObject({ seq: 4, status: 401, event: EVENT, replayable: false, body: null });
    expect(wrongKey.headers['x-webhook-key']).toBe('[redacted]');
    expect(notJson).toMatchObject({ seq: 5, status: 400, body: 'not json' });
    // The reasons are the console's, word for word.
    const stderr = listen!.io.stderrText();
    expect(wrongKey.reason).toMatch(/^X-WEBHOOK-KEY differs/);
    expect(stderr).toContain(`POST / (${EVENT}): ${wrongKey.reason}`);
    expect(stderr).toContain(notJson.reason);

    // A page opened later gets the same history, this run's requests included.
    const later = openEvents(`${page}events`);
    await waitFor(() => later.requests().length === 5, 10_000, 'the history of a second page');
    later.close();
  });

  it('never sends the key to the page: not in the HTML, the stream, the command or the body download', async () => {
    app = await startApp();
    const { page } = await startInspected(['--forward-to', app.url]);
    stream = openEvents(`${page}events`);
    // The key also travels in another header and in the body: both reach the page masked.
    const body = JSON.stringify({ id: 1, code: 'SO-1', note: `key is ${KEY}` });
    await post(listen!.url, body, {
      'x-webhook-event': EVENT,
      'x-webhook-key': KEY,
      authorization: `Bearer ${KEY}`,
    });
    await post(listen!.url, body, { 'x-webhook-event': EVENT, 'x-webhook-key': `${KEY}x` });
    await waitFor(() => stream!.forwards().length >= 1 && stream!.requests().length === 2, 10_000, 'both');
    const html = (await ask(page, '', {}, 'GET')).body;
    const command = (await ask(`${page}command?seq=1`, '', {}, 'GET')).body;
    const download = (await ask(`${page}body?seq=1`, '', {}, 'GET')).body;
    const streamed = stream.events.map((e) => e.data).join('\n');
    for (const text of [html, streamed, command, download]) expect(text).not.toContain(KEY);
    expect(streamed).toContain('[redacted]');
    expect(JSON.parse(command).command).toContain('--key "$ORDERCLI_WEBHOOK_KEY"');
    // What the application got still has the key.
    expect(app.received[0]!.headers['x-webhook-key']).toBe(KEY);
  });

  it("copies a command without --key when listen read the profile's key: replay and trigger read it too", async () => {
    const ORDERCLI_CONFIG_DIR = tempDir('ordercli-config-');
    for (const profile of ['default', 'staging']) {
      const saved = await runCli(['--profile', profile, 'config', 'set', 'webhook-key', KEY], {
        env: { ORDERCLI_CONFIG_DIR },
      });
      expect(saved.code, saved.stderr).toBe(0);
    }
    for (const [profile, option] of [
      ['default', undefined],
      ['staging', '--profile staging'],
    ] as const) {
      const { page } = await startInspected([], { ORDERCLI_CONFIG_DIR }, ['--profile', profile]);
      stream = openEvents(`${page}events`);
      await post(listen!.url, '{"id":1}', { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
      await waitFor(() => stream!.requests().length === 1, 10_000, 'the request');
      const { parts } = JSON.parse((await ask(`${page}command?seq=1`, '', {}, 'GET')).body) as {
        parts: string[];
      };
      expect(parts.join(' ')).not.toContain('--key');
      expect(parts.filter((part) => part.startsWith('--profile'))).toEqual(
        option === undefined ? [] : [option],
      );
      stream.close();
      await listen!.stop();
      listen = undefined;
    }
  });

  it('shows each forwarding attempt with status, answer and duration, and replays the same bytes and headers with the key', async () => {
    app = await startApp();
    app.answer = (_request, index) => (index === 0 ? 503 : 200);
    const other = await startApp();
    try {
      const { page } = await startInspected(['--forward-to', app.url]);
      stream = openEvents(`${page}events`);
      await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY, 'x-trace': 'abc' });
      await waitFor(() => stream!.forwards().length === 2, 15_000, 'two forwarding attempts');
      const [first, second] = stream.forwards();
      expect(first).toMatchObject({ seq: 1, attempt: { attempt: 1, outcome: 'retrying', status: 503 } });
      expect(first.attempt.answer).toContain('app says no (503)');
      expect(second).toMatchObject({ seq: 1, attempt: { attempt: 2, outcome: 'delivered', status: 200 } });
      expect(typeof second.attempt.durationMs).toBe('number');

      const toTarget = await replay(page, { seq: 1 }, {});
      expect(JSON.parse(toTarget.body)).toMatchObject({ ok: true, status: 200, url: app.url });
      const toOther = await replay(page, { seq: 1, url: other.url }, {});
      expect(JSON.parse(toOther.body)).toMatchObject({ ok: true, status: 200, url: other.url });

      const forwarded = app.received[1]!;
      for (const replayed of [app.received[2]!, other.received[0]!]) {
        expect(replayed.body.equals(Buffer.from(BODY))).toBe(true);
        expect(replayed.headers['x-webhook-key']).toBe(KEY);
        expect(replayed.headers['x-trace']).toBe('abc');
        expect(replayed.headers['x-webhook-event']).toBe(EVENT);
        expect(replayed.headers['user-agent']).toBe(forwarded.headers['user-agent']);
      }
    } finally {
      await other.close();
    }
  });

  it('with a --forward-to per event: shows the routes, ties attempts to each queue, and replays an event to its own route', async () => {
    app = await startApp();
    const orders = await startApp();
    try {
      const { page } = await startInspected([
        '--forward-to',
        `${EVENT}=${orders.url}`,
        '--forward-to',
        `contact_updated=${app.url}`,
      ]);
      stream = openEvents(`${page}events`);
      const key = { 'x-webhook-key': KEY };
      await post(listen!.url, BODY, { ...key, 'x-webhook-event': EVENT });
      await post(listen!.url, '{"id":2}', { ...key, 'x-webhook-event': 'contact_updated' });
      await post(listen!.url, '{"id":3}', { ...key, 'x-webhook-event': 'packaging_updated' });
      // Both queues number their first entry 1: each attempt goes to its own request.
      await waitFor(() => stream!.forwards().length === 2, 15_000, 'one forward per route');
      expect(
        stream
          .forwards()
          .map((f) => f.seq)
          .sort(),
      ).toEqual([1, 2]);
      expect(JSON.parse(stream.events[0]!.data).forwarding).toEqual([
        { target: orders.url, receives: EVENT },
        { target: app.url, receives: 'contact_updated' },
      ]);
      await waitFor(() => stream!.requests().length === 3, 5_000, 'three requests');
      expect(stream.requests().map((r) => r.forwardTarget)).toEqual([orders.url, app.url, null]);

      const second = await replay(page, { seq: 2 }, {});
      expect(JSON.parse(second.body)).toMatchObject({ ok: true, url: app.url });
      const unrouted = await replay(page, { seq: 3 }, {});
      expect(unrouted.status).toBe(400);
      expect(JSON.parse(unrouted.body).text).toBe(
        'listen forwards no packaging_updated (no --forward-to for it): type the URL to replay to.',
      );
      expect(app.received.map((r) => r.body.toString())).toEqual(['{"id":2}', '{"id":2}']);
      expect(orders.received).toHaveLength(1);
    } finally {
      await orders.close();
    }
  });

  it('replays an event of the --log history, and says why it cannot replay a refused one or one without a target', async () => {
    const dir = tempDir();
    const log = join(dir, 'events.ndjson');
    app = await startApp();
    const raw = Buffer.from(BODY);
    writeFileSync(
      log,
      `${formatEventLine('2026-01-01T10:00:00.000Z', EVENT, { 'x-webhook-event': EVENT, 'x-custom': 'kept', 'x-webhook-key': '[redacted]' }, raw, BODY, JSON.parse(BODY))}\n`,
    );
    const { page } = await startInspected(['--log', log]);
    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': 'wrong' });

    const noTarget = await replay(page, { seq: 1 }, {});
    expect(noTarget.status).toBe(400);
    expect(JSON.parse(noTarget.body).text).toMatch(/no --forward-to: type the URL/);
    const refused = await replay(page, { seq: 2, url: app.url }, {});
    expect(refused.status).toBe(409);
    const badUrl = await replay(page, { seq: 1, url: 'file:///etc/passwd' }, {});
    expect(badUrl.status).toBe(400);
    expect(app.received).toHaveLength(0);

    const sent = await replay(page, { seq: 1, url: app.url }, {});
    expect(JSON.parse(sent.body)).toMatchObject({ ok: true, status: 200 });
    expect(app.received[0]!.body.equals(raw)).toBe(true);
    expect(app.received[0]!.headers['x-custom']).toBe('kept');
    expect(app.received[0]!.headers['x-webhook-key']).toBe(KEY);

    const command = JSON.parse(
      (await ask(`${page}command?seq=1&url=${encodeURIComponent(app.url)}`, '', {}, 'GET')).body,
    );
    const receivedAt = (
      JSON.parse(readFileSync(log, 'utf8').trim().split('\n')[0]!) as { receivedAt: string }
    ).receivedAt;
    expect(command.command).toBe(
      `ordercli webhooks replay ${shellQuote(log)} --url ${app.url} --key "$ORDERCLI_WEBHOOK_KEY" --event ${EVENT} --received-at ${receivedAt}`,
    );
  });

  it('shows a damaged line of the forwarding queue as the console does, to pages opened later too', async () => {
    app = await startApp();
    const dir = tempDir();
    const damaged = '{"type":"event","seq":1,"body":{"id":1 <- cut';
    writeFileSync(join(dir, 'forward-queue.ndjson'), `${damaged}\n`);
    const { listen } = await startInspected(['--forward-to', app.url, '--queue-dir', dir]);
    const page = `${new URL(INSPECTOR.exec(listen.io.stderrText())![1]!).origin}/`;
    stream = openEvents(`${page}events`);
    await waitFor(() => stream!.events.length > 0, 10_000, 'the hello event');
    const notices = JSON.parse(stream.events[0]!.data).notices as { level: string; text: string }[];
    expect(notices).toHaveLength(1);
    expect(notices[0]!.level).toBe('warning');
    expect(notices[0]!.text).toMatch(/^a line of the queue could not be read \(line 1\)/);
    expect(listen.io.stderrText()).toContain(`warning: ${notices[0]!.text}\n`);
  });

  it('shows an event --events leaves out as ignored (200, not replayable), and the subscriptions made', async () => {
    const { page } = await startInspected(['--events', EVENT]);
    stream = openEvents(`${page}events`);
    await waitFor(() => stream!.events.length > 0, 10_000, 'the hello event');
    await post(listen!.url, BODY, { 'x-webhook-event': 'contact_updated', 'x-webhook-key': KEY });
    await waitFor(() => stream!.requests().length === 1, 10_000, 'the ignored request');
    expect(stream.requests()[0]).toMatchObject({
      status: 200,
      event: 'contact_updated',
      replayable: false,
      reason: 'not in --events: answered 200, not logged nor forwarded',
    });
  });

  it('writes its commands as the user started ordercli (npx ordercli under npx)', async () => {
    const { page } = await startInspected(['--log', join(tempDir(), 'e.ndjson')], { npm_command: 'exec' });
    await post(listen!.url, BODY, { 'x-webhook-event': EVENT, 'x-webhook-key': KEY });
    const command = JSON.parse((await ask(`${page}command?seq=1`, '', {}, 'GET')).body).command;
    expect(command).toMatch(/^npx ordercli webhooks replay /);
  });

  it('takes a port (0 picks one) and refuses a bad or busy one with exit 2', async () => {
    const bad = await runCli(['listen', '--key', KEY, '--inspect', 'http']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--inspect takes a port from 0 to 65535');
    const same = await runCli(['listen', '--port', '4790', '--key', KEY, '--inspect', '4790']);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('--inspect needs a port of its own');
    const { port } = await startInspected();
    const busy = await runCli(['listen', '--port', '0', '--key', KEY, '--inspect', port]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain(`Port ${port} on 127.0.0.1 is not free for the inspector`);
    expect(busy.stderr).toContain('--inspect <port>');
  });
});

describe('listen without --inspect', () => {
  it('prints no inspector line and its session reports rejections as before, without their headers', async () => {
    listen = await startListen(['--key', KEY]);
    expect(listen.io.stderrText()).not.toContain('Inspector');

    const stop = new AbortController();
    const rejections: Rejection[] = [];
    let onReady: (ready: ListenReady) => void = () => undefined;
    const ready = new Promise<ListenReady>((resolve) => {
      onReady = resolve;
    });
    const ending = runListenSession({
      host: '127.0.0.1',
      port: 0,
      path: '/',
      verify: true,
      key: { key: KEY, source: '--key', trimmed: false },
      apiToken: undefined,
      redactor: new Redactor(),
      signal: stop.signal,
      on: {
        accepted: () => undefined,
        rejected: (rejection) => rejections.push(rejection),
        forwardAttempt: () => undefined,
        lockWait: () => undefined,
        subscribed: () => undefined,
        ready: onReady,
        stopped: () => undefined,
      },
    });
    const info = await ready;
    expect(info.inspectorUrl).toBeUndefined();
    await post(info.url, 'not json', { 'x-webhook-key': KEY });
    stop.abort();
    await ending;
    expect(rejections).toHaveLength(1);
    expect(Object.keys(rejections[0]!).sort()).toEqual([
      'event',
      'method',
      'path',
      'reason',
      'receivedAt',
      'status',
    ]);
  });
});
