/**
 * `webhooks trigger` sends what the service sends (listen receives and accepts it); `replay`
 * re-sends what `listen --log` recorded with the original headers and body bytes; `--once` with
 * `--timeout` (seconds) exits 0 or 1, in-process and as the built binary.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { freePort, type LocalApp, post, spawnListen, startApp, startListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_trigger_test_key_98765';
let app: LocalApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('webhooks trigger', () => {
  it('is received and accepted by listen: the contract headers and a realistic sales_order_validated body', async () => {
    const dir = tempDir();
    const listen = await startListen(['--key', KEY, '--log', join(dir, 'events.ndjson')]);
    const sent = await runCli([
      'webhooks',
      'trigger',
      'sales_order_validated',
      '--url',
      listen.url,
      '--key',
      KEY,
    ]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+\/ \(sales_order_validated SO-\d{4}-\d{6}\) -> 200 OK in \d+ ms\n {2}\| \{"received":true\}\n$/,
    );
    const result = await listen.stop();
    const record = JSON.parse(readFileSync(join(dir, 'events.ndjson'), 'utf8'));
    expect(record.headers['content-type']).toBe('application/json');
    expect(record.headers['x-webhook-event']).toBe('sales_order_validated');
    expect(record.headers['user-agent']).toMatch(/^[\w.-]+\/\d+\.\d+\.\d+/);
    expect(record.headers.authorization).toBeUndefined();
    expect(record.body).toMatchObject({ status: 'validated', customer: { name: 'Maison Rousseau' } });
    expect(typeof record.body.code).toBe('string');
    expect(typeof record.body.id).toBe('number');
    expect(record.body.items).toHaveLength(2);
    expect(sent.stdout + sent.stderr + result.stdout + result.stderr).not.toContain(KEY);
  });

  it("shows a refusal with the receiver's answer and exits 1", async () => {
    const listen = await startListen(['--key', KEY]);
    const sent = await runCli([
      'webhooks',
      'trigger',
      'sales_order_validated',
      '--url',
      listen.url,
      '--key',
      'whk_not_it',
    ]);
    const stopped = await listen.stop();
    expect(sent.code).toBe(1);
    expect(sent.stdout).toContain('-> 401 Unauthorized in');
    // The receiver tells its caller only which header is wrong; its console says why.
    expect(sent.stdout).toContain('X-WEBHOOK-KEY header wrong');
    expect(sent.stdout).not.toContain('differs from the key');
    expect(stopped.stderr).toContain('X-WEBHOOK-KEY differs from the key');
    expect(sent.stderr).toContain('error: The receiver did not accept sales_order_validated');
  });

  it('exits 1 when nothing listens, 2 without a key or a body for an unknown event', async () => {
    const url = `http://127.0.0.1:${await freePort()}/`;
    const down = await runCli(['webhooks', 'trigger', 'sales_order_validated', '--url', url, '--key', KEY]);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(
      /Could not deliver sales_order_validated SO-\S+ to http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED/,
    );
    const noKey = await runCli(['webhooks', 'trigger', 'sales_order_validated', '--url', url]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('webhooks trigger needs the webhook key');
    const unknown = await runCli(['webhooks', 'trigger', 'contact_updated', '--url', url, '--key', KEY]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('There is no sample body for contact_updated');
  });

  it('--data sends the file byte for byte; a file that is not JSON is refused before sending', async () => {
    const dir = tempDir();
    app = await startApp();
    const bytes = '{\n  "id": 7,\n  "code": "SO-2026-000007",\n  "total": 10.50\n}\n';
    writeFileSync(join(dir, 'body.json'), bytes);
    const sent = await runCli(
      ['webhooks', 'trigger', 'sales_order_validated', '--url', app.url, '--key', KEY, '--data', 'body.json'],
      { cwd: dir },
    );
    expect(sent.code).toBe(0);
    expect(app.received[0]!.body.toString()).toBe(bytes);
    expect(app.received[0]!.headers['x-webhook-key']).toBe(KEY);

    writeFileSync(join(dir, 'bad.json'), '{"id": 7,');
    const bad = await runCli(
      ['webhooks', 'trigger', 'x_y', '--url', app.url, '--key', KEY, '--data', 'bad.json'],
      { cwd: dir },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('The body from bad.json is not JSON; nothing was sent.');
    expect(app.received).toHaveLength(1);
  });
});

describe('webhooks replay', () => {
  it('re-sends logged notifications with their original headers and exact body bytes, and the key given', async () => {
    const dir = tempDir();
    const log = join(dir, 'events.ndjson');
    const listen = await startListen(['--key', KEY, '--log', log]);
    const pretty = '{ "id": 1,\n  "code": "SO-2026-000001", "amount": 1.50 }';
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'order-service/9.1',
      'x-webhook-key': KEY,
    };
    expect(
      (await post(listen.url, pretty, { ...headers, 'x-webhook-event': 'sales_order_validated' })).status,
    ).toBe(200);
    expect(
      (await post(listen.url, '{"id":2}', { ...headers, 'x-webhook-event': 'contact_updated' })).status,
    ).toBe(200);
    expect(
      (
        await post(listen.url, '{"id":3,"code":"SO-2026-000003"}', {
          ...headers,
          'x-webhook-event': 'sales_order_validated',
        })
      ).status,
    ).toBe(200);
    await listen.stop();
    expect(readFileSync(log, 'utf8')).toContain('"rawBody":');

    app = await startApp();
    const replay = (...flags: string[]) =>
      runCli(['webhooks', 'replay', log, '--url', app!.url, '--key', 'whk_new_key_for_app', ...flags]);
    const replayed = await replay('--event', 'sales_order_validated');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(
      /^line 1 {2}sales_order_validated SO-2026-000001 -> 200 OK in \d+ ms\nline 3 {2}sales_order_validated SO-2026-000003 -> 200 OK in \d+ ms\n$/,
    );
    expect(app.received.map((r) => r.body.toString())).toEqual([pretty, '{"id":3,"code":"SO-2026-000003"}']);
    const [first] = app.received;
    expect(first!.headers['user-agent']).toBe('order-service/9.1');
    expect(first!.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first!.headers['x-webhook-key']).toBe('whk_new_key_for_app');
    expect(first!.headers['x-webhook-event']).toBe('sales_order_validated');
    expect(replayed.stdout + replayed.stderr).not.toContain('whk_new_key_for_app');

    // --received-at picks one line of the log: the third event only (as listen --inspect copies it).
    const third = JSON.parse(readFileSync(log, 'utf8').trim().split('\n')[2]!) as { receivedAt: string };
    const one = await replay('--event', 'sales_order_validated', '--received-at', third.receivedAt);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^line 3 {2}sales_order_validated SO-2026-000003 -> 200 OK in \d+ ms\n$/);
    expect(app.received.map((r) => r.body.toString()).slice(2)).toEqual(['{"id":3,"code":"SO-2026-000003"}']);
    const none = await replay('--received-at', 'never');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no recorded events received at never; nothing was sent');
    expect(app.received).toHaveLength(3);
  });

  it('refuses a file with lines that are not recorded events (exit 2, nothing sent); exit 1 on refusals', async () => {
    const dir = tempDir();
    app = await startApp();
    writeFileSync(
      join(dir, 'bad.ndjson'),
      '{"receivedAt":"2026-01-01T00:00:00Z","event":"e_x","headers":{},"body":{}}\nnot json\n{"a":1}\n',
    );
    const bad = await runCli(['webhooks', 'replay', 'bad.ndjson', '--url', app.url, '--key', KEY], {
      cwd: dir,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.ndjson:2: not JSON');
    expect(bad.stderr).toContain('bad.ndjson:3: not an event recorded by listen --log');
    expect(app.received).toHaveLength(0);

    app.answer = () => 400;
    writeFileSync(
      join(dir, 'ok.ndjson'),
      '{"receivedAt":"2026-01-01T00:00:00Z","event":"e_x","headers":{},"body":{"id":1}}\n',
    );
    const refused = await runCli(['webhooks', 'replay', 'ok.ndjson', '--url', app.url, '--key', KEY], {
      cwd: dir,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('line 1  e_x -> 400 Bad Request in');
    expect(refused.stdout).toContain('  | app says no (400)');
    expect(refused.stderr).toContain('1 of 1 notifications were not accepted');
  });
});

describe('listen --once', () => {
  it('exits 0 after the first matching event; --json prints just that one', async () => {
    const listen = await startListen(
      ['--key', KEY, '--once', '--event', 'sales_order_validated', '--wait', '20'],
      { globals: ['--json'] },
    );
    expect(listen.io.stderrText()).toContain('Waiting for one sales_order_validated (up to 20s).');
    const headers = { 'x-webhook-key': KEY, 'content-type': 'application/json' };
    expect(
      (await post(listen.url, '{"id":1}', { ...headers, 'x-webhook-event': 'contact_updated' })).status,
    ).toBe(200);
    expect(
      (
        await post(listen.url, '{"id":2,"code":"SO-X"}', {
          ...headers,
          'x-webhook-event': 'sales_order_validated',
        })
      ).status,
    ).toBe(200);
    const result = await listen.done;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      event: 'sales_order_validated',
      body: { id: 2, code: 'SO-X' },
    });
    expect(result.stderr).toContain(
      'contact_updated ignored (not in --events): answered 200, not logged nor forwarded',
    );
  });

  it('exits 1 when nothing came within --wait (a bare number is seconds)', async () => {
    const started = Date.now();
    const result = await runCli(['listen', '--port', '0', '--key', KEY, '--once', '--wait', '1']);
    expect(result.code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(result.stderr).toContain('error: No notification was accepted within 1s (listen --once --wait).');
  });

  it('as the built binary: trigger is received, listen exits 0; without one it exits 1', async () => {
    const listen = await spawnListen(['--port', '0', '--once', '--wait', '20s'], {
      ORDERCLI_WEBHOOK_KEY: KEY,
    });
    const sent = await runBin(['webhooks', 'trigger', 'sales_order_validated', '--url', listen.url], {
      env: { ORDERCLI_WEBHOOK_KEY: KEY },
    });
    expect(sent.code).toBe(0);
    expect(await listen.exited).toBe(0);
    expect(listen.stdout()).toMatch(/sales_order_validated {2}SO-\d{4}-\d{6} {2}id \d+/);
    expect(listen.stdout() + listen.stderr() + sent.stdout + sent.stderr).not.toContain(KEY);

    const none = await runBin(['listen', '--port', '0', '--once', '--wait', '500ms', '--key', KEY]);
    expect(none.code).toBe(1);
    expect(none.stderr).not.toContain(KEY);
  });

  it('Ctrl-C (SIGINT) on the binary drains and exits 130', async () => {
    const listen = await spawnListen(['--port', '0', '--key', KEY]);
    await waitFor(() => listen.stderr().includes('Ready'));
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    expect(listen.stderr()).toContain('Stopped: 0 accepted (0 shown), 0 rejected.');
  });
});
