/**
 * The done-when check of "secrets stay secret": a whole `--verbose` session through the built
 * binary against the sandbox (login, listen subscribing itself, subscribe, available, api GET/PUT
 * of webhooks, an order created and imported, listen receiving the notification), then every
 * byte of stdout, stderr, the event log, the import's report and the order ledger is searched for the
 * sandbox's token and webhook key: neither appears, until --show-secrets asks for the key.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, runBin, tempDir, testEnv } from '../support/cli.js';
import { freePort, READY } from '../support/listen.js';
import { useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 50 });
let listen: ChildProcessWithoutNullStreams | undefined;
afterAll(() => listen?.kill('SIGKILL'));

describe('a --verbose session leaks no secret', () => {
  it('login, listen, subscribe, available, api GET/PUT, orders create and import, a notification', async () => {
    const dir = tempDir();
    const env = { ORDERCLI_CONFIG_DIR: join(dir, 'config'), ORDERCLI_DEBUG: '1' };
    const outputs: string[] = [];
    const run = async (args: string[], stdin?: string) => {
      const result = await runBin(args, { env, stdin, cwd: dir });
      outputs.push(`$ ${args.join(' ')} -> ${result.code}\n${result.stdout}\n${result.stderr}`);
      expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(0);
      return result;
    };

    await run(['login', '--with-token', '--base-url', sandbox.url], sandbox.tokens.full);

    // listen subscribes itself (PUT /api/v1/webhooks, the key in the answer) and waits for one event.
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}/hooks`;
    const log = join(dir, 'events.ndjson');
    listen = spawn(
      process.execPath,
      [
        BIN,
        '--verbose',
        'listen',
        '--port',
        String(port),
        '--path',
        '/hooks',
        '--subscribe',
        'sales_order_validated',
        '--public-url',
        publicUrl,
        '--log',
        log,
        '--fetch',
        '--once',
        '--wait',
        '60s',
        '--json',
      ],
      { env: testEnv(env), cwd: dir },
    );
    let listenOut = '';
    let listenErr = '';
    listen.stdout.setEncoding('utf8').on('data', (c: string) => (listenOut += c));
    listen.stderr.setEncoding('utf8').on('data', (c: string) => (listenErr += c));
    const exited = new Promise<number | null>((resolve) => listen!.on('close', resolve));
    await waitFor(() => READY.test(listenErr), 15_000, `listen's ready line:\n${listenErr}`);

    await run([
      'webhooks',
      'subscribe',
      '--event',
      'sales_order_validated',
      '--url',
      publicUrl,
      '--save-key',
    ]);
    await run(['--json', 'webhooks', 'available']);
    await run(['webhooks', 'available']);
    await run(['api', 'GET', 'webhooks']);
    await run([
      'api',
      'PUT',
      'webhooks',
      '--data',
      JSON.stringify({ event: 'sales_order_validated', url: publicUrl }),
    ]);
    await run(['get', 'webhooks', '1']);
    await run(['config', 'list']);
    const created = await run([
      '--json',
      'orders',
      'create',
      '--file',
      join(ROOT, 'test/support/fixtures/order.json'),
    ]);
    const report = join(dir, 'report.csv');
    await run([
      'orders',
      'import',
      join(ROOT, 'fixtures/orders/orders.csv'),
      '--report',
      report,
      '--journal',
      'nightly-import',
    ]);

    expect(await exited).toBe(0);
    const orderId = JSON.parse(created.stdout).id;
    expect(listenOut).toContain(`"id":${orderId}`);

    const everything = [
      ...outputs,
      listenOut,
      listenErr,
      readFileSync(log, 'utf8'),
      readFileSync(report, 'utf8'),
      ...ledgerFiles(join(dir, 'config', 'ledger')).map((file) => readFileSync(file, 'utf8')),
    ].join('\n');
    // The session did trace, subscribe, receive and record: the search below has something to search.
    expect(everything).toContain('"journal":"nightly-import"');
    expect(everything).toContain('< 200 OK');
    expect(everything).toContain('"key":"[redacted]"');
    expect(everything).toContain('authorization: [redacted]');
    expect(everything).toMatch(/"x-webhook-key":"\[redacted\]"/);
    expect(everything).not.toContain(sandbox.tokens.full);
    expect(everything).not.toContain(sandbox.webhookKey);

    // Only --show-secrets prints the key, on stdout; the trace on stderr still hides it.
    const shown = await runBin(['api', 'GET', 'webhooks', '--show-secrets'], { env, cwd: dir });
    expect(shown.stdout).toContain(sandbox.webhookKey);
    expect(shown.stderr).toContain('< 200 OK');
    expect(shown.stderr).not.toContain(sandbox.webhookKey);
    expect(shown.stderr).not.toContain(sandbox.tokens.full);
  }, 120_000);
});

/** Every file of the order ledger (what orders create and the import recorded). */
function ledgerFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .map((name) => join(root, name))
    .filter((path) => statSync(path).isFile());
}
