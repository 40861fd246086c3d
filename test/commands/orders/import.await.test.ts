// `--await validated` through the built binary against the sandbox: each created order waits for its
// sales_order_validated notification (received by ordercli's own receiver on 127.0.0.1, subscribed
// for the run, or read from a running `listen --log`), matched by its code. Exit 0 when all are
// validated, 5 when some are not within --await-timeout (in --json, the CSV report, JUnit and the
// step outputs); the ledger remembers, so a re-run sends nothing and waits only for what is not
// validated (asking the service for an order created before); Ctrl-C while waiting is 130.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runBin, tempDir, testEnv } from '../../support/cli.js';
import { freePort, spawnListen } from '../../support/listen.js';
import { postsTo, readCsvReport } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { standInPath } from '../../support/tunnels/index.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 50 });

const HEADER =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';

function workspace(count: number, prefix: string): { dir: string; env: Record<string, string> } {
  const dir = tempDir('ordercli-await-');
  const rows = Array.from(
    { length: count },
    (_, i) => `${prefix}-${i + 1},${301 + (i % 5)},Bar ${i},${401 + (i % 5)},1`,
  );
  writeFileSync(join(dir, 'orders.csv'), `${[HEADER, ...rows].join('\n')}\n`);
  return { dir, env: { ORDERCLI_CONFIG_DIR: join(dir, 'config'), ORDERCLI_TOKEN: sandbox.tokens.partner } };
}

function importArgs(...args: string[]): string[] {
  return ['--base-url', sandbox.url, 'orders', 'import', 'orders.csv', '--await', 'validated', ...args];
}

describe('orders import --await validated', () => {
  it('waits for the 20 validations: exit 0, each with its time, recorded in the ledger', async () => {
    const { dir, env } = workspace(20, 'AV');
    const result = await runBin([...importArgs('--json', '--report', 'report.csv'), '--concurrency', '4'], {
      cwd: dir,
      env,
    });
    expect(result.code, result.stderr).toBe(0);
    const json = JSON.parse(result.stdout);
    expect(json.counts).toMatchObject({ created: 20, validated: 20, notValidated: 0 });
    for (const order of json.orders) expect(order.validatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const report = readCsvReport(join(dir, 'report.csv'));
    expect(report).toHaveLength(20);
    for (const row of report) expect(row.validatedAt).toMatch(/^\d{4}-/);
    expect(result.stderr).toMatch(/validated\s+20/);
    expect(result.stderr).toContain('stays subscribed');
    // The ledger remembers: a re-run sends nothing and waits for nothing.
    const again = await runBin(importArgs('--json', '--await-timeout', '2s'), { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).counts).toMatchObject({
      created: 0,
      skipped: 20,
      validated: 20,
      notValidated: 0,
    });
    expect(postsTo(sandbox)).toBe(20);
    const listed = await runBin(
      ['--base-url', sandbox.url, 'ledger', 'list', '--status', 'validated', '--json'],
      { cwd: dir, env },
    );
    expect(JSON.parse(listed.stdout)).toHaveLength(20);
  });

  it('exit 5 when the validations come after --await-timeout: --json, the CSV report, JUnit and the step outputs say so', async () => {
    sandbox.reset();
    const slow = workspace(20, 'SL');
    // The sandbox of this file validates after 50 ms; this one after 20 s.
    const { startSandbox } = await import('../../../src/sandbox/server.js');
    const late = await startSandbox({ port: 0, quiet: true, validationDelayMs: 20_000 });
    try {
      const output = join(slow.dir, 'github-output');
      writeFileSync(output, '');
      const args = [
        '--base-url',
        late.url,
        'orders',
        'import',
        'orders.csv',
        '--await',
        'validated',
        '--await-timeout',
        '2s',
      ];
      const result = await runBin([...args, '--json', '--report', 'report.csv'], {
        cwd: slow.dir,
        env: { ...slow.env, GITHUB_OUTPUT: output },
      });
      expect(result.code, result.stderr).toBe(5);
      const json = JSON.parse(result.stdout);
      expect(json.counts).toMatchObject({ created: 20, validated: 0, notValidated: 20 });
      for (const order of json.orders) expect(order.validatedAt).toBeNull();
      for (const row of readCsvReport(join(slow.dir, 'report.csv'))) expect(row.validatedAt).toBe('');
      const outputs = readFileSync(output, 'utf8');
      expect(outputs).toMatch(/^validated<<(\S+)\n0\n\1$/m);
      expect(outputs).toMatch(/^not-validated<<(\S+)\n20\n\1$/m);
      expect(outputs).toMatch(/^exit-code<<(\S+)\n5\n\1$/m);
      // JUnit: each order a failure of its own.
      const junit = await runBin([...args, '--report', 'report.xml'], { cwd: slow.dir, env: slow.env });
      expect(junit.code, junit.stderr).toBe(5);
      const xml = readFileSync(join(slow.dir, 'report.xml'), 'utf8');
      expect(xml.match(/type="not-validated"/g)).toHaveLength(20);
      expect(xml).toMatch(/failures="20"/);
    } finally {
      await late.close();
    }
  });

  it('a re-run waits for orders created earlier: the service says which are validated', async () => {
    const { dir, env } = workspace(3, 'RE');
    const first = await runBin(['--base-url', sandbox.url, 'orders', 'import', 'orders.csv'], {
      cwd: dir,
      env,
    });
    expect(first.code, first.stderr).toBe(0);
    // Validated while nothing listened: their notifications went nowhere.
    await waitFor(() => sandbox.pending().validations === 0, 10_000, 'the validations');
    const again = await runBin(importArgs('--json', '--await-timeout', '5s'), { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).counts).toMatchObject({ skipped: 3, validated: 3, notValidated: 0 });
    expect(postsTo(sandbox)).toBe(3);
  });

  it('Ctrl-C while waiting: exit 130, the summary says what was validated so far', async () => {
    const { dir, env } = workspace(2, 'CC');
    const { startSandbox } = await import('../../../src/sandbox/server.js');
    const late = await startSandbox({ port: 0, quiet: true, validationDelayMs: 60_000 });
    try {
      const child = spawn(
        process.execPath,
        [BIN, '--base-url', late.url, 'orders', 'import', 'orders.csv', '--await', 'validated'],
        {
          cwd: dir,
          env: testEnv({ ...env, CI: 'true', ORDERCLI_PROGRESS_INTERVAL: '50ms' }),
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      await waitFor(() => stderr.includes('waiting for validations'), 20_000, 'the wait');
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(130);
      expect(stderr).toMatch(/not validated\s+2/);
    } finally {
      await late.close();
    }
  });

  it('--await-from reads the notifications a running listen --log receives', async () => {
    const { dir, env } = workspace(3, 'AF');
    const port = await freePort();
    const listen = await spawnListen(
      [
        '--port',
        String(port),
        '--subscribe',
        'sales_order_validated',
        '--public-url',
        `http://127.0.0.1:${port}/`,
        '--log',
        'events.ndjson',
      ],
      { ...env, ORDERCLI_BASE_URL: sandbox.url },
      dir,
    );
    try {
      const result = await runBin(
        importArgs('--json', '--await-from', 'events.ndjson', '--await-timeout', '10s'),
        { cwd: dir, env },
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).counts).toMatchObject({ created: 3, validated: 3 });
      expect(result.stderr).not.toContain('stays subscribed');
    } finally {
      listen.child.kill('SIGINT');
      await listen.exited;
    }
  });

  it('--tunnel cloudflared and --public-url with --await-port: the notifications come the way listen receives them', async () => {
    const { dir, env } = workspace(2, 'TU');
    const tunnelled = await runBin(
      importArgs('--json', '--tunnel', 'cloudflared', '--await-timeout', '15s'),
      {
        cwd: dir,
        env: { ...env, PATH: `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}` },
      },
    );
    expect(tunnelled.code, tunnelled.stderr).toBe(0);
    expect(JSON.parse(tunnelled.stdout).counts).toMatchObject({ created: 2, validated: 2 });
    const port = await freePort();
    const { dir: other, env: otherEnv } = workspace(2, 'PU');
    const routed = await runBin(
      importArgs('--json', '--public-url', `http://127.0.0.1:${port}/`, '--await-port', String(port)),
      { cwd: other, env: otherEnv },
    );
    expect(routed.code, routed.stderr).toBe(0);
    expect(JSON.parse(routed.stdout).counts).toMatchObject({ created: 2, validated: 2 });
    expect(routed.stderr).toContain(`stays subscribed to http://127.0.0.1:${port}/`);
    const noPort = await runBin(importArgs('--public-url', 'https://hooks.example.com/'), {
      cwd: other,
      env: otherEnv,
    });
    expect(noPort.code).toBe(2);
    expect(noPort.stderr).toContain('--await-port');
  });

  it('a webhook key the service does not use: said at once, and the refused notifications counted (exit 5)', async () => {
    const { dir, env } = workspace(2, 'WK');
    const result = await runBin(importArgs('--await-timeout', '2s'), {
      cwd: dir,
      env: { ...env, ORDERCLI_WEBHOOK_KEY: 'whk_not_the_sandbox_key_0123456789' },
    });
    expect(result.code, result.stderr).toBe(5);
    const stderr = result.stderr.replace(/\s+/g, ' ');
    expect(stderr).toContain('other than the one from ORDERCLI_WEBHOOK_KEY');
    expect(stderr).toMatch(/\d+ notifications? (was|were) refused for a wrong or missing X-WEBHOOK-KEY/);
    expect(stderr).not.toContain('whk_not_the_sandbox_key_0123456789');
    expect(stderr).not.toContain(sandbox.webhookKey);
  });

  it('exit 2 before anything is sent: a remote service with no way back, a dry run, a flag without --await', async () => {
    const { dir, env } = workspace(1, 'NO');
    const remote = await runBin(
      ['--base-url', 'https://orders.example.com', 'orders', 'import', 'orders.csv', '--await', 'validated'],
      { cwd: dir, env },
    );
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('--tunnel cloudflared');
    const dry = await runBin(importArgs('--dry-run'), { cwd: dir, env });
    expect(dry.code).toBe(2);
    const stray = await runBin(
      ['--base-url', sandbox.url, 'orders', 'import', 'orders.csv', '--await-timeout', '1s'],
      { cwd: dir, env },
    );
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--await-timeout goes with --await validated');
    // --await-from naming the input (as typed, or by another path) would only wait out the timeout.
    for (const from of ['orders.csv', `./../${dir.split('/').pop()}/orders.csv`]) {
      const slip = await runBin(importArgs('--await-from', from), { cwd: dir, env });
      expect(slip.code).toBe(2);
      expect(slip.stderr).toContain(`--await-from ${from} is the input of the orders`);
    }
    expect(postsTo(sandbox)).toBe(0);
  });
});

describe('orders create --await validated', () => {
  it('says when the order was validated; exit 5 when not in time', async () => {
    const dir = tempDir('ordercli-await-create-');
    const env = { ORDERCLI_CONFIG_DIR: join(dir, 'config'), ORDERCLI_TOKEN: sandbox.tokens.partner };
    const order = (id: string) => ({
      externalId: id,
      contact: { internalReferenceId: 301 },
      customer: { name: 'Bar' },
      items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
    });
    writeFileSync(join(dir, 'one.json'), JSON.stringify(order('CR-1')));
    const result = await runBin(
      ['--base-url', sandbox.url, 'orders', 'create', '--file', 'one.json', '--await', 'validated'],
      { cwd: dir, env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Validated after \d+\.\d s/);
    const { startSandbox } = await import('../../../src/sandbox/server.js');
    const late = await startSandbox({ port: 0, quiet: true, validationDelayMs: 20_000 });
    try {
      writeFileSync(join(dir, 'two.json'), JSON.stringify(order('CR-2')));
      const slow = await runBin(
        [
          '--base-url',
          late.url,
          'orders',
          'create',
          '--file',
          'two.json',
          '--await',
          'validated',
          '--await-timeout',
          '1s',
        ],
        { cwd: dir, env },
      );
      expect(slow.code, slow.stderr).toBe(5);
      expect(slow.stderr).toContain('not validated within the --await-timeout');
    } finally {
      await late.close();
    }
  });
});
