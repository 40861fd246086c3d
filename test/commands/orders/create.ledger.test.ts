// The order ledger through the built binary against a real sandbox: `orders create` and
// `orders import` never create an externalId twice at one service, whichever command sent it
// first; only a 2xx is a creation; `orders get` of an empty answer says so.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { FIXTURES } from '../../support/import-input.js';
import { createdCounts, externalId, orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

const ORDER = JSON.parse(readFileSync(join(FIXTURES, 'order.json'), 'utf8')) as Record<string, unknown>;

/** One machine: the config folder (and so the ledger) that every command of a test shares. */
function machine(): { env: Record<string, string>; configDir: string; cwd: string } {
  const configDir = tempDir('ordercli-config-');
  return { env: { ORDERCLI_CONFIG_DIR: configDir }, configDir, cwd: tempDir() };
}

function create(baseUrl: string, ...args: string[]): string[] {
  return ['--base-url', baseUrl, '--token', sandbox.tokens.partner, 'orders', 'create', ...args];
}

function importArgs(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'import', ...args];
}

function posts(): number {
  return sandbox.requests.filter((request) => request.method === 'POST').length;
}

/** Every record the ledger holds, whatever its shard. */
function ledgerRecords(configDir: string): Record<string, unknown>[] {
  const root = join(configDir, 'ledger');
  const records: Record<string, unknown>[] = [];
  for (const service of readdirSync(root)) {
    for (const shard of readdirSync(join(root, service)).filter((name) => name.endsWith('.ndjson'))) {
      for (const line of readFileSync(join(root, service, shard), 'utf8').split('\n')) {
        if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      }
    }
  }
  return records;
}

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

/** A local server on 127.0.0.1 with its own answer to every request. */
async function localServer(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('orders create and the ledger', () => {
  it('refuses to create the same externalId twice (exit 2, nothing sent), naming when, the id and code', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(ORDER));
    const first = await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd });
    expect(first.code, first.stderr).toBe(0);
    const [created] = sandbox.orders();
    const second = await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain('"WEB-2001" already exists at http://127.0.0.1:');
    expect(second.stderr).toContain(`id ${created?.id}, code ${created?.code}`);
    expect(second.stderr).toMatch(/at \d{4}-\d\d-\d\dT[\d:.]+Z by orders create of .*order\.json/);
    expect(second.stderr).toContain('--force');
    expect(second.stderr).toContain('nothing was sent');
    expect(sandbox.orders()).toHaveLength(1);
    expect(posts()).toBe(1);
  });

  it('--force sends it anyway and says so on stderr', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(ORDER));
    expect((await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd })).code).toBe(0);
    const forced = await runBin(create(sandbox.url, '--file', 'order.json', '--force'), { env, cwd });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toMatch(
      /--force: sending "WEB-2001" although the order ledger says it was created/,
    );
    expect(sandbox.orders()).toHaveLength(2);
  });

  it('an order without an externalId is sent each time, without a word about the ledger', async () => {
    const { env, cwd } = machine();
    const { externalId: _omitted, ...order } = ORDER;
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(order));
    for (let run = 0; run < 2; run++) {
      const result = await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
    }
    expect(sandbox.orders()).toHaveLength(2);
  });

  it('refuses an externalId that an import created', async () => {
    const { env, cwd } = machine();
    const input = writeNdjson(cwd, 'orders.ndjson', [{ ...ORDER, externalId: 'SHARED-1' }, ...orders(2)]);
    const imported = await runBin(importArgs(input), { env, cwd });
    expect(imported.code, imported.stderr).toBe(0);
    writeFileSync(join(cwd, 'order.json'), JSON.stringify({ ...ORDER, externalId: 'SHARED-1' }));
    const result = await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      /"SHARED-1" already exists at .*: created at .* by orders import of .*orders\.ndjson/,
    );
    expect(createdCounts(sandbox).get('SHARED-1')).toBe(1);
  });

  it('refuses an externalId whose outcome is in doubt (the connection broke after sending)', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(ORDER));
    let received = 0;
    const broken = await localServer((request, response) => {
      received++;
      request.resume();
      request.on('end', () => response.socket?.destroy());
    });
    const first = await runBin(create(broken, '--file', 'order.json'), { env, cwd });
    expect(first.code, first.stderr).toBe(1);
    const second = await runBin(create(broken, '--file', 'order.json'), { env, cwd });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toContain('"WEB-2001" may already exist');
    expect(second.stderr).toContain('unknown outcome');
    expect(received).toBe(1);
  });

  it('an order in doubt: the refusal offers orders resolve --created/--not-created first, which settle it without an import', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(ORDER));
    let received = 0;
    const broken = await localServer((request, response) => {
      received++;
      request.resume();
      request.on('end', () => response.socket?.destroy());
    });
    expect((await runBin(create(broken, '--file', 'order.json'), { env, cwd })).code).toBe(1);
    const refused = await runBin(create(broken, '--file', 'order.json'), { env, cwd });
    expect(refused.code, refused.stderr).toBe(2);
    const lines = refused.stderr.split('\n');
    expect(lines.slice(1, 5)).toEqual([
      '  Check at the service whether it was created, then record what you found in the order ledger:',
      `    ordercli --base-url ${broken} orders resolve --created WEB-2001[=<id>]   if it was: no command sends it again;`,
      `    ordercli --base-url ${broken} orders resolve --not-created WEB-2001   if it was not: the next send goes through.`,
      '  Or, if it was not created, run the same command with --force (which records nothing).',
    ]);

    // The commands offered work as written: no input, no journal, only the order ledger.
    const resolve = (...args: string[]) =>
      runBin(['--base-url', broken, 'orders', 'resolve', ...args], { env, cwd });
    const notCreated = await resolve('--not-created', 'WEB-2001');
    expect(notCreated.code, notCreated.stderr).toBe(0);
    expect(notCreated.stdout).toContain(`Recorded in the order ledger of ${broken}:`);
    expect(notCreated.stdout).toMatch(/WEB-2001 {2}unknown → not created: the next orders create sends it/);
    expect((await runBin(create(broken, '--file', 'order.json'), { env, cwd })).code).toBe(1);
    expect(received).toBe(2);

    const created = await resolve('--created', 'WEB-2001=10042', '--json');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      journal: null,
      baseUrl: broken,
      changed: [{ externalId: 'WEB-2001', from: 'unknown', to: 'created', id: 10042 }],
      stillUnknown: null,
    });
    const after = await runBin(create(broken, '--file', 'order.json'), { env, cwd });
    expect(after.code).toBe(2);
    expect(after.stderr).toMatch(/"WEB-2001" already exists at .*: resolved as created at .* \(id 10042\)/);
    expect(received).toBe(2);

    const unknown = await resolve('--created', 'WEB-9999');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      `error: The order ledger holds no order WEB-9999 for ${broken}, so nothing was recorded`,
    );
    const events = await resolve('--from-events', 'events.ndjson');
    expect(events.code).toBe(2);
    expect(events.stderr).toContain('--from-events settles the orders of an import');
  });
});

describe('orders import and the ledger', () => {
  it('skips an order that orders create already created, saying where and when', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify({ ...ORDER, externalId: externalId(2) }));
    expect((await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd })).code).toBe(0);
    const input = writeNdjson(cwd, 'orders.ndjson', orders(3));
    const result = await runBin(importArgs(input, '--json'), { env, cwd });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      counts: Record<string, number>;
      orders: { externalId: string; status: string; message?: string }[];
    };
    expect(report.counts).toMatchObject({ total: 3, created: 2, skipped: 1 });
    const skipped = report.orders.find((order) => order.externalId === externalId(2));
    expect(skipped?.status).toBe('skipped');
    expect(skipped?.message).toMatch(/already created at \d{4}-.*Z by orders create of .*order\.json/);
    expect(createdCounts(sandbox).get(externalId(2))).toBe(1);
    expect(sandbox.orders()).toHaveLength(3);
  });

  it('the same service under another name (localhost after 127.0.0.1) shares the ledger: nothing is created twice', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(ORDER));
    expect((await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd })).code).toBe(0);
    const other = sandbox.url.replace('127.0.0.1', 'localhost');
    writeNdjson(cwd, 'orders.ndjson', [ORDER, ...orders(2, 'ALIAS')]);
    const imported = await runBin(
      ['--base-url', other, '--token', sandbox.tokens.partner, 'orders', 'import', 'orders.ndjson', '--json'],
      { env, cwd },
    );
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout).counts).toMatchObject({ total: 3, created: 2, skipped: 1 });
    const again = await runBin(create(other, '--file', 'order.json'), { env, cwd });
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain('"WEB-2001" already exists');
    expect(createdCounts(sandbox).get('WEB-2001')).toBe(1);
  });

  it('a second import of another file skips the externalId the first one created', async () => {
    const { env, cwd } = machine();
    const first = writeNdjson(cwd, 'first.ndjson', orders(3));
    const second = writeNdjson(cwd, 'second.ndjson', [...orders(5).slice(2)]);
    expect((await runBin(importArgs(first), { env, cwd })).code).toBe(0);
    const result = await runBin(importArgs(second, '--json'), { env, cwd });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as {
      counts: Record<string, number>;
      orders: { externalId: string; status: string; message?: string }[];
    };
    expect(report.counts).toMatchObject({ total: 3, created: 2, skipped: 1 });
    expect(report.orders.find((order) => order.externalId === externalId(3))?.message).toMatch(
      /already created at .* by orders import of .*first\.ndjson/,
    );
    expect(createdCounts(sandbox).get(externalId(3))).toBe(1);
    expect(sandbox.orders()).toHaveLength(5);
  });

  it('a doubt at another service does not hold back the same externalId at the sandbox', async () => {
    const { env, configDir, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify({ ...ORDER, externalId: externalId(1) }));
    // Another service, which breaks the connection after reading the order.
    const broken = await localServer((request, response) => {
      request.resume();
      request.on('end', () => response.socket?.destroy());
    });
    expect((await runBin(create(broken, '--file', 'order.json'), { env, cwd })).code).toBe(1);
    // The ledger is per service: the broken one's doubt is not the sandbox's.
    const input = writeNdjson(cwd, 'orders.ndjson', orders(2));
    const records = ledgerRecords(configDir);
    expect(records.map((record) => record.event)).toEqual(['claim', 'unknown']);
    const elsewhere = await runBin(importArgs(input), { env, cwd });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(sandbox.orders()).toHaveLength(2);
  });

  it('an order in doubt at the same service is reported unknown and sent only with --retry-unknown', async () => {
    const { env, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify({ ...ORDER, externalId: externalId(1) }));
    // The sandbox creates the order, then breaks the connection without answering.
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-after' }]);
    const dropped = await runBin(create(sandbox.url, '--file', 'order.json'), { env, cwd });
    expect(dropped.code, dropped.stderr).toBe(1);
    const input = writeNdjson(cwd, 'orders.ndjson', orders(2));
    const held = await runBin(importArgs(input, '--json'), { env, cwd });
    expect(held.code, held.stderr).toBe(4);
    const report = JSON.parse(held.stdout) as {
      orders: { externalId: string; status: string; message?: string }[];
    };
    const first = report.orders.find((order) => order.externalId === externalId(1));
    expect(first?.status).toBe('unknown');
    expect(first?.message).toMatch(/by orders create of .*order\.json.*--retry-unknown/);
    expect(sandbox.orders()).toHaveLength(2);
    const retried = await runBin(importArgs(input, '--retry-unknown'), { env, cwd });
    expect(retried.code, retried.stderr).toBe(0);
    // Sent again because the user said so (the sandbox had created it: that is what --retry-unknown risks).
    expect(sandbox.orders()).toHaveLength(3);
  });
});

describe('only a 2xx is a creation', () => {
  it('a 307 answer to POST /api/v1/orders fails (exit 1) with the status and a hint to check --base-url', async () => {
    const { env, configDir, cwd } = machine();
    writeFileSync(join(cwd, 'order.json'), JSON.stringify(ORDER));
    const redirecting = await localServer((request, response) => {
      request.resume();
      response.writeHead(307, { location: 'https://127.0.0.1:1/api/v1/orders' }).end();
    });
    const result = await runBin(create(redirecting, '--file', 'order.json'), { env, cwd });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'answered 307 Temporary Redirect to POST /api/v1/orders instead of creating the order',
    );
    expect(result.stderr).toContain('check --base-url');
    expect(result.stderr).not.toContain('Created');
    // Recorded as failed: the order may be sent again, and it is.
    expect(ledgerRecords(configDir).map((record) => record.event)).toEqual(['claim', 'failed']);
    const again = await runBin(create(redirecting, '--file', 'order.json'), { env, cwd });
    expect(again.code, again.stderr).toBe(1);
  });

  it('orders get of an empty answer says so instead of printing null', async () => {
    const empty = await localServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'application/json' }).end();
    });
    const result = await runBin(['--base-url', empty, '--token', 't', 'orders', 'get', '42']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'answered 200 OK to GET /api/v1/orders/42 with an empty answer, not an order',
    );
  });

  it('orders get of an answer that is not JSON says so', async () => {
    const html = await localServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
    });
    const result = await runBin(['--base-url', html, '--token', 't', 'orders', 'get', '42']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('with an answer that is not JSON (text/html');
  });
});
