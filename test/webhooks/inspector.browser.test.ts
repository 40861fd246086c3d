/**
 * `listen --inspect` in a real Chromium, through the built binary (`npm run build` first): the
 * page shows the `--log` history and then each request live, refused ones with their reason; the
 * key never reaches it; Replay sends the same bytes again with the key; other hosts and origins
 * are refused; the browser holds no cookie, so a page of another server on 127.0.0.1 (cookies
 * ignore ports) gets nothing from it; the filters hide rows. It leaves a screenshot in test/.output/inspector.png (and,
 * with ORDERCLI_UPDATE_DOC_SCREENSHOT=1, docs/images/listen-inspect.png for the README).
 *
 * Without a Chromium (see test/support/chromium.ts) it does not run, and says so in one SKIPPED
 * line that `npm test` repeats in its summary; with `CI` set it fails instead, saying how to get one.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEventLine, recordedHeaders } from '../../src/webhooks/event-record.js';
import { findChromium, HOW_TO_GET_CHROMIUM, launchChromium } from '../support/chromium.js';
import { ROOT, runBin, tempDir } from '../support/cli.js';
import { freePort, type LocalApp, type RunningBin, spawnListen, startApp } from '../support/listen.js';
import { requireTool } from '../support/requirements.js';
import { waitFor } from '../support/wait.js';

const chromium = findChromium();
const hasChromium = requireTool('Chromium', {
  what: "the inspector's browser test (listen --inspect in Chromium, test/webhooks/inspector.browser.test.ts)",
  missing: chromium.path === undefined ? chromium.why : undefined,
  how: HOW_TO_GET_CHROMIUM,
  ciRequired: true,
});

const KEY = `whk_inspector_${randomBytes(16).toString('hex')}`;
const WRONG_KEY = `whk_wrong_${randomBytes(8).toString('hex')}`;
/** A host name Chromium resolves to 127.0.0.1 (a DNS rebinding attacker's page, as the browser sees it). */
const REBOUND_HOST = 'rebind.test';
const OUTPUT = join(ROOT, 'test/.output');
const DOC_SCREENSHOT = join(ROOT, 'docs/images/listen-inspect.png');

const row = (attributes: string) => `[data-testid="event-row"]${attributes}`;
const id = (testId: string) => `[data-testid="${testId}"]`;

/** A notification body as an application would pretty-print it: several lines, non-ASCII text. */
function prettyBody(code: string, extra: Record<string, unknown> = {}): Buffer {
  const body = {
    id: 10_101,
    code,
    externalId: `EXT-${code}`,
    status: 'validated',
    customer: { name: 'Épicerie fine Lefèvre' },
    items: [
      { internalReferenceId: 401, orderedQuantity: 24, label: 'Bière blonde 33 cl' },
      { internalReferenceId: 402, orderedQuantity: 2, label: 'Pack de 6 bouteilles' },
    ],
    ...extra,
  };
  return Buffer.from(`${JSON.stringify(body, null, 2)}\n`, 'utf8');
}

interface OtherSite {
  url: string;
  /** Every request this server received: what the browser sent it. */
  received: { method: string; url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/**
 * Another local server, on 127.0.0.1 at another port (cookies ignore ports: a cookie of the
 * inspector would come here too). Its page tries, with the browser's credentials, every way a page
 * can reach the inspector: fetch (cors and no-cors), images, and (driven by the test) a form POST to
 * Replay; what it could read is left in `window.attempts`.
 */
async function startOtherSite(inspector: string, seq: number): Promise<OtherSite> {
  const received: OtherSite['received'] = [];
  const server: Server = createServer((req, res) => {
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    if (req.url !== '/') {
      res.writeHead(404).end();
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(attackPage(inspector, site.url, seq));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const site: OtherSite = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return site;
}

interface SentRequest {
  method: string;
  path: string;
  /** The headers Chromium put on the wire (cookies included). */
  headers: Record<string, string>;
  status: number | undefined;
}

/**
 * Records, through the DevTools protocol, every request the tab puts on the wire to `origin`, with
 * its headers and the status answered (one stopped before sending, after a failed preflight, is
 * left out).
 */
async function watchRequests(tab: Page, origin: string) {
  const session: CDPSession = await tab.context().newCDPSession(tab);
  const byId = new Map<string, SentRequest>();
  const entry = (requestId: string) => {
    let found = byId.get(requestId);
    if (found === undefined) {
      found = { method: '', path: '', headers: {}, status: undefined };
      byId.set(requestId, found);
    }
    return found;
  };
  session.on('Network.requestWillBeSent', (event) => {
    const one = entry(event.requestId);
    one.method = event.request.method;
    one.path = event.request.url;
  });
  session.on('Network.requestWillBeSentExtraInfo', (event) => {
    const one = entry(event.requestId);
    for (const [name, value] of Object.entries(event.headers))
      one.headers[name.toLowerCase()] = String(value);
  });
  session.on('Network.responseReceivedExtraInfo', (event) => {
    entry(event.requestId).status = event.statusCode;
  });
  await session.send('Network.enable');
  const start = origin.replace(/\/$/, '');
  return {
    list: (): SentRequest[] =>
      [...byId.values()]
        .filter((one) => one.path.startsWith(`${start}/`) && Object.keys(one.headers).length > 0)
        .map((one) => ({ ...one, path: one.path.slice(start.length) })),
    stop: () => session.detach(),
  };
}

function attackPage(inspector: string, self: string, seq: number): string {
  const replayTo = JSON.stringify({ seq, url: `${self}/replayed` });
  return `<!doctype html><title>another local site</title>
<form id="replay-form" method="POST" action="${inspector}/replay" enctype="text/plain">
<input name='{"seq":${seq},"url":"${self}/replayed","x":"' value='"}'></form>
<script>
(async () => {
  const attempts = {};
  const attempt = async (name, url, init) => {
    try {
      const res = await fetch(url, { credentials: 'include', ...init });
      attempts[name] = { type: res.type, status: res.status, text: res.type === 'opaque' ? '' : await res.text() };
    } catch (error) {
      attempts[name] = { error: String(error) };
    }
  };
  for (const path of ['/', '/events', '/command?seq=${seq}', '/body?seq=${seq}']) {
    await attempt('cors ' + path, '${inspector}' + path, {});
    if (path !== '/events') await attempt('no-cors ' + path, '${inspector}' + path, { mode: 'no-cors' });
  }
  await attempt('replay json', '${inspector}/replay', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(replayTo)},
  });
  for (const body of [${JSON.stringify(replayTo)}, '{"seq":${seq}}'])
    await attempt('replay no-cors ' + body, '${inspector}/replay', {
      method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body,
    });
  for (const path of ['/', '/body?seq=${seq}'])
    attempts['img ' + path] = await new Promise((resolve) => {
      const img = new Image();
      img.onload = () => resolve('load');
      img.onerror = () => resolve('error');
      img.src = '${inspector}' + path;
    });
  attempts.cookie = document.cookie;
  attempts.sessionStorage = JSON.stringify(sessionStorage);
  window.attempts = attempts;
})();
</script>`;
}

describe.skipIf(!hasChromium)('listen --inspect in Chromium', () => {
  const dir = tempDir('ordercli-inspect-');
  const logFile = join(dir, 'events.ndjson');
  const history = { code: 'SO-2026-000042', event: 'sales_order_validated' };
  const live = {
    code: 'SO-2026-000101',
    event: 'sales_order_validated',
    bytes: prettyBody('SO-2026-000101'),
  };
  const other = { code: 'SO-2026-000102', event: 'sales_order_cancelled' };
  const refusedCode = 'SO-2026-000666';
  let app: LocalApp;
  /** Where `--forward-to sales_order_cancelled=` sends the other event. */
  let cancelled: LocalApp;
  let listen: RunningBin;
  let inspectPort: number;
  let pageUrl: string;
  /** The address listen prints: pageUrl with the secret. */
  let openUrl: string;
  const damagedLine = '{"type":"event","seq":1,"body":{"id":1 <- cut';
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    // A forwarding queue whose one line was cut: the page warns of it.
    mkdirSync(join(dir, 'queue'));
    writeFileSync(join(dir, 'queue', 'forward-queue.ndjson'), `${damagedLine}\n`);
    // What --log already holds from an earlier run: the page shows it first.
    const historyBody = { id: 10_042, code: history.code, externalId: 'EXT-HISTORY' };
    const historyText = JSON.stringify(historyBody);
    writeFileSync(
      logFile,
      `${formatEventLine(
        '2026-11-23T08:00:00.000Z',
        history.event,
        recordedHeaders([
          'Content-Type',
          'application/json',
          'X-WEBHOOK-EVENT',
          history.event,
          'X-WEBHOOK-KEY',
          KEY,
        ]),
        Buffer.from(historyText),
        historyText,
        historyBody,
      )}\n`,
    );
    app = await startApp();
    cancelled = await startApp();
    inspectPort = await freePort();
    pageUrl = `http://127.0.0.1:${inspectPort}/`;
    listen = await spawnListen(
      [
        '--port',
        '0',
        '--key',
        KEY,
        '--log',
        logFile,
        '--forward-to',
        app.url,
        '--forward-to',
        `${other.event}=${cancelled.url}`,
        '--inspect',
        String(inspectPort),
        '--queue-dir',
        join(dir, 'queue'),
      ],
      {},
      dir,
    );
    openUrl = /Inspector: (\S+)/.exec(listen.stderr())![1]!;
    browser = await launchChromium(chromium.path!, [`--host-resolver-rules=MAP ${REBOUND_HOST} 127.0.0.1`]);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: pageUrl.slice(0, -1) });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    if (listen && listen.child.exitCode === null) {
      listen.child.kill('SIGINT');
      await listen.exited;
    }
    await app?.close();
    await cancelled?.close();
  });

  /** The header the page sends with each request: the secret of the printed address. */
  function secretHeader(): { 'x-ordercli-token': string } {
    return { 'x-ordercli-token': new URL(openUrl).searchParams.get('token')! };
  }

  /** Posts one notification to the receiver with a real HTTP client. */
  async function notify(body: Buffer, headers: Record<string, string>): Promise<number> {
    const answer = await request(listen.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    await answer.body.text();
    return answer.statusCode;
  }

  /** The rows the list shows (filters applied), top to bottom, as `status code`. */
  function visibleRows(): Promise<string[]> {
    return page
      .locator(row(':visible'))
      .evaluateAll((rows) =>
        rows.map(
          (element) => `${element.getAttribute('data-status')} ${element.getAttribute('data-code') ?? ''}`,
        ),
      );
  }

  it('is nothing to a browser without the printed secret: an empty page that says so', async () => {
    const stranger = await browser.newContext();
    try {
      const tab = await stranger.newPage();
      for (const url of [`${pageUrl}?token=not-the-secret`, `${pageUrl}events`]) {
        const answer = await tab.goto(url);
        expect(answer?.status(), url).toBe(403);
        expect(await tab.content()).not.toContain(history.code);
      }
      expect((await tab.goto(pageUrl))?.status()).toBe(200);
      await expect.poll(() => tab.locator(id('status-line')).textContent()).toBe('no access');
      expect(await tab.locator('#no-selection').textContent()).toContain(
        'open the address listen printed on its terminal',
      );
      expect(await tab.content()).not.toContain(history.code);
      expect(await tab.locator(row('')).count()).toBe(0);
      expect(await stranger.cookies()).toEqual([]);
    } finally {
      await stranger.close();
    }
  });

  it("prints the page's address with its secret; opening it sets no cookie, keeps the secret in the tab's sessionStorage and drops it from the address bar", async () => {
    expect(openUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${inspectPort}/\\?token=[A-Za-z0-9_-]{43}$`));
    const answer = await page.goto(openUrl);
    expect(answer?.status()).toBe(200);
    expect(await answer?.headerValue('set-cookie')).toBeNull();
    await expect.poll(() => page.url()).toBe(pageUrl);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate('Object.values(sessionStorage)')).toEqual([
      secretHeader()['x-ordercli-token'],
    ]);
    await expect.poll(() => page.locator(id('status-line')).textContent()).toBe('live');
    // A reload (no secret in the address) shows the page again, live: the tab kept the secret.
    expect((await page.reload())?.status()).toBe(200);
    await expect.poll(() => page.locator(id('status-line')).textContent()).toBe('live');
    expect(await context.cookies()).toEqual([]);
  });

  it('warns of the damaged line of the forwarding queue, as the console does', async () => {
    const warning = await page
      .locator(`${id('notices')} li`)
      .first()
      .textContent();
    expect(warning).toMatch(/a line of the queue could not be read \(line 1\)/);
    expect(listen.stderr()).toContain(`warning: ${warning}`);
  });

  it('shows the --log history', async () => {
    await expect.poll(() => page.locator(id('status-line')).textContent()).toContain('live');
    const first = page.locator(row(`[data-code="${history.code}"]`));
    await first.waitFor();
    expect(await first.getAttribute('data-status')).toBe('200');
    expect(await first.getAttribute('data-event')).toBe(history.event);
  });

  it('shows events as they arrive, without a reload', async () => {
    // A reload would lose this mark.
    await page.evaluate('window.ordercliTestMark = 1');
    expect(await notify(live.bytes, { 'x-webhook-event': live.event, 'x-webhook-key': KEY })).toBe(200);
    const liveRow = page.locator(row(`[data-code="${live.code}"]`));
    await liveRow.waitFor();
    expect(await liveRow.getAttribute('data-status')).toBe('200');
    expect(await liveRow.getAttribute('data-event')).toBe(live.event);
    expect(await liveRow.textContent()).toContain(live.code);

    // One through the binary, as the service sends it.
    const triggered = await runBin([
      'webhooks',
      'trigger',
      'sales_order_validated',
      '--url',
      listen.url,
      '--key',
      KEY,
    ]);
    expect(triggered.code, triggered.stderr).toBe(0);
    expect(
      await notify(prettyBody(other.code, { status: 'cancelled' }), {
        'x-webhook-event': other.event,
        'x-webhook-key': KEY,
      }),
    ).toBe(200);
    await page.locator(row(`[data-code="${other.code}"]`)).waitFor();
    await expect.poll(() => page.locator(row('[data-status="200"]')).count()).toBe(4);

    const seqs = await page
      .locator(row(''))
      .evaluateAll((rows) => rows.map((element) => Number(element.getAttribute('data-seq'))));
    expect([...seqs].sort((a, b) => a - b)).toEqual([1, 2, 3, 4]);
    expect(await page.evaluate('window.ordercliTestMark')).toBe(1);
  });

  it('shows a refused request with the reason the console prints', async () => {
    expect(
      await notify(Buffer.from(`{"code":"${refusedCode}"}`), {
        'x-webhook-event': live.event,
        'x-webhook-key': WRONG_KEY,
      }),
    ).toBe(401);
    const reason = await waitFor(
      () => /rejected 401 .*?: (.+)$/m.exec(listen.stderr())?.[1],
      10_000,
      'the console line of the refused request',
    );
    const refused = page.locator(row('[data-status="401"]'));
    await refused.waitFor();
    expect(await refused.textContent()).toContain(reason.trim());
  });

  it('shows the headers with the key redacted, the body searchable, and the forwarding attempts', async () => {
    const liveRow = page.locator(row(`[data-code="${live.code}"]`));
    await liveRow.click();
    await expect.poll(() => liveRow.getAttribute('aria-selected')).toBe('true');

    const headers = page.locator(id('detail-headers'));
    await expect.poll(() => headers.textContent()).toContain(live.event);
    const keyValue = await headers.locator('tr', { hasText: /x-webhook-key/i }).textContent();
    expect(keyValue).toContain('[redacted]');

    const body = page.locator(id('detail-body'));
    await expect.poll(() => body.textContent()).toContain('Épicerie fine Lefèvre');
    await page.locator(id('body-search')).fill('Lefèvre');
    await expect.poll(() => body.locator('mark').count()).toBeGreaterThan(0);
    expect(await body.locator('mark').first().textContent()).toMatch(/Lefèvre/i);

    const attempt = page.locator(`${id('forward-attempts')} ${id('forward-attempt')}`).first();
    await attempt.waitFor();
    expect(await attempt.getAttribute('data-status')).toBe('200');
    expect(await attempt.textContent()).toMatch(/thanks[\s\S]*\d+ ?ms|\d+ ?ms[\s\S]*thanks/);
  });

  it('never puts the key in the page: HTML, DOM text, the event stream', async () => {
    expect(await page.content()).not.toContain(KEY);
    expect(await page.locator('html').textContent()).not.toContain(KEY);
    const html = await request(pageUrl, { headers: secretHeader() });
    expect(html.statusCode).toBe(200);
    expect(await html.body.text()).not.toContain(KEY);

    // The stream's history holds every request so far; read until the last one, then stop.
    const abort = new AbortController();
    const stream = await request(`${pageUrl}events`, { signal: abort.signal, headers: secretHeader() });
    expect(stream.statusCode).toBe(200);
    expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/);
    let text = '';
    try {
      for await (const chunk of stream.body) {
        text += chunk.toString();
        if (text.split('event: request').length > 5) break;
      }
    } finally {
      abort.abort();
    }
    expect(text).toContain('event: request');
    expect(text).toContain(live.code);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(WRONG_KEY);
  });

  it('Replay sends the same bytes again to the forward target, with the key', async () => {
    // The forwarded copies of the accepted live events first (the cancelled one has its own route).
    await waitFor(() => app.received.length >= 2, 15_000, 'the forwarded events');
    const forwarded = app.received.find((r) => r.body.includes(live.code));
    expect(forwarded?.body.equals(live.bytes)).toBe(true);
    const before = app.received.length;

    await page.locator(row(`[data-code="${live.code}"]`)).click();
    await page.locator(id('replay-url')).fill('');
    await page.locator(id('replay')).click();
    await expect.poll(() => page.locator(id('replay-result')).textContent()).toMatch(/\b200\b/);
    await waitFor(() => app.received.length > before, 10_000, 'the replayed event');
    const replayed = app.received[before]!;
    expect(replayed.body.equals(live.bytes)).toBe(true);
    expect(replayed.headers['x-webhook-key']).toBe(KEY);
    expect(replayed.headers['x-webhook-event']).toBe(live.event);
    expect(replayed.headers['content-type']).toBe('application/json');
  });

  it("shows the --forward-to routes, and Replay sends an event to its own route's address", async () => {
    const where = page.locator('#where');
    await expect.poll(() => where.textContent()).toContain(`forwarding every other event to ${app.url}`);
    expect(await where.textContent()).toContain(`forwarding ${other.event} to ${cancelled.url}`);
    await waitFor(
      () => cancelled.received.length === 1,
      15_000,
      'the cancelled event forwarded on its route',
    );
    await page.locator(row(`[data-code="${other.code}"]`)).click();
    await page.locator(id('replay-url')).fill('');
    expect(await page.locator(id('replay-url')).getAttribute('placeholder')).toBe(
      `replay to this URL instead of ${cancelled.url}`,
    );
    const before = app.received.length;
    await page.locator(id('replay')).click();
    await expect.poll(() => page.locator(id('replay-result')).textContent()).toMatch(/\b200\b/);
    await waitFor(() => cancelled.received.length === 2, 10_000, 'the replayed event');
    expect(cancelled.received[1]!.body.equals(cancelled.received[0]!.body)).toBe(true);
    expect(app.received.length).toBe(before);
  });

  it('Replay goes to the URL typed in the page when there is one', async () => {
    const elsewhere = await startApp();
    try {
      await page.locator(row(`[data-code="${live.code}"]`)).click();
      await page.locator(id('replay-url')).fill(elsewhere.url);
      await page.locator(id('replay')).click();
      await expect.poll(() => page.locator(id('replay-result')).textContent()).toMatch(/\b200\b/);
      await waitFor(() => elsewhere.received.length === 1, 10_000, 'the event replayed to the typed URL');
      expect(elsewhere.received[0]!.body.equals(live.bytes)).toBe(true);
      expect(elsewhere.received[0]!.headers['x-webhook-key']).toBe(KEY);
    } finally {
      await page.locator(id('replay-url')).fill('');
      await elsewhere.close();
    }
  });

  it('shows the command line that does the same, with the key as a variable', async () => {
    await page.locator(row(`[data-code="${live.code}"]`)).click();
    // Copy is enabled once the command has arrived (a click before copied nothing); the page says
    // "Copied." once the clipboard holds it: both are waited for, never a time.
    await page.locator(id('copy-command')).click();
    await expect.poll(() => page.locator('#command-note').textContent()).toMatch(/^Copied\. /);
    const command = (await page.locator(id('command-text')).textContent()) ?? '';
    expect(command).toMatch(/ordercli webhooks (replay|trigger) /);
    expect(command).toContain('"$ORDERCLI_WEBHOOK_KEY"');
    expect(command).not.toContain(KEY);
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(command.trim());
  });

  it('shows no command box for a refused request (nothing was recorded)', async () => {
    await page.locator(row('[data-status="401"]')).click();
    await expect.poll(() => page.locator('#command-note').textContent()).toContain('was not recorded');
    expect(await page.locator(id('command-text')).isHidden()).toBe(true);
    expect(await page.locator(id('copy-command')).isDisabled()).toBe(true);
  });

  it('lists the newest request first', async () => {
    const seqs = await page
      .locator(row(''))
      .evaluateAll((rows) => rows.map((element) => Number(element.getAttribute('data-seq'))));
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
  });

  it('is usable 600 px wide: nothing wider than the window, the command wrapped between its parts only', async () => {
    await page.setViewportSize({ width: 600, height: 800 });
    try {
      await page.locator(row(`[data-code="${live.code}"]`)).click();
      const parts = page.locator(`${id('command-text')} .part`);
      await expect.poll(() => parts.count()).toBeGreaterThan(5);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(600);
      for (const testId of ['event-list', 'replay', 'copy-command', 'filter-status', 'command-text']) {
        const box = await page.locator(id(testId)).boundingBox();
        expect(box, testId).not.toBeNull();
        expect(box!.x + box!.width, testId).toBeLessThanOrEqual(600);
      }
      // The line does wrap here, and each part (an option with its value) stays on one line.
      const lines = await parts.evaluateAll((spans) => spans.map((span) => span.getClientRects().length));
      expect(lines.every((count) => count === 1)).toBe(true);
      const tops = await parts.evaluateAll(
        (spans) => new Set(spans.map((span) => span.getBoundingClientRect().top)).size,
      );
      expect(tops).toBeGreaterThan(1);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('refuses a foreign Host (DNS rebinding), and sending without the token or from another origin', async () => {
    // Over HTTP, with the Host header of another site.
    for (const path of ['/', '/events']) {
      const foreign = await request(`http://127.0.0.1:${inspectPort}${path}`, {
        headers: { host: `${REBOUND_HOST}:${inspectPort}` },
      });
      const text = await foreign.body.text();
      expect([421, 403], `GET ${path} with a foreign Host`).toContain(foreign.statusCode);
      expect(text).not.toContain(live.code);
    }
    // In the browser: a page of another name that resolves to 127.0.0.1.
    const rebound = await context.newPage();
    try {
      const answer = await rebound.goto(`http://${REBOUND_HOST}:${inspectPort}/`);
      expect([421, 403]).toContain(answer?.status());
      expect(await rebound.content()).not.toContain(live.code);
    } finally {
      await rebound.close();
    }

    const seq = Number(await page.locator(row(`[data-code="${live.code}"]`)).getAttribute('data-seq'));
    const token = secretHeader()['x-ordercli-token'];
    const before = app.received.length;
    const replay = async (headers: Record<string, string>): Promise<number> => {
      const answer = await request(`${pageUrl}replay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ seq }),
      });
      await answer.body.text();
      return answer.statusCode;
    };
    expect(await replay({})).toBe(403);
    expect(await replay({ 'x-ordercli-token': 'not-the-token' })).toBe(403);
    expect(await replay({ 'x-ordercli-token': token, origin: `http://${REBOUND_HOST}:${inspectPort}` })).toBe(
      403,
    );
    expect([421, 403]).toContain(
      await replay({ 'x-ordercli-token': token, host: `${REBOUND_HOST}:${inspectPort}` }),
    );
    // The same request with the token is what the page sends: it works (so the refusals above are the checks').
    expect(await replay({ 'x-ordercli-token': token, origin: pageUrl.slice(0, -1) })).toBe(200);
    await waitFor(() => app.received.length === before + 1, 10_000, 'the one accepted replay');
  });

  it('Download body saves the recorded body under its file name', async () => {
    const liveRow = page.locator(row(`[data-code="${live.code}"]`));
    await liveRow.click();
    const seq = await liveRow.getAttribute('data-seq');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('#download-body').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${live.event}-${seq}.json`);
    expect(readFileSync((await download.path())!).equals(live.bytes)).toBe(true);
  });

  it('gives a page of another server on 127.0.0.1, opened next in the same tab, no cookie and nothing of the inspector', async () => {
    const seq = Number(await page.locator(row(`[data-code="${live.code}"]`)).getAttribute('data-seq'));
    const other = await startOtherSite(pageUrl.slice(0, -1), seq);
    const before = { app: app.received.length, cancelled: cancelled.received.length };
    const rows = await page.locator(row('')).count();
    // What Chromium sent to the inspector and what it answered, seen from the network (also for
    // answers that CORS or CORP then hid from the page).
    const sent = await watchRequests(page, pageUrl);
    try {
      // As in the report: the inspector was opened in this tab, then another local site.
      await page.goto(other.url);
      const attempts = (await (await page.waitForFunction('window.attempts')).jsonValue()) as Record<
        string,
        unknown
      >;
      // Last, a form (no script needed) that posts a replay to its own address, navigating the tab.
      const [formAnswer] = await Promise.all([
        page.waitForResponse((response) => response.url() === `${pageUrl}replay`),
        page.evaluate("document.getElementById('replay-form').submit()"),
      ]);
      expect(formAnswer.status()).toBe(403);
      expect(await formAnswer.text()).not.toContain(live.code);

      // The browser sent the other server no cookie, and holds none.
      expect(other.received.length).toBeGreaterThan(0);
      for (const request of other.received) expect(request.headers.cookie, request.url).toBeUndefined();
      expect(await context.cookies()).toEqual([]);
      // The other page read nothing: no answer through CORS, nothing in its storage.
      expect(attempts.cookie).toBe('');
      expect(attempts.sessionStorage).toBe('{}');
      const secret = secretHeader()['x-ordercli-token'];
      for (const [name, result] of Object.entries(attempts)) {
        const text = JSON.stringify(result);
        for (const hidden of [secret, live.code, history.code, KEY]) expect(text, name).not.toContain(hidden);
        if (name.startsWith('cors ') || name === 'replay json') expect(text, name).toContain('TypeError');
      }
      expect(attempts[`img /body?seq=${seq}`]).toBe('error');
      // The inspector refused every request but the empty page, and replayed nothing.
      const toInspector = sent.list();
      for (const path of ['/events', `/command?seq=${seq}`, `/body?seq=${seq}`, '/replay'])
        expect(
          toInspector.some((one) => one.path === path),
          path,
        ).toBe(true);
      for (const one of toInspector) {
        const what = `${one.method} ${one.path}`;
        expect(one.headers.cookie, what).toBeUndefined();
        expect(one.headers['x-ordercli-token'], what).toBeUndefined();
        // The empty page (no data, no secret) is the only answer that is not a refusal.
        if (one.path !== '/') expect(one.status, what).toBe(403);
      }
      expect(other.received.filter((request) => request.url === '/replayed')).toEqual([]);
    } finally {
      await sent.stop();
      await other.close();
      // Back in the tab, without the secret in the address (what the next tests use too).
      await page.goto(pageUrl);
    }
    // The page still works there: the tab kept the secret. Its own replay is the later event
    // after which nothing else arrived.
    await expect.poll(() => page.locator(id('status-line')).textContent()).toBe('live');
    await expect.poll(() => page.locator(row('')).count()).toBe(rows);
    await page.locator(row(`[data-code="${live.code}"]`)).click();
    await page.locator(id('replay-url')).fill('');
    await page.locator(id('replay')).click();
    await expect.poll(() => page.locator(id('replay-result')).textContent()).toMatch(/\b200\b/);
    await waitFor(() => app.received.length === before.app + 1, 10_000, "the page's own replay");
    expect(app.received.length).toBe(before.app + 1);
    expect(cancelled.received.length).toBe(before.cancelled);
    expect(await context.cookies()).toEqual([]);
  });

  it('hides the rows the filters leave out', async () => {
    const all = await visibleRows();
    expect(all).toHaveLength(5);
    expect(all.filter((shown) => shown.startsWith('401 '))).toHaveLength(1);

    await page.locator(id('filter-status')).selectOption('refused');
    await expect.poll(visibleRows).toEqual(all.filter((shown) => shown.startsWith('401 ')));
    await page.locator(id('filter-status')).selectOption('accepted');
    await expect.poll(visibleRows).toEqual(all.filter((shown) => shown.startsWith('200 ')));
    await page.locator(id('filter-status')).selectOption('all');

    await page.locator(id('filter-event')).fill(other.event);
    await expect.poll(visibleRows).toEqual([`200 ${other.code}`]);
    await page.locator(id('filter-event')).fill('');

    await page.locator(id('filter-code')).fill(history.code);
    await expect.poll(visibleRows).toEqual([`200 ${history.code}`]);
    await page.locator(id('filter-code')).fill('');
    await expect.poll(visibleRows).toEqual(all);

    // The selected request, once a filter hides it, leaves the detail pane.
    await page.locator(row(`[data-code="${live.code}"]`)).click();
    await expect.poll(() => page.locator('#selected').isVisible()).toBe(true);
    await page.locator(id('filter-status')).selectOption('refused');
    await expect.poll(() => page.locator('#selected').isVisible()).toBe(false);
    expect(await page.locator('#no-selection').textContent()).toContain('hidden by the filters');
    await page.locator(id('filter-status')).selectOption('all');
  });

  it('leaves a screenshot for review', async () => {
    await page.locator(row(`[data-code="${live.code}"]`)).click();
    await page.locator(id('body-search')).fill('Lefèvre');
    mkdirSync(OUTPUT, { recursive: true });
    const shot = await page.screenshot({ path: join(OUTPUT, 'inspector.png') });
    if (process.env.ORDERCLI_UPDATE_DOC_SCREENSHOT === '1') {
      mkdirSync(dirname(DOC_SCREENSHOT), { recursive: true });
      writeFileSync(DOC_SCREENSHOT, shot);
    }
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(OUTPUT, 'inspector-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
    expect(shot.length).toBeGreaterThan(10_000);
  });
});
