// `listen --forward-to <event>=<url>` through the built binary against the sandbox: the sandbox's
// sales_order_validated goes to its own application, every other event to the default one, each
// through a queue of its own; with --events a route to an event never accepted is refused (exit 2).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { freePort, type LocalApp, spawnListen, startApp } from '../../support/listen.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const ORDER = join(import.meta.dirname, '../../support/fixtures/order.json');
const sandbox = useSandbox({ validationDelayMs: 50 });
let env: Record<string, string>;
const apps: LocalApp[] = [];

beforeEach(() => {
  env = {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.full,
    ORDERCLI_CONFIG_DIR: tempDir(),
  };
});
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

describe('listen --forward-to per event', () => {
  it('sends the sandbox notification of a new order to its route and other events to the default', async () => {
    const orders = await startApp();
    const others = await startApp();
    apps.push(orders, others);
    const port = await freePort();
    const dir = tempDir();
    const listen = await spawnListen(
      [
        '--port',
        String(port),
        '--subscribe',
        'sales_order_validated',
        '--public-url',
        `http://127.0.0.1:${port}/`,
        '--log',
        join(dir, 'events.ndjson'),
        '--forward-to',
        `sales_order_validated=${orders.url}`,
        '--forward-to',
        others.url,
      ],
      env,
    );
    expect(listen.stderr()).toContain(
      `Forwarding sales_order_validated to ${orders.url} (queue ${join(dir, 'events.forward-queue.')}`,
    );
    expect(listen.stderr()).toContain(
      `Forwarding every other event to ${others.url} (queue ${join(dir, 'events.forward-queue.ndjson')})`,
    );
    const created = await runCli(['api', 'POST', '/api/v1/orders', '--data', `@${ORDER}`], { env });
    expect(created.code).toBe(0);
    const order = JSON.parse(created.stdout) as { id: number; code: string };
    // listen checks the key the subscription answer returned: the sandbox's.
    expect(listen.stderr()).toContain('key from the subscription answer');
    const trigger = await runBin(
      [
        'webhooks',
        'trigger',
        'contact_updated',
        '--url',
        listen.url,
        '--key',
        sandbox.webhookKey,
        '--data',
        ORDER,
      ],
      { env },
    );
    expect(trigger.code).toBe(0);

    await waitFor(
      () => orders.received.length === 1 && others.received.length === 1,
      15_000,
      'both forwards',
    );
    expect(orders.received[0]!.headers['x-webhook-event']).toBe('sales_order_validated');
    expect(JSON.parse(orders.received[0]!.body.toString())).toMatchObject({ id: order.id, code: order.code });
    expect(others.received[0]!.headers['x-webhook-event']).toBe('contact_updated');
    expect(others.received[0]!.headers['x-webhook-key']).toBe(sandbox.webhookKey);

    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    expect(listen.stderr()).toContain('forwarded 2, refused by the application 0, none waiting.');
    expect(listen.stderr()).not.toContain(sandbox.webhookKey);
    // Two queues beside the log: the default's plain name and one named by the other address.
    expect(
      readdirSync(dir)
        .filter((name) => name.includes('forward-queue'))
        .sort(),
    ).toEqual([
      expect.stringMatching(/^events\.forward-queue\.[0-9a-f]{12}\.ndjson$/),
      'events.forward-queue.ndjson',
    ]);
  });

  it('refuses, before listening, routes that cannot all be honoured (exit 2, nothing created)', async () => {
    const dir = tempDir();
    const cases: [string[], string][] = [
      [
        ['--events', 'sales_order_validated', '--forward-to', 'contact_updated=http://127.0.0.1:3000/c'],
        '--forward-to names contact_updated, which --events leaves out',
      ],
      [
        ['--forward-to', 'http://127.0.0.1:3000/a', '--forward-to', 'http://127.0.0.1:3000/b'],
        '--forward-to without an event name is given twice',
      ],
      [
        ['--forward-to', 'a=http://127.0.0.1:3000/a', '--forward-to', 'a,b=http://127.0.0.1:3000/b'],
        '--forward-to sends a to two addresses',
      ],
      [['--forward-to', 'a=ftp://127.0.0.1/x'], '--forward-to must be an http:// or https:// URL'],
    ];
    for (const [args, message] of cases) {
      const result = await runBin(
        ['listen', '--port', '0', '--key', 'k'.repeat(24), '--log', join(dir, 'e.ndjson'), ...args],
        {
          env,
        },
      );
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stderr).not.toContain('Ready:');
    }
    expect(existsSync(join(dir, 'e.ndjson'))).toBe(false);
  });
});
