// The `ledger` group on a PostgreSQL ledger (a throwaway cluster, test/support/postgres.ts),
// against real sandboxes: the move from the default local ledger (refused until `ledger copy`,
// then what was created is refused and what is new is sent), `ledger list` and `ledger status`
// of what PostgreSQL holds, `ledger forget`; the password never shown. Without PostgreSQL server
// binaries it does not run and prints a SKIPPED line; with CI set it fails instead.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../../src/io/free-port.js';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.js';
import { type CliResult, runBin } from '../../support/cli.js';
import { FIXTURES } from '../../support/import-input.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../../support/postgres.js';
import { stripAnsi } from '../../support/session.js';
import { at, CREATED, FAILED, IN_DOUBT, machine, NOT_CREATED, posts, seedEveryStatus } from './seed.js';

const hasPostgres = requirePostgres(
  'the ledger commands on PostgreSQL (test/commands/ledger/copy.postgres.test.ts)',
);

const ORDER = JSON.parse(readFileSync(join(FIXTURES, 'order.json'), 'utf8')) as Record<string, unknown>;

describe.skipIf(!hasPostgres)('the ledger commands on PostgreSQL', () => {
  let server: RunningPostgres;
  /** The URL without its password (as the contract advises), for PGPASSWORD. */
  let bare: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    server = (await startPostgres())!;
    bare = server.url.replace(`:${server.password}@`, '@');
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  // A service of its own for each test: they share one database. A port the system hands out
  // again after a close would name an earlier test's service: each test's port is a new one.
  const ports = new Set<number>();
  async function newSandbox(): Promise<Sandbox> {
    let port = await freeLoopbackPort();
    while (ports.has(port)) port = await freeLoopbackPort();
    ports.add(port);
    return startSandbox({ port, quiet: true, validationDelayMs: 10 });
  }
  beforeAll(async () => {
    sandbox = await newSandbox();
  });
  afterEach(async () => {
    await sandbox.close();
    sandbox = await newSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  function neverShowsPassword(...results: CliResult[]): void {
    for (const result of results) {
      expect(result.stdout).not.toContain(server.password);
      expect(result.stderr).not.toContain(server.password);
    }
  }

  function orderFile(on: ReturnType<typeof machine>, name: string, externalId: string): string {
    writeFileSync(join(on.cwd, name), JSON.stringify({ ...ORDER, externalId }));
    return name;
  }

  it('a move to PostgreSQL: refused until ledger copy; then created orders are refused and new ones sent', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const pg = ['--ledger', server.url];
    const before = posts(sandbox);
    const refused = await on.run([
      ...at(sandbox),
      ...pg,
      'orders',
      'create',
      '--file',
      orderFile(on, 'new.json', 'NEW-0001'),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `has no record of ${sandbox.url}, but the default ledger ${join(on.configDir, 'ledger')} holds orders of it (created or in doubt, such as`,
    );
    // The password redacted, the URL quoted for the shell (`*`).
    expect(refused.stderr).toMatch(
      /ledger copy --to 'postgres:\/\/ci:\*\*\*@127\.0\.0\.1:\d+\/ledger', or pass --force/,
    );
    expect(posts(sandbox)).toBe(before);

    const copied = await on.run(['--json', 'ledger', 'copy', '--to', server.url]);
    expect(copied.code, copied.stderr).toBe(0);
    const report = JSON.parse(copied.stdout) as {
      to: string;
      services: { service: string; copied: number; known: number }[];
    };
    expect(report.to).toMatch(/^postgres:\/\/ci:\*\*\*@127\.0\.0\.1:\d+\/ledger$/);
    expect(report.services).toEqual([expect.objectContaining({ service: sandbox.url, copied: 4, known: 0 })]);
    const again = await on.run(['ledger', 'copy', '--to', server.url]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('0 copied, 4 already there');
    neverShowsPassword(refused, copied, again);

    const created = await on.run([
      ...at(sandbox),
      ...pg,
      'orders',
      'create',
      '--file',
      orderFile(on, 'old.json', CREATED[0]!),
    ]);
    expect(created.code).toBe(2);
    expect(created.stderr).toContain(`"${CREATED[0]}" already exists at ${sandbox.url}`);
    const doubt = await on.run([
      ...at(sandbox),
      ...pg,
      'orders',
      'create',
      '--file',
      orderFile(on, 'doubt.json', IN_DOUBT),
    ]);
    expect(doubt.code).toBe(2);
    expect(posts(sandbox)).toBe(before);
    const sent = await on.run([...at(sandbox), ...pg, 'orders', 'create', '--file', 'new.json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(posts(sandbox)).toBe(before + 1);
  });

  it('ledger list and ledger status read what PostgreSQL holds: JSON, on a terminal, piped', async () => {
    const on = machine();
    // Straight into PostgreSQL: the default ledger holds nothing, so no move check applies.
    await seedEveryStatus(sandbox, on, ['--ledger', server.url]);
    const pg = ['--ledger', server.url];
    const json = await on.run([...at(sandbox), ...pg, '--json', 'ledger', 'list']);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as {
      externalId: string;
      status: string;
      input: string;
      line: number;
    }[];
    expect(rows.map((row) => [row.externalId, row.status]).sort()).toEqual(
      [
        [IN_DOUBT, 'in-doubt'],
        [FAILED, 'failed'],
        [NOT_CREATED, 'not-created'],
        ...CREATED.map((id) => [id, 'created']),
      ].sort(),
    );
    expect(rows.find((row) => row.externalId === IN_DOUBT)).toMatchObject({
      input: 'orders.ndjson',
      line: 1,
    });
    const doubt = await on.run([...at(sandbox), ...pg, 'ledger', 'list', '--status', 'in-doubt']);
    expect(doubt.stdout.split('\t').slice(0, 3)).toEqual([IN_DOUBT, 'in-doubt', 'orders.ndjson']);
    const table = await on.run([...at(sandbox), ...pg, 'ledger', 'list'], { tty: true, columns: 200 });
    expect(stripAnsi(table.stdout)).toMatch(new RegExp(`${FAILED}\\s*│\\s*failed`));

    const status = await on.run([...pg, '--json', 'ledger', 'status']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as {
      location: string;
      backend: string;
      services: { service: string; kind: string; counts: Record<string, number> }[];
    };
    expect(report.backend).toBe('postgres');
    expect(report.location).toMatch(/^postgres:\/\/ci:\*\*\*@127\.0\.0\.1:\d+\/ledger$/);
    expect(report.services).toContainEqual({
      service: sandbox.url,
      kind: 'orders',
      counts: { 'in-doubt': 1, claimed: 0, created: 3, validated: 0, failed: 1, 'not-created': 1, total: 6 },
    });
    const text = await on.run([...pg, 'ledger', 'status']);
    expect(text.stdout).toContain('(PostgreSQL)');

    // And back: from PostgreSQL into a folder.
    const back = await on.run([...pg, '--json', 'ledger', 'copy', '--to', 'back']);
    expect(back.code, back.stderr).toBe(0);
    expect((JSON.parse(back.stdout) as { services: { service: string }[] }).services).toContainEqual(
      expect.objectContaining({ service: sandbox.url, kind: 'orders', copied: 4, known: 0 }),
    );
    const local = await on.run([
      ...at(sandbox),
      '--ledger',
      'back',
      '--json',
      'ledger',
      'list',
      '--status',
      'in-doubt',
    ]);
    expect(JSON.parse(local.stdout)).toEqual([expect.objectContaining({ externalId: IN_DOUBT, line: 1 })]);
    neverShowsPassword(json, doubt, table, status, text, back, local);
  });

  it('ledger forget drops a service of the PostgreSQL ledger (--force for the one in doubt)', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on, ['--ledger', server.url]);
    const pg = ['--ledger', server.url];
    const refused = await on.run([...pg, 'ledger', 'forget', '--service', sandbox.url]);
    expect(refused.code).toBe(2);
    const dropped = await on.run([...pg, 'ledger', 'forget', '--service', sandbox.url, '--force']);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toContain(`Forgot 6 keys of ${sandbox.url}`);
    const listed = await on.run([...at(sandbox), ...pg, '--json', 'ledger', 'list']);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    neverShowsPassword(refused, dropped, listed);
  });

  it('through the built binary: ORDERCLI_LEDGER without the password, PGPASSWORD beside it', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on, ['--ledger', server.url]);
    const env = { ...on.env, ORDERCLI_LEDGER: bare, PGPASSWORD: server.password };
    const listed = await runBin([...at(sandbox), 'ledger', 'list', '--status', 'in-doubt', '--json'], {
      env,
      cwd: on.cwd,
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { externalId: string }[]).map((row) => row.externalId)).toEqual([
      IN_DOUBT,
    ]);
    const status = await runBin(['ledger', 'status'], { env, cwd: on.cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`${bare} (PostgreSQL)`);
  });
});
