/**
 * The PostgreSQL ledger's URL never shows its password: a URL the parser refuses (a password
 * holding `/`, `@` or `:` unencoded) is redacted by the one redactor and explained (percent-encode);
 * a password given with --ledger is masked in every stream and warned about; `config list` shows
 * it as `***`. No server is needed: nothing here connects.
 */
import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import { runCli } from '../support/cli.js';
import { order } from '../support/orders.js';

const OPTIONS = {
  baseUrl: 'http://127.0.0.1:9',
  kind: 'orders' as const,
  source: { by: 'orders create' as const },
};

async function openError(url: string): Promise<CliError> {
  const error = await PostgresLedger.open(url, OPTIONS).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('the PostgreSQL ledger URL', () => {
  it('that the parser refuses shows no part of its password, and says to percent-encode it', async () => {
    for (const [url, parts] of [
      ['postgres://ci:Tr0ub4dor/horse@localhost:56543/shared', ['Tr0ub4dor', 'horse']],
      // What the URL parser took for the host and port: `ss:w`, then the rest.
      ['postgres://ci:p@ss:w/rd%@localhost:56543/shared', ['p@ss', 'ss:w', 'w/rd', 'rd%']],
    ] as const) {
      const error = await openError(url);
      expect(error.exitCode).toBe(2);
      expect(error.message).toBe(
        'The ledger postgres://ci:***@localhost:56543/shared is not a PostgreSQL URL: use the form postgres://user:password@host:5432/database.',
      );
      expect(error.hint).toBe('Percent-encode @ : / and % in the user name or password: %40 %3A %2F %25.');
      for (const part of parts) expect(`${error.message} ${error.hint}`).not.toContain(part);
    }
  });

  it('given with --ledger is masked in every stream, with a one-line warning, and config list shows ***', async () => {
    const url = 'postgres://ci:Tr0ub4dor/horse@localhost:56543/shared';
    const created = await runCli(
      ['orders', 'create', '--file', '-', '--base-url', 'http://127.0.0.1:9', '--ledger', url],
      { stdin: JSON.stringify(order(1)) },
    );
    expect(created.code).toBe(2);
    expect(created.stderr).toContain(
      'error: The ledger postgres://ci:***@localhost:56543/shared is not a PostgreSQL URL',
    );
    expect(created.stderr).toContain('%40 %3A %2F');
    const warnings = created.stderr.split('\n').filter((line) => line.startsWith('warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/--ledger.*PGPASSWORD.*~\/\.pgpass.*ORDERCLI_LEDGER/);
    expect(created.stdout + created.stderr).not.toContain('Tr0ub4dor');

    const listed = await runCli([
      'config',
      'list',
      '--json',
      '--ledger',
      'postgres://ci:s3cret-pw@db:5432/x',
    ]);
    expect(listed.code).toBe(0);
    const ledger = (
      JSON.parse(listed.stdout) as { values: { key: string; effective: string }[] }
    ).values.find((row) => row.key === 'ledger');
    expect(ledger?.effective).toBe('postgres://ci:***@db:5432/x');
    expect(listed.stdout + listed.stderr).not.toContain('s3cret-pw');
  });

  it('in ORDERCLI_LEDGER or the profile is not warned about, and config list shows *** too', async () => {
    const fromEnv = await runCli(['config', 'list'], {
      env: { ORDERCLI_LEDGER: 'postgres://ci:s3cret-pw@db:5432/x' },
    });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stderr).not.toContain('warning:');
    expect(fromEnv.stdout).toContain('postgres://ci:***@db:5432/x');
    expect(fromEnv.stdout + fromEnv.stderr).not.toContain('s3cret-pw');
  });

  it('reaching a server that accepts and never answers: Ctrl-C exits 130 within 2 s, showing no password', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const controller = new AbortController();
      const run = runCli(['orders', 'create', '--file', '-', '--base-url', 'http://127.0.0.1:9'], {
        stdin: JSON.stringify(order(1)),
        env: { ORDERCLI_LEDGER: `postgres://ci:s3cret-pw@127.0.0.1:${port}/ledger` },
        signal: controller.signal,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = performance.now();
      controller.abort();
      const result = await run;
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(result.code).toBe(130);
      expect(result.stdout + result.stderr).not.toContain('s3cret-pw');
    } finally {
      silent.close();
    }
  });
});
