/**
 * End to end with the sandbox: subscribe listen's URL, create an order, and see the sandbox's
 * `sales_order_validated` notification (sent by the same `sendNotification` as trigger and
 * forwarding) arrive with the right key, be fetched, exec'd, and forwarded to an application that
 * was down when it arrived.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { freePort, type LocalApp, startApp, startListen } from '../../support/listen.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const ORDER = join(import.meta.dirname, '../../support/fixtures/order.json');
const sandbox = useSandbox({ validationDelayMs: 50 });
let env: Record<string, string>;
let app: LocalApp | undefined;

beforeEach(() => {
  env = {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.full,
    ORDERCLI_CONFIG_DIR: tempDir(),
  };
});
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function createOrder(): Promise<{ id: number; code: string }> {
  const created = await runCli(['api', 'POST', '/api/v1/orders', '--data', `@${ORDER}`], { env });
  expect(created.code).toBe(0);
  return JSON.parse(created.stdout);
}

describe('the sandbox notifies listen', () => {
  it('subscribe listen, create an order: sales_order_validated arrives with the right key', async () => {
    const dir = tempDir();
    const listen = await startListen(['--key', sandbox.webhookKey, '--log', join(dir, 'events.ndjson')], {
      env,
    });
    const subscribed = await runCli(
      ['webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', listen.url],
      { env },
    );
    expect(subscribed.code).toBe(0);
    expect(subscribed.stdout).toContain(`Subscribed ${listen.url} to sales_order_validated.`);
    expect(subscribed.stdout).toMatch(/ {2}key +\[redacted\]\n/);
    expect(subscribed.stderr).toMatch(
      /The service returned the key of this subscription \(field key, sha256:[0-9a-f]{8}\)/,
    );

    const order = await createOrder();
    await waitFor(() => listen.io.stdoutText().includes(order.code), 10_000, 'the notification');
    const result = await listen.stop();

    expect(result.stdout).toMatch(
      new RegExp(`sales_order_validated {2}${order.code} {2}id ${order.id} · externalId WH-E2E-0001`),
    );
    const [line] = readFileSync(join(dir, 'events.ndjson'), 'utf8').trim().split('\n');
    const record = JSON.parse(line!);
    expect(record.event).toBe('sales_order_validated');
    expect(record.body).toMatchObject({ id: order.id, code: order.code, status: 'validated' });
    expect(record.headers['user-agent']).toMatch(/^ordercli-sandbox\/\S+$/);
    const delivery = await waitFor(
      () => sandbox.deliveries.find((d) => d.code === order.code),
      5_000,
      "the sandbox's delivery record",
    );
    expect(delivery).toMatchObject({ status: 200 });
    expect(subscribed.stdout + subscribed.stderr + result.stdout + result.stderr).not.toContain(
      sandbox.webhookKey,
    );
  });

  it('subscribe --save-key, then listen with no --key uses the key from the profile', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/`;
    const subscribed = await runCli(
      ['webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', url, '--save-key'],
      { env },
    );
    expect(subscribed.code).toBe(0);
    expect(subscribed.stderr).toContain('Saved it as webhook-key in profile "default"');
    const listen = await startListen(['--port', String(port), '--once'], { env });
    expect(listen.io.stderrText()).toContain('key from profile "default"');
    const order = await createOrder();
    const result = await listen.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(order.code);
    expect(subscribed.stdout + subscribed.stderr + result.stdout + result.stderr).not.toContain(
      sandbox.webhookKey,
    );
  });

  it('listen --subscribe learns the key from the answer; --fetch and --exec run per event', async () => {
    const port = await freePort();
    const dir = tempDir();
    const listen = await startListen(
      [
        '--port',
        String(port),
        '--subscribe',
        'sales_order_validated',
        '--public-url',
        `http://127.0.0.1:${port}/`,
        '--fetch',
        '--exec',
        `node -e "process.stdin.pipe(require('fs').createWriteStream('body.json'))" && echo ran for $ORDERCLI_WEBHOOK_EVENT`,
        '--once',
      ],
      { env, cwd: dir, globals: ['--json'] },
    );
    expect(listen.io.stderrText()).toContain('key from the subscription answer');
    const order = await createOrder();
    const result = await listen.done;
    expect(result.code).toBe(0);
    const event = JSON.parse(result.stdout.trim());
    expect(event.body.code).toBe(order.code);
    expect(event.fetched).toMatchObject({
      path: `/api/v1/orders/${order.id}`,
      status: 200,
      body: { id: order.id, code: order.code },
    });
    expect(event.exec).toMatchObject({ exitCode: 0, output: 'ran for sales_order_validated\n' });
    expect(JSON.parse(readFileSync(join(dir, 'body.json'), 'utf8'))).toEqual(event.body);
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });

  it('done when: an order reaches, through listen --forward-to, an application that was down when it arrived', async () => {
    const appPort = await freePort();
    const dir = tempDir();
    const listen = await startListen(
      [
        '--key',
        sandbox.webhookKey,
        '--log',
        join(dir, 'events.ndjson'),
        '--forward-to',
        `http://127.0.0.1:${appPort}/hooks`,
      ],
      { env },
    );
    expect(
      (
        await runCli(['webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', listen.url], {
          env,
        })
      ).code,
    ).toBe(0);
    const order = await createOrder();
    await waitFor(() => listen.io.stdoutText().includes(order.code), 10_000, 'the notification');
    // The sandbox got its 200 although the application is down: the event waits in the queue.
    const delivery = await waitFor(
      () => sandbox.deliveries.find((d) => d.code === order.code),
      5_000,
      "the sandbox's delivery record",
    );
    expect(delivery).toMatchObject({ status: 200 });
    await waitFor(() => listen.io.stderrText().includes('ECONNREFUSED'), 10_000, 'a failed forward');

    app = await startApp(appPort);
    await waitFor(() => app!.received.length === 1, 15_000, 'the forwarded notification');
    const result = await listen.stop();
    const [received] = app.received;
    expect(received!.headers['x-webhook-key']).toBe(sandbox.webhookKey);
    expect(received!.headers['x-webhook-event']).toBe('sales_order_validated');
    expect(JSON.parse(received!.body.toString())).toMatchObject({ id: order.id, code: order.code });
    expect(result.stderr).toContain('forwarded 1, refused by the application 0, none waiting.');
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });
});
