/**
 * `listen --forward-timeout`, through the binary: an application slower than the time-out gets a
 * failed attempt that names the time-out (and the event again later); a longer time-out lets it
 * answer, and the queued event is delivered. A bare number is bad usage: the duration needs a unit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { type LocalApp, post, spawnListen, startApp } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_forward_timeout_key_0123456789';
const HEADERS = {
  'content-type': 'application/json',
  'x-webhook-event': 'sales_order_validated',
  'x-webhook-key': KEY,
};
const BODY = '{"id":1,"code":"SO-2026-000001"}';

let app: LocalApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('listen --forward-timeout', () => {
  it('an application slower than the time-out: the attempt fails naming it; a longer one delivers the queued event', async () => {
    app = await startApp();
    app.answerDelayMs = 300;
    const queueDir = tempDir();
    const args = (timeout: string) => [
      '--key',
      KEY,
      '--queue-dir',
      queueDir,
      '--forward-to',
      app!.url,
      '--forward-timeout',
      timeout,
    ];

    const short = await spawnListen(args('100ms'));
    expect((await post(short.url, BODY, HEADERS)).status).toBe(200);
    await waitFor(
      () =>
        /forward failed sales_order_validated SO-2026-000001 \(#1\) → \S+: no answer within 100ms \(--forward-timeout\) \(attempt 1\); retrying in/.test(
          short.stderr(),
        ),
      10_000,
      'the failed attempt naming --forward-timeout',
    );
    expect(app.received.length).toBeGreaterThanOrEqual(1);
    expect(short.stderr()).not.toMatch(/forwarded sales_order_validated/);
    short.child.kill('SIGINT');
    expect(await short.exited).toBe(130);
    expect(short.stderr()).toMatch(/1 waiting in \S+ \(sent on the next start\)/);

    const long = await spawnListen(args('2s'));
    await waitFor(
      () =>
        /forwarded sales_order_validated SO-2026-000001 \(#1\) → \S+: 200 OK in \d+ ms/.test(long.stderr()),
      10_000,
      'the delivery within --forward-timeout 2s',
    );
    long.child.kill('SIGINT');
    expect(await long.exited).toBe(130);
    expect(long.stderr()).not.toContain('--forward-timeout)');
    expect(long.stderr()).toContain('none waiting');
    expect(app.received.at(-1)!.body.toString()).toBe(BODY);
  });

  it('a bare number is bad usage (exit 2) asking for a unit', async () => {
    const result = await runBin([
      'listen',
      '--key',
      KEY,
      '--forward-to',
      'http://127.0.0.1:9/hooks',
      '--forward-timeout',
      '30',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--forward-timeout needs a unit: "30" could be 30ms or 30s.');
    expect(result.stderr).toMatch(/30s or 30ms/);
  });

  it('without --forward-to it is bad usage (exit 2)', async () => {
    const result = await runBin(['listen', '--key', KEY, '--forward-timeout', '30s']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--forward-timeout only matters with --forward-to.');
  });
});
