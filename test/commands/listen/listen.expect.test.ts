/**
 * `listen --expect` as a CI job runs it: the built binary, subscribed to the sandbox, orders
 * created, and the exit code the job reads: 0 once `--count` matching notifications were accepted,
 * 5 when `--wait` passes first, naming how many came. A refused notification (wrong key) and one
 * `--where` does not match never count. The flag checks run in-process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { post, type RunningBin, spawnListen, startApp } from '../../support/listen.js';
import { call, partnerOrder, useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const EVENT = 'sales_order_validated';
const sandbox = useSandbox({ validationDelayMs: 20 });
let env: Record<string, string>;

beforeEach(() => {
  env = {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.full,
    ORDERCLI_CONFIG_DIR: tempDir(),
  };
});

/** Starts the binary's listen with the sandbox's key and subscribes it to sales_order_validated. */
async function expectListen(args: string[]): Promise<RunningBin> {
  const listen = await spawnListen(['--port', '0', '--key', sandbox.webhookKey, ...args], env);
  const subscribed = await runCli(['webhooks', 'subscribe', '--event', EVENT, '--url', listen.url], { env });
  expect(subscribed.code, subscribed.stderr).toBe(0);
  return listen;
}

/** Creates an order in the sandbox, which then notifies the subscribers; its code. */
async function createOrder(externalId: string): Promise<string> {
  const created = await call(sandbox, 'POST', '/api/v1/orders', {
    token: sandbox.tokens.full,
    body: partnerOrder(externalId),
  });
  expect(created.status, created.text).toBe(201);
  return (created.body as { code: string }).code;
}

/** The order's notification shown by listen (its code on stdout). */
function shown(listen: RunningBin, code: string): Promise<true> {
  return waitFor(() => listen.stdout().includes(code), 10_000, `the notification of ${code}`);
}

describe('listen --expect', () => {
  it('--count 3: exits 0 once the third order is notified, each shown as usual; the ready file goes', async () => {
    const readyFile = join(tempDir(), 'listen.json');
    const listen = await expectListen(['--expect', EVENT, '--count', '3', '--ready-file', readyFile]);
    expect(listen.stderr()).toMatch(/Waiting for 3 sales_order_validated notifications \(up to 5m\)\./);
    const codes: string[] = [];
    for (const n of [1, 2, 3]) {
      codes.push(await createOrder(`EXP-${n}`));
      // One at a time: a listen that ended early never shows the next one.
      await shown(listen, codes.at(-1)!);
    }
    expect(await listen.exited).toBe(0);
    for (const code of codes) expect(listen.stdout()).toMatch(new RegExp(`${EVENT} {2}${code} `));
    expect(listen.stderr()).toContain('Stopped: 3 accepted (3 shown), 0 rejected.');
    expect(existsSync(readyFile)).toBe(false);
  });

  it('exit 5 when --wait passes first, naming how many arrived; the ready file goes', async () => {
    const readyFile = join(tempDir(), 'listen.json');
    const listen = await expectListen([
      '--expect',
      EVENT,
      '--count',
      '3',
      '--wait',
      '3s',
      '--ready-file',
      readyFile,
    ]);
    const code = await createOrder('EXP-LATE-1');
    await shown(listen, code);
    expect(await listen.exited).toBe(5);
    expect(listen.stderr()).toContain(
      'error: 1 of 3 expected sales_order_validated notifications arrived within 3s.',
    );
    expect(existsSync(readyFile)).toBe(false);
  });

  it('--where: only the order whose body field reads the value counts', async () => {
    const listen = await expectListen(['--expect', EVENT, '--where', 'externalId=EXP-W-2']);
    expect(listen.stderr()).toContain(
      'Waiting for 1 sales_order_validated notification with externalId=EXP-W-2 (up to 5m).',
    );
    const other = await createOrder('EXP-W-1');
    await shown(listen, other);
    const wanted = await createOrder('EXP-W-2');
    expect(await listen.exited).toBe(0);
    expect(listen.stdout()).toContain(other);
    expect(listen.stdout()).toContain(wanted);
  });

  it('a notification with a wrong key is refused and does not count', async () => {
    const listen = await expectListen(['--expect', EVENT, '--count', '2']);
    const first = await createOrder('EXP-K-1');
    await shown(listen, first);
    const forged = await post(listen.url, JSON.stringify({ id: 1, code: 'SO-FORGED' }), {
      'content-type': 'application/json',
      'x-webhook-event': EVENT,
      'x-webhook-key': 'whk_not_the_key',
    });
    expect(forged.status).toBe(401);
    // Had the refused one counted, listen would have ended here and never shown the next order.
    const second = await createOrder('EXP-K-2');
    expect(await listen.exited).toBe(0);
    expect(listen.stdout()).toContain(second);
    expect(listen.stdout()).not.toContain('SO-FORGED');
    expect(listen.stderr()).toContain('Stopped: 2 accepted (2 shown), 1 rejected.');
  });

  it('with --log, --forward-to and --json: at exit 0 the matching event is in the log and the queue', async () => {
    const dir = tempDir();
    const app = await startApp();
    try {
      const listen = await spawnListen(
        [
          '--port',
          '0',
          '--key',
          'whk_expect_forward_0123456789',
          '--log',
          join(dir, 'events.ndjson'),
          '--forward-to',
          app.url,
          '--expect',
          EVENT,
          '--where',
          'data.code=SO-12',
          '--json',
        ],
        env,
      );
      const send = (code: string) =>
        post(listen.url, JSON.stringify({ data: { code } }), {
          'content-type': 'application/json',
          'x-webhook-event': EVENT,
          'x-webhook-key': 'whk_expect_forward_0123456789',
        });
      expect((await send('SO-11')).status).toBe(200);
      expect((await send('SO-12')).status).toBe(200);
      expect(await listen.exited).toBe(0);
      const lines = listen
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.body.data.code)).toEqual(['SO-11', 'SO-12']);
      expect(readFileSync(join(dir, 'events.ndjson'), 'utf8')).toContain('"code":"SO-12"');
      expect(readFileSync(join(dir, 'events.forward-queue.ndjson'), 'utf8')).toContain('"code":"SO-12"');
    } finally {
      await app.close();
    }
  });
});

describe('listen --expect: flags', () => {
  const cases: [string, string[], RegExp][] = [
    ['--count without --expect', ['--count', '2'], /--count only matters with --expect/],
    ['--where without --expect', ['--where', 'code=SO-1'], /--where only narrows --expect/],
    ['--count 0', ['--expect', EVENT, '--count', '0'], /--count must be a whole number from 1/],
    ['--where without =', ['--expect', EVENT, '--where', 'code'], /--where takes <field>=<value>/],
    ['--once with --expect', ['--expect', EVENT, '--once'], /--once and --expect both end listen/],
    [
      'an event --events leaves out',
      ['--expect', EVENT, '--events', 'contact_updated'],
      /--events leaves it out/,
    ],
    [
      '--timeout (the per-request timeout) without --wait',
      ['--expect', EVENT, '--timeout', '30s'],
      /not how long --expect waits: say that with --wait/,
    ],
  ];
  for (const [name, args, message] of cases) {
    it(`${name}: exit 2, before listening`, async () => {
      const result = await runCli(['listen', '--port', '0', '--key', 'whk_flags', ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toContain('Ready: listening');
    });
  }
});
