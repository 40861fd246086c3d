/**
 * `listen --forward-to`: nothing lost. Events accepted while the application is down are queued
 * on disk before the 200, forwarded in order once it is up, with their original headers and body
 * bytes and the key added back; a restart of listen resumes the queue without duplicates.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../support/cli.js';
import { freePort, type LocalApp, post, spawnListen, startApp, startListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_forward_test_key_abcdef012345';
const headersFor = (event = 'sales_order_validated') => ({
  'content-type': 'application/json',
  'user-agent': 'order-service/4.2',
  'x-webhook-event': event,
  'x-webhook-key': KEY,
  'x-request-trace': 'trace-1',
});
// Not the canonical JSON form: the bytes must arrive exactly as sent.
const bodyOf = (n: number) =>
  `{ "id": ${n},\n  "code": "SO-2026-${String(n).padStart(6, '0')}", "amount": 1.50 }`;

let app: LocalApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('listen --forward-to', () => {
  it('queues while the application is down and delivers everything, in order, once it is up', async () => {
    const dir = tempDir();
    const port = await freePort();
    const target = `http://127.0.0.1:${port}/hooks`;
    const listen = await startListen([
      '--key',
      KEY,
      '--log',
      join(dir, 'events.ndjson'),
      '--forward-to',
      target,
    ]);
    for (let n = 1; n <= 5; n++) expect((await post(listen.url, bodyOf(n), headersFor())).status).toBe(200);
    await waitFor(() =>
      /forward failed .*ECONNREFUSED \(nothing listens there\) \(attempt \d\); retrying in/.test(
        listen.io.stderrText(),
      ),
    );

    app = await startApp(port);
    await waitFor(() => app!.received.length === 5, 15_000, 'five deliveries');
    const result = await listen.stop();

    expect(app.received.map((r) => r.body.toString('utf8'))).toEqual([1, 2, 3, 4, 5].map(bodyOf));
    for (const received of app.received) {
      expect(received.url).toBe('/hooks');
      expect(received.headers['x-webhook-key']).toBe(KEY);
      expect(received.headers['x-webhook-event']).toBe('sales_order_validated');
      expect(received.headers['user-agent']).toBe('order-service/4.2');
      expect(received.headers['content-type']).toBe('application/json');
      expect(received.headers['x-request-trace']).toBe('trace-1');
    }
    expect(result.stderr).toMatch(
      /forwarded sales_order_validated SO-2026-000005 \(#5\) → http:\/\/127\.0\.0\.1:\d+\/hooks: 200 OK in \d+ ms/,
    );
    expect(result.stderr).toContain('forwarded 5, refused by the application 0, none waiting.');
    const queue = readFileSync(join(dir, 'events.forward-queue.ndjson'), 'utf8');
    expect(queue + result.stdout + result.stderr).not.toContain(KEY);
  });

  it('retries 5xx, shows the answer, and treats a 4xx as final without blocking the rest', async () => {
    app = await startApp();
    // First event: 503 twice, then accepted. Second: 422 (final). Third: accepted.
    let attemptsOfFirst = 0;
    app.answer = (request) => {
      const code = JSON.parse(request.body.toString()).code as string;
      if (code.endsWith('1')) return ++attemptsOfFirst <= 2 ? 503 : 200;
      if (code.endsWith('2')) return 422;
      return 200;
    };
    const listen = await startListen(['--key', KEY, '--forward-to', app.url, '--queue-dir', tempDir()]);
    for (let n = 1; n <= 3; n++) expect((await post(listen.url, bodyOf(n), headersFor())).status).toBe(200);
    await waitFor(() => app!.received.length === 5, 15_000, 'five attempts');
    const result = await listen.stop();
    expect(app.received.map((r) => JSON.parse(r.body.toString()).code)).toEqual([
      'SO-2026-000001',
      'SO-2026-000001',
      'SO-2026-000001',
      'SO-2026-000002',
      'SO-2026-000003',
    ]);
    expect(result.stderr).toMatch(
      /forward failed sales_order_validated SO-2026-000001 \(#1\) → \S+: 503 Service Unavailable in \d+ ms \(attempt 1\); retrying in/,
    );
    expect(result.stderr).toContain('    | app says no (503)');
    expect(result.stderr).toMatch(
      /forward refused sales_order_validated SO-2026-000002 \(#2\) → \S+: 422 Unprocessable Entity in \d+ ms; not retried/,
    );
    expect(result.stderr).toContain('forwarded 2, refused by the application 1, none waiting.');
  });

  it('a restart in the middle resumes the queue: nothing lost, nothing sent twice', async () => {
    const dir = tempDir();
    const log = join(dir, 'events.ndjson');
    const port = await freePort();
    const target = `http://127.0.0.1:${port}/hooks`;
    const args = ['--key', KEY, '--log', log, '--forward-to', target];

    const first = await startListen(args);
    for (let n = 1; n <= 3; n++) expect((await post(first.url, bodyOf(n), headersFor())).status).toBe(200);
    const firstResult = await first.stop();
    expect(firstResult.stderr).toContain(
      `3 waiting in ${join(dir, 'events.forward-queue.ndjson')} (sent on the next start)`,
    );

    const second = await startListen(args);
    expect(second.io.stderrText()).toContain('resuming 3 undelivered events');
    for (let n = 4; n <= 5; n++) expect((await post(second.url, bodyOf(n), headersFor())).status).toBe(200);
    app = await startApp(port);
    await waitFor(() => app!.received.length === 5, 15_000, 'five deliveries');
    await second.stop();

    const third = await startListen(args);
    expect(third.io.stderrText()).not.toContain('resuming');
    // Its summary, once stopped, counts what it forwarded: nothing, and nothing was left waiting.
    const thirdResult = await third.stop();
    expect(thirdResult.stderr).toContain('forwarded 0, refused by the application 0, none waiting.');

    expect(app.received.map((r) => r.body.toString())).toEqual([1, 2, 3, 4, 5].map(bodyOf));
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(5);
  });

  it('survives a crash (kill -9) of the binary: what was answered 200 is delivered after the restart', async () => {
    const dir = tempDir();
    const port = await freePort();
    const args = [
      '--port',
      '0',
      '--key',
      KEY,
      '--queue-dir',
      dir,
      '--forward-to',
      `http://127.0.0.1:${port}/hooks`,
    ];
    const first = await spawnListen(args);
    for (let n = 1; n <= 4; n++) expect((await post(first.url, bodyOf(n), headersFor())).status).toBe(200);
    first.child.kill('SIGKILL');
    await first.exited;

    app = await startApp(port);
    const second = await spawnListen(args);
    expect(second.stderr()).toContain('resuming 4 undelivered events');
    await waitFor(() => app!.received.length === 4, 15_000, 'four deliveries');
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(130);
    expect(app.received.map((r) => r.body.toString())).toEqual([1, 2, 3, 4].map(bodyOf));
    expect(readFileSync(join(dir, 'forward-queue.ndjson'), 'utf8')).not.toContain(KEY);
    expect(second.stdout() + second.stderr()).not.toContain(KEY);
  });

  it('refuses a second listen on the same queue', async () => {
    const dir = tempDir();
    const args = ['--key', KEY, '--queue-dir', dir, '--forward-to', `http://127.0.0.1:${await freePort()}/`];
    const first = await startListen(args);
    const second = startListen(args);
    await expect(second).rejects.toThrow(
      /The forwarding queue .* is (already in use by this ordercli process|in use by another ordercli \(process \d+)/,
    );
    await first.stop();
  });
});
