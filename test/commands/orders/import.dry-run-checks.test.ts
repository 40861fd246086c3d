// An import's dry run fails where the real run would, without sending an order: the token (one GET),
// the ledger (a local folder writable; PostgreSQL reached, logged in, its tables there or creatable
// and a claim insertable, rolled back) and the report. `--offline` checks the input alone. A
// PostgreSQL role without CREATE on `public` (PostgreSQL 15's default) is the case of the issue:
// the dry run says exit 1 with the grant to ask for, as the real run does; once an owner ran
// `ledger init --print-sql`'s SQL and granted the tables, both pass. Through the built binary.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../../support/postgres.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();

const HEADER =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';

function workspace(): string {
  const dir = tempDir('ordercli-dry-');
  writeFileSync(join(dir, 'orders.csv'), `${HEADER}\nK-1,301,Bar,401,1\nK-2,302,Café,402,2\n`);
  return dir;
}

function posts(): number {
  return sandbox.requests.filter((entry) => entry.method === 'POST').length;
}

function run(dir: string, args: string[], env: Record<string, string> = {}) {
  return runBin(['--base-url', sandbox.url, 'orders', 'import', 'orders.csv', ...args], {
    cwd: dir,
    env: { ORDERCLI_TOKEN: sandbox.tokens.partner, ...env },
  });
}

describe('orders import --dry-run checks what the real run needs', () => {
  it('a refused token is exit 3, as the real run; --offline checks the file alone', async () => {
    const dir = workspace();
    const refused = await run(dir, ['--dry-run'], { ORDERCLI_TOKEN: 'not-a-token' });
    expect(refused.code, refused.stderr).toBe(3);
    expect(posts()).toBe(0);
    const real = await run(dir, [], { ORDERCLI_TOKEN: 'not-a-token' });
    expect(real.code).toBe(3);
    const offline = await run(dir, ['--dry-run', '--offline'], { ORDERCLI_TOKEN: 'not-a-token' });
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toContain('2 orders read, 2 valid, 0 invalid; nothing was sent.');
    const alone = await runBin(['orders', 'import', 'orders.csv', '--dry-run', '--offline'], { cwd: dir });
    expect(alone.code, alone.stderr).toBe(0);
  });

  it('--offline without --dry-run is exit 2, nothing sent', async () => {
    const result = await run(workspace(), ['--offline']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--offline goes with --dry-run');
    expect(sandbox.requests).toHaveLength(0);
  });

  it('an unreachable service is exit 1', async () => {
    const dir = workspace();
    const result = await runBin(
      ['--base-url', 'http://127.0.0.1:9', 'orders', 'import', 'orders.csv', '--dry-run'],
      {
        cwd: dir,
        env: { ORDERCLI_TOKEN: 'x' },
      },
    );
    expect(result.code, result.stderr).toBe(1);
  });

  it('a report or a ledger that cannot be written is exit 2, as the real run', async () => {
    const dir = workspace();
    mkdirSync(join(dir, 'report.csv'));
    const report = await run(dir, ['--dry-run', '--report', 'report.csv']);
    expect(report.code).toBe(2);
    expect(report.stderr).toContain(
      'Cannot write the report report.csv (EISDIR: it is a folder); nothing was sent.',
    );
    writeFileSync(join(dir, 'ledger-file'), '');
    const ledger = await run(dir, ['--dry-run', '--ledger', 'ledger-file']);
    expect(ledger.code).toBe(2);
    expect(ledger.stderr).toContain('not a folder');
    expect(posts()).toBe(0);
  });

  it('a valid dry run leaves no ledger folder and no report behind', async () => {
    const dir = workspace();
    const result = await run(dir, ['--dry-run', '--ledger', 'state/ledger', '--report', 'out/report.csv']);
    expect(result.code, result.stderr).toBe(0);
    expect(posts()).toBe(0);
    const real = await run(dir, ['--ledger', 'state/ledger']);
    expect(real.code, real.stderr).toBe(0);
  });
});

const hasPostgres = requirePostgres('the dry run of an import on a PostgreSQL ledger it may not write');

describe.skipIf(!hasPostgres)('on a PostgreSQL ledger whose role may not create tables', () => {
  let server: RunningPostgres;
  let pg: typeof import('pg');
  const password = 'limited-pass-7';
  let limitedUrl: string;

  beforeAll(async () => {
    server = (await startPostgres())!;
    pg = await import('pg');
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    // A role that is not the database's owner: PostgreSQL 15 gives it no CREATE on public.
    await admin.query(`CREATE ROLE limited LOGIN PASSWORD '${password}'`);
    await admin.end();
    const url = new URL(server.url);
    url.username = 'limited';
    url.password = password;
    limitedUrl = url.href;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('the dry run fails as the real run (42501, with the grant to ask for); after ledger init and the grants both pass', async () => {
    const dir = workspace();
    const env = { ORDERCLI_LEDGER: limitedUrl };
    const dry = await run(dir, ['--dry-run', '--json'], env);
    expect(dry.code, dry.stderr).toBe(1);
    expect(dry.stderr).toContain('42501');
    expect(dry.stderr).toContain('GRANT CREATE ON SCHEMA "public" TO "limited"');
    expect(dry.stderr).toContain('ordercli ledger init --print-sql');
    expect(dry.stderr).not.toMatch(/check .*host, port, database/i);
    expect(dry.stderr + dry.stdout).not.toContain(password);
    const real = await run(dir, [], env);
    expect(real.code).toBe(1);
    expect(real.stderr).toContain('GRANT CREATE ON SCHEMA "public" TO "limited"');
    expect(posts()).toBe(0);

    // An owner creates the tables once, from the SQL ordercli prints, and grants them.
    const sql = await runBin(['ledger', 'init', '--print-sql'], { env: { ORDERCLI_LEDGER: limitedUrl } });
    expect(sql.code, sql.stderr).toBe(0);
    expect(sql.stdout).toContain('CREATE TABLE IF NOT EXISTS "public".ordercli_ledger');
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    await admin.query(sql.stdout);
    await admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO limited');
    await admin.end();

    const again = await run(dir, ['--dry-run'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(posts()).toBe(0);
    const imported = await run(dir, [], env);
    expect(imported.code, imported.stderr).toBe(0);
    expect(posts()).toBe(2);
  });

  it('ledger init creates the tables for a role that may; --print-sql names the schema of ?schema=', async () => {
    const url = `${server.url}${server.url.includes('?') ? '&' : '?'}schema=init_here`;
    const init = await runBin(['ledger', 'init'], { env: { ORDERCLI_LEDGER: url } });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stderr).toContain('is ready');
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    const { rows } = await client.query(
      "SELECT to_regclass('init_here.ordercli_ledger') IS NOT NULL AS present",
    );
    await client.end();
    expect(rows[0].present).toBe(true);
    const sql = await runBin(['ledger', 'init', '--print-sql'], { env: { ORDERCLI_LEDGER: url } });
    expect(sql.stdout).toContain('CREATE SCHEMA IF NOT EXISTS "init_here";');
  });
});
