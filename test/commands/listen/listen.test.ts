/**
 * `listen` answers every request with the contract's status and prints the exact reason; the key
 * is never printed or logged. Real HTTP against listen run in-process.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { post, type RunningListen, rawExchange, startListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_status_test_0123456789abcdef';
const TOKEN = 'api-token-for-status-tests';
const EVENT = 'sales_order_validated';
const BODY = JSON.stringify({
  id: 10001,
  code: 'SO-2026-000001',
  customer: { name: 'Maison Rousseau' },
  items: [{}],
});
const good = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'x-webhook-event': EVENT,
  'x-webhook-key': KEY,
  ...extra,
});

describe('listen: statuses of the contract', () => {
  let listen: RunningListen;
  let dir: string;

  beforeAll(async () => {
    dir = tempDir();
    listen = await startListen(['--key', KEY, '--log', join(dir, 'events.ndjson'), '--path', '/hooks'], {
      env: { ORDERCLI_TOKEN: TOKEN },
    });
  });

  afterAll(async () => {
    const result = await listen.stop();
    expect(result.code).toBe(130);
    const log = readFileSync(join(dir, 'events.ndjson'), 'utf8');
    expect(result.stdout + result.stderr + log).not.toContain(KEY);
  });

  it('prints a ready line with the address, the key check and how to quit', () => {
    expect(listen.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
    expect(listen.io.stderrText()).toMatch(
      /Ready: listening on \S+ - X-WEBHOOK-KEY checked \(key from --key, sha256:[0-9a-f]{8}\)\. Press Ctrl-C to quit\./,
    );
  });

  it('200: accepts a POST with the key, prints time, event, code and summary, logs it', async () => {
    const answer = await post(listen.url, BODY, good());
    expect(answer.status).toBe(200);
    const line = await waitFor(() =>
      listen.io
        .stdoutText()
        .split('\n')
        .find((l) => l.includes('SO-2026-000001')),
    );
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} {2}sales_order_validated {2}SO-2026-000001 {2}id 10001 · Maison Rousseau · 1 item$/,
    );
  });

  it('200: the query string does not matter, a trailing slash neither', async () => {
    expect((await post(`${listen.url}/?source=test`, BODY, good())).status).toBe(200);
  });

  const refusals: [string, string | Buffer, Record<string, string> | [string, string][], number, RegExp][] = [
    ['header missing', BODY, { 'x-webhook-event': EVENT }, 401, /X-WEBHOOK-KEY header missing/],
    [
      'key differs',
      BODY,
      good({ 'x-webhook-key': 'whk_some_other_key_value' }),
      401,
      /X-WEBHOOK-KEY differs from the key \(received 24 characters, sha256:[0-9a-f]{8}; expected 32 characters, sha256:[0-9a-f]{8}\)/,
    ],
    [
      'header sent twice',
      BODY,
      [
        ['x-webhook-event', EVENT],
        ['x-webhook-key', KEY],
        ['X-Webhook-Key', KEY],
      ],
      401,
      /X-WEBHOOK-KEY header sent 2 times/,
    ],
    ['empty key', BODY, good({ 'x-webhook-key': '' }), 401, /X-WEBHOOK-KEY header is empty/],
    ['key in quotes', BODY, good({ 'x-webhook-key': `"${KEY}"` }), 401, /wrapped in quotes/],
    [
      'key in another case',
      BODY,
      good({ 'x-webhook-key': KEY.toUpperCase() }),
      401,
      /differs from the key only in letter case/,
    ],
    [
      'API token instead of the key',
      BODY,
      good({ 'x-webhook-key': TOKEN }),
      401,
      /holds the API token, not the webhook key/,
    ],
    ['body not JSON', 'order validated', good(), 400, /body is not JSON/],
    ['empty body', '', good(), 400, /body is empty/],
  ];

  for (const [name, body, headers, status, reason] of refusals) {
    it(`${status}: ${name}`, async () => {
      const answer = await post(listen.url, body, headers);
      expect(answer.status).toBe(status);
      expect(answer.headers.connection).toBe('close');
      // A refused key: the caller learns which header is at fault, the operator's console why.
      if (status === 401) {
        expect(JSON.parse(answer.body).error).toBe(
          name === 'header missing' ? 'X-WEBHOOK-KEY header missing' : 'X-WEBHOOK-KEY header wrong',
        );
      } else expect(JSON.parse(answer.body).error).toMatch(reason);
      // Shown as rejected on stderr with the exact reason; never on stdout.
      await waitFor(() =>
        listen.io
          .stderrText()
          .split('\n')
          .find((l) => l.includes(`rejected ${status}`) && reason.test(l)),
      );
    });
  }

  it('401: a key with surrounding (Unicode) white space is named as such, on the console only', async () => {
    // HTTP strips spaces and tabs; a no-break space pasted from a web page stays.
    const answer = await rawExchange(
      listen.url,
      Buffer.from(
        `POST /hooks HTTP/1.1\r\nHost: x\r\nX-WEBHOOK-EVENT: ${EVENT}\r\nX-WEBHOOK-KEY: ${KEY}\xa0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
        'latin1',
      ),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(answer).toContain('{"status":401,"error":"X-WEBHOOK-KEY header wrong"}');
    await waitFor(() =>
      listen.io
        .stderrText()
        .includes('X-WEBHOOK-KEY has surrounding white space (the key matches without it)'),
    );
  });

  it('405: other methods, with Allow: POST', async () => {
    const answer = await post(listen.url, '', {}, 'GET');
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('POST');
    expect(JSON.parse(answer.body).error).toBe('method GET not allowed (notifications are POSTs)');
  });

  it('404: another path, before the key is even looked at', async () => {
    const answer = await post(listen.url.replace('/hooks', '/other'), BODY, { 'x-webhook-event': EVENT });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error).toBe('path /other is not served (listen serves /hooks)');
  });

  it('413: a body over 1 MiB, declared or streamed (chunked)', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    const declared = await post(listen.url, big, good());
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body).error).toMatch(
      /body of 1048577 bytes is over the limit of 1048576 bytes/,
    );
    const chunked = await post(listen.url, big, good({ 'transfer-encoding': 'chunked' }));
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error).toMatch(/body is over the limit/);
  });

  it('exactly 1 MiB of JSON is still accepted', async () => {
    const payload = JSON.stringify({ code: 'SO-BIG', pad: '' });
    const exact = payload.replace('""', `"${'x'.repeat(1024 * 1024 - payload.length)}"`);
    expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
    expect((await post(listen.url, exact, good())).status).toBe(200);
  });

  it('400: malformed HTTP gets an answer and a closed connection', async () => {
    const answer = await rawExchange(listen.url, 'POST /hooks HTTP/1.1\r\nHost x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    await waitFor(() => /rejected 400 {2}connection: malformed HTTP request/.test(listen.io.stderrText()));
  });

  it('logs only what was accepted, one JSON line each, key redacted', async () => {
    await waitFor(() => listen.io.stdoutText().includes('SO-BIG'));
    const lines = readFileSync(join(dir, 'events.ndjson'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const record = JSON.parse(line);
      expect(Object.keys(record).slice(0, 4)).toEqual(['receivedAt', 'event', 'headers', 'body']);
      expect(record.headers['x-webhook-key']).toBe('[redacted]');
      expect(record.event).toBe(EVENT);
    }
  });
});

describe('listen: the key', () => {
  it('refuses to start without a key (exit 2) unless --no-verify', async () => {
    const result = await runCli(['listen', '--port', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('listen needs the webhook key to check X-WEBHOOK-KEY');
  });

  it('a --log or queue it cannot create is bad usage (exit 2) naming the file, not a crash', async () => {
    // A folder path under a regular file fails wherever the tests run, as root or not.
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, '');
    const log = await runBin([
      'listen',
      '--port',
      '0',
      '--key',
      'whk_test_0123456789',
      '--log',
      join(file, 'e.ndjson'),
    ]);
    expect(log.code).toBe(2);
    // (mkdir says EEXIST or ENOTDIR, depending on the platform.)
    expect(log.stderr).toContain(`error: Cannot write the log ${join(file, 'e.ndjson')} (E`);
    expect(log.stderr).toMatch(/\(E[A-Z]+\): choose another place with --log\.\n/);
    expect(log.stderr).not.toContain('unexpectedly');
    const queue = await runBin([
      'listen',
      '--port',
      '0',
      '--key',
      'whk_test_0123456789',
      '--forward-to',
      'http://127.0.0.1:9/',
      '--queue-dir',
      join(file, 'q'),
    ]);
    expect(queue.code).toBe(2);
    expect(queue.stderr).toMatch(/forwarding queue .*\(E[A-Z]+\): choose another place with --queue-dir\.\n/);
  });

  it('--no-verify accepts any key and says so in the ready line', async () => {
    const listen = await startListen(['--no-verify']);
    expect(listen.io.stderrText()).toContain('X-WEBHOOK-KEY NOT checked (--no-verify)');
    expect((await post(listen.url, BODY, { 'x-webhook-event': EVENT })).status).toBe(200);
    expect((await post(listen.url, BODY, { 'x-webhook-key': 'anything' })).status).toBe(200);
    expect((await listen.stop()).code).toBe(130);
  });

  it('takes the key from ORDERCLI_WEBHOOK_KEY, then from the profile', async () => {
    const fromEnv = await startListen([], { env: { ORDERCLI_WEBHOOK_KEY: KEY } });
    expect(fromEnv.io.stderrText()).toContain('key from ORDERCLI_WEBHOOK_KEY');
    expect((await post(fromEnv.url, BODY, good())).status).toBe(200);
    await fromEnv.stop();

    const config = tempDir();
    const set = await runCli(['config', 'set', 'webhook-key', KEY], { env: { ORDERCLI_CONFIG_DIR: config } });
    expect(set.code).toBe(0);
    const fromProfile = await startListen([], { env: { ORDERCLI_CONFIG_DIR: config } });
    expect(fromProfile.io.stderrText()).toContain('key from profile "default"');
    expect((await post(fromProfile.url, BODY, good())).status).toBe(200);
    expect((await post(fromProfile.url, BODY, good({ 'x-webhook-key': 'nope-nope' }))).status).toBe(401);
    const result = await fromProfile.stop();
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  it('--json prints one line per event {receivedAt, event, headers, body}, key redacted', async () => {
    const listen = await startListen(['--key', KEY], { globals: ['--json'] });
    await post(listen.url, BODY, good());
    await post(listen.url, BODY, good());
    await waitFor(() => listen.io.stdoutText().split('\n').filter(Boolean).length === 2);
    const result = await listen.stop();
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0])).toEqual(['receivedAt', 'event', 'headers', 'body']);
    expect(lines[0].body).toEqual(JSON.parse(BODY));
    expect(lines[0].headers['x-webhook-key']).toBe('[redacted]');
    expect(result.stdout + result.stderr).not.toContain(KEY);
  });

  it('Ctrl-C stops accepting and exits 130 with a summary', async () => {
    const listen = await startListen(['--key', KEY]);
    await post(listen.url, BODY, good());
    await post(listen.url, BODY, {});
    const result = await listen.stop();
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('Stopped: 1 accepted (1 shown), 1 rejected.');
    await expect(post(listen.url, BODY, good())).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a port in use is a usage error', async () => {
    const first = await startListen(['--key', KEY]);
    const port = new URL(first.url).port;
    const second = await runCli(['listen', '--key', KEY, '--port', port]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    await first.stop();
  });
});
