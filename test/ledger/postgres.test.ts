/**
 * The PostgreSQL ledger's own ways, against a real server (a throwaway cluster,
 * test/support/postgres.ts): its tables and the columns of its rows, owners judged by the server's
 * clock, prefetch in chunks, schemas and roles, and errors that never show the password. What every
 * store guarantees (claims raced, outcomes, takeovers, liveness, resolve, list, adopt, one service
 * under two names) is the contract suite's: test/ledger/store.contract.test.ts. Without PostgreSQL
 * server binaries it does not run, and says so in one SKIPPED line; with `CI` set it fails instead
 * (test/support/requirements.ts).
 */
import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { thisProcess } from '../../src/core/liveness.js';
import { LedgerWriteError } from '../../src/ledger/errors.js';
import { PostgresLedger, redactLedgerUrl } from '../../src/ledger/postgres.js';
import { type LedgerEntry, type LedgerRecord, stateKey } from '../../src/ledger/record.js';
import type { Claim, ClaimResult, LedgerKind } from '../../src/ledger/store.js';
import { pooled } from '../support/ledger-backends.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const hasPostgres = requirePostgres('the PostgreSQL ledger tests (test/ledger/postgres.test.ts)');

let services = 0;
/** A service of its own for each test: the tests share one database. */
function newService(): string {
  services++;
  return `https://orders-${services}.example.test/`;
}

function claimOf(result: ClaimResult): Claim {
  if (!result.claimed) throw new Error(`not claimed: ${result.refusal.reason}`);
  return result.claim;
}

describe.skipIf(!hasPostgres)('PostgresLedger', () => {
  let server: RunningPostgres;
  let sql: pg.Client;
  const opened: PostgresLedger[] = [];

  beforeAll(async () => {
    server = (await startPostgres())!;
    sql = new pg.Client({ connectionString: server.url });
    await sql.connect();
  }, 60_000);

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((ledger) => ledger.close()));
  });

  afterAll(async () => {
    await sql?.end();
    await server?.stop();
  });

  async function open(
    baseUrl: string,
    options: { journal?: string; kind?: LedgerKind; readOnly?: boolean } = {},
  ): Promise<PostgresLedger> {
    const ledger = await PostgresLedger.open(server.url, {
      baseUrl,
      kind: options.kind ?? 'orders',
      source: {
        by: 'orders import',
        input: '/data/in.csv',
        ...(options.journal ? { journal: options.journal } : {}),
      },
      readOnly: options.readOnly,
    });
    opened.push(ledger);
    return ledger;
  }

  async function rowOf(
    baseUrl: string,
    key: string,
  ): Promise<{ status: string; token: string; entry: LedgerEntry }> {
    const { rows } = await sql.query(
      'SELECT status, token, entry FROM ordercli_ledger WHERE service = $1 AND kind = $2 AND external_id = $3',
      [baseUrl.replace(/\/$/, ''), 'orders', key],
    );
    return rows[0];
  }

  /** Makes a key's claim look like one of a process in another PID namespace (judged by its heartbeat). */
  async function ownClaimBy(baseUrl: string, key: string, ownerId: string, beatAgo: string | undefined) {
    const owner = {
      host: 'worker-7',
      boot: thisProcess().boot,
      pidns: 'pid:[4026539999]',
      pid: 4242,
      id: ownerId,
    };
    await sql.query(
      `UPDATE ordercli_ledger SET owner = $4::jsonb, entry = jsonb_set(entry, '{owner}', $4::jsonb)
       WHERE service = $1 AND kind = $2 AND external_id = $3`,
      [baseUrl.replace(/\/$/, ''), 'orders', key, JSON.stringify(owner)],
    );
    await sql.query('DELETE FROM ordercli_ledger_owners WHERE id = $1', [ownerId]);
    if (beatAgo !== undefined) {
      await sql.query(
        `INSERT INTO ordercli_ledger_owners (id, identity, beat_at) VALUES ($1, $2::jsonb, now() - $3::interval)`,
        [ownerId, JSON.stringify(owner), beatAgo],
      );
    }
  }

  /** Every row of a service: its status, token, owner and state_key columns are its entry's. */
  async function expectRowsAgree(baseUrl: string, count: number): Promise<void> {
    const { rows } = await sql.query(
      'SELECT status, token, owner, state_key, entry FROM ordercli_ledger WHERE service = $1 AND kind = $2',
      [baseUrl.replace(/\/$/, ''), 'orders'],
    );
    expect(rows).toHaveLength(count);
    for (const row of rows as {
      status: string;
      token: string | null;
      owner: unknown;
      state_key: string;
      entry: LedgerEntry;
    }[]) {
      expect(row.status).toBe(row.entry.status);
      expect(row.token).toBe(row.entry.token ?? null);
      expect(row.owner).toEqual(row.entry.owner ?? null);
      expect(row.state_key).toBe(stateKey(row.entry));
    }
  }

  it('creates its tables when two stores open at once, and names the server without its password', async () => {
    const service = newService();
    const [a, b] = await Promise.all([open(service), open(service)]);
    expect(a.location).not.toContain(server.password);
    expect(a.location).toMatch(/^postgres:\/\/ci:\*\*\*@127\.0\.0\.1:\d+\/ledger$/);
    expect(a.baseUrl).toBe(service.replace(/\/$/, ''));
    expect(a.owner.id).not.toBe(b.owner.id);
    const { rows } = await sql.query(
      "SELECT to_regclass('ordercli_ledger') AS l, to_regclass('ordercli_ledger_records') AS r, to_regclass('ordercli_ledger_owners') AS o",
    );
    expect(rows[0]).toEqual({
      l: 'ordercli_ledger',
      r: 'ordercli_ledger_records',
      o: 'ordercli_ledger_owners',
    });
    // Each open store beats on the server's clock; a closed one is gone.
    const beats = await sql.query('SELECT id FROM ordercli_ledger_owners WHERE id = ANY($1)', [
      [a.owner.id, b.owner.id],
    ]);
    expect(beats.rowCount).toBe(2);
    // The heartbeat moves on the server's clock (every HEARTBEAT_MS).
    const beatOf = async () =>
      (await sql.query('SELECT beat_at FROM ordercli_ledger_owners WHERE id = $1', [a.owner.id])).rows[0]
        ?.beat_at as Date;
    const first = await beatOf();
    const next = await waitFor(
      async () => {
        const beat = await beatOf();
        return beat.getTime() !== first.getTime() && beat;
      },
      5_000,
      'the next heartbeat',
    );
    expect(next.getTime()).toBeGreaterThan(first.getTime());
    await a.close();
    const after = await sql.query('SELECT id FROM ordercli_ledger_owners WHERE id = $1', [a.owner.id]);
    expect(after.rowCount).toBe(0);
  });

  // Which claim wins is the contract suite's; here, the rows and the history the race leaves.
  it('after two stores raced 500 claims and wrote their outcomes, each row’s columns agree with its entry', async () => {
    const service = newService();
    const [a, b] = await Promise.all([open(service), open(service)]);
    const keys = Array.from({ length: 500 }, (_, i) => `RACE-${i}`);
    const backwards = [...keys].reverse();
    const claimAll = (ledger: PostgresLedger, order: string[]) =>
      pooled(order, 8, async (externalId) => ({
        externalId,
        result: await ledger.claim({ externalId, bodyHash: 'h', line: 1 }),
      }));
    const [fromA, fromB] = await Promise.all([claimAll(a, keys), claimAll(b, backwards)]);
    // Outcomes of the winners, not awaited, then synced.
    for (const [ledger, results] of [
      [a, fromA],
      [b, fromB],
    ] as const) {
      for (const { result } of results) {
        if (result.claimed) ledger.created(result.claim, { httpStatus: 201, id: 1, code: 'SO-1' });
      }
    }
    await Promise.all([a.sync(), b.sync()]);
    const { rows } = await sql.query(
      'SELECT status, count(*)::integer AS n FROM ordercli_ledger WHERE service = $1 GROUP BY status',
      [a.baseUrl],
    );
    expect(rows).toEqual([{ status: 'created', n: 500 }]);
    await expectRowsAgree(a.baseUrl, 500);
  });

  it('deletes the row of a key whose only claim was not sent; puts back the row of a state taken over', async () => {
    const service = newService();
    const ledger = await open(service);
    const fresh = claimOf(await ledger.claim({ externalId: 'NS-1', bodyHash: 'h' }));
    ledger.notSent(fresh, 'interrupted');
    await ledger.sync();
    expect(await rowOf(service, 'NS-1')).toBeUndefined();
    ledger.failed(claimOf(await ledger.claim({ externalId: 'NS-2', bodyHash: 'h' })), { message: 'no' });
    await ledger.sync();
    const refused = await rowOf(service, 'NS-2');
    ledger.notSent(claimOf(await ledger.claim({ externalId: 'NS-2', bodyHash: 'h' })), 'interrupted');
    await ledger.sync();
    expect(await rowOf(service, 'NS-2')).toEqual(refused);
  });

  it("refuses a claim whose owner's heartbeat is stale as in doubt (never re-sent), and a beating one as claimed", async () => {
    const service = newService();
    const [a, b] = await Promise.all([open(service), open(service)]);
    claimOf(await a.claim({ externalId: 'HB', bodyHash: 'h' }));
    // An owner in another PID namespace (judgeProcess cannot tell) whose beat is an hour old.
    await ownClaimBy(service, 'HB', 'stale-owner', '1 hour');
    const stale = await b.claim({ externalId: 'HB', bodyHash: 'h' });
    expect(stale).toMatchObject({
      claimed: false,
      refusal: { reason: 'in-doubt', entry: { status: 'in-doubt', event: 'unknown' } },
    });
    // The doubt names the owner that left it.
    expect(!stale.claimed && stale.refusal.entry.owner).toMatchObject({ id: 'stale-owner' });
    // The same owner beating (by the server's clock): alive, being sent.
    await ownClaimBy(service, 'HB', 'stale-owner', '1 second');
    expect(await b.claim({ externalId: 'HB', bodyHash: 'h', takeOverDoubt: true })).toMatchObject({
      claimed: false,
      refusal: { reason: 'claimed', entry: { owner: { id: 'stale-owner' } } },
    });
    // Known only from a prefetch, the owner's liveness is the server's to check when taking over.
    const prefetched = await open(service);
    await prefetched.prefetch(['HB']);
    expect(await prefetched.claim({ externalId: 'HB', bodyHash: 'h', takeOverDoubt: true })).toMatchObject({
      claimed: false,
      refusal: { reason: 'claimed' },
    });
    // Its row gone (it closed): in doubt again; takeOverDoubt takes it, once.
    await ownClaimBy(service, 'HB', 'stale-owner', undefined);
    expect(await b.claim({ externalId: 'HB', bodyHash: 'h' })).toMatchObject({
      refusal: { reason: 'in-doubt' },
    });
    const taken = await Promise.all([
      a.claim({ externalId: 'HB', bodyHash: 'h', takeOverDoubt: true }),
      b.claim({ externalId: 'HB', bodyHash: 'h', takeOverDoubt: true }),
    ]);
    expect(taken.filter((result) => result.claimed)).toHaveLength(1);
    expect((await rowOf(service, 'HB')).status).toBe('claimed');
  });

  it('adopts into rows whose columns agree with their entry, only for keys the table has no row of', async () => {
    const service = newService();
    const ledger = await open(service, { journal: '/data/in.journal.ndjson' });
    const existing = claimOf(await ledger.claim({ externalId: 'AD-1', bodyHash: 'h' }));
    ledger.created(existing, { httpStatus: 201, id: 1 });
    await ledger.sync();
    const before = await ledger.lookup('AD-1');
    const at = '2026-11-20T10:00:00.000Z';
    const owner = { host: 'old', pid: 1, id: 'old-owner' };
    const records: LedgerRecord[] = [
      { externalId: 'AD-1', event: 'claim', at, token: 't1', owner, by: 'orders import' },
      {
        externalId: 'AD-1',
        event: 'failed',
        at,
        token: 't1',
        httpStatus: 422,
        message: 'no',
        by: 'orders import',
      },
      { externalId: 'AD-2', event: 'claim', at, token: 't2', owner, by: 'orders import', journal: '/j' },
      { externalId: 'AD-2', event: 'created', at, token: 't2', httpStatus: 201, id: 2, journal: '/j' },
      { externalId: 'AD-3', event: 'claim', at, token: 't3', owner, by: 'orders import' },
      { externalId: 'AD-3', event: 'not-sent', at, token: 't3', reason: 'interrupted' },
    ];
    await ledger.adopt(records);
    expect(await ledger.lookup('AD-1')).toEqual(before);
    expect(await rowOf(service, 'AD-2')).toMatchObject({ status: 'created', token: 't2' });
    await expectRowsAgree(ledger.baseUrl, 2);
    expect(await rowOf(service, 'AD-3')).toBeUndefined();
  });

  it('prefetches an import’s worth of keys in chunks', async () => {
    const service = newService();
    const writer = await open(service);
    writer.created(claimOf(await writer.claim({ externalId: 'PF-C1', bodyHash: 'h' })), { httpStatus: 201 });
    writer.unknown(claimOf(await writer.claim({ externalId: 'PF-D', bodyHash: 'h' })), 'reset');
    await writer.sync();
    const big = await open(service);
    const many = Array.from({ length: 25_000 }, (_, i) => `PF-MANY-${i}`);
    // One in the second chunk, one in the third.
    many.splice(12_345, 0, 'PF-C1');
    many.splice(24_000, 0, 'PF-D');
    await big.prefetch(many);
    expect(big.prefetchedCounts()).toEqual({ created: 1, inDoubt: 1 });
    expect(big.knows('PF-C1') && big.knows('PF-D') && !big.knows('PF-MANY-0')).toBe(true);
  });

  it('a read-only store writes no heartbeat row', async () => {
    const service = newService();
    const reader = await open(service, { readOnly: true });
    expect(await reader.lookup('K-1')).toBeUndefined();
    const beats = await sql.query('SELECT 1 FROM ordercli_ledger_owners WHERE id = $1', [reader.owner.id]);
    expect(beats.rowCount).toBe(0);
  });

  it('turns a write that fails after open into a LedgerWriteError that shows no password, and stops claims', async () => {
    const service = 'https://broken.example.test/';
    // A trigger refuses this service's rows, with the password in its message (pg's never have it).
    await sql.query(`CREATE FUNCTION ordercli_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.service = 'https://broken.example.test' THEN
          RAISE EXCEPTION 'refused by a test trigger (%)', ${pg.escapeLiteral(server.password)};
        END IF;
        RETURN NEW;
      END $$`);
    await sql.query(
      'CREATE TRIGGER ordercli_test_refuse BEFORE INSERT OR UPDATE ON ordercli_ledger FOR EACH ROW EXECUTE FUNCTION ordercli_test_refuse()',
    );
    try {
      const ledger = await open(service);
      const error = await ledger.claim({ externalId: 'BRK', bodyHash: 'h' }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(LedgerWriteError);
      const failure = error as LedgerWriteError;
      expect(failure.exitCode).toBe(1);
      expect(failure.message).toBe(
        `Cannot write the order ledger ${ledger.location} (P0001 refused by a test trigger (***)), so nothing more was sent.`,
      );
      expect(`${failure.message} ${failure.details.join(' ')} ${String(failure.cause)}`).not.toContain(
        server.password,
      );
      await expect(ledger.sync()).rejects.toBe(failure);
      await expect(ledger.claim({ externalId: 'BRK-2', bodyHash: 'h' })).rejects.toBe(failure);
    } finally {
      await sql.query('DROP TRIGGER ordercli_test_refuse ON ordercli_ledger');
      await sql.query('DROP FUNCTION ordercli_test_refuse()');
    }
  });

  it('says a server that cannot be reached, or refuses the login, in one sentence without the password', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address();
        probe.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
      });
    });
    const secret = 'sup3r-s3cret-pw';
    const options = {
      baseUrl: 'https://orders.example.test',
      kind: 'orders' as const,
      source: { by: 'orders create' as const },
    };
    const unreachable = await PostgresLedger.open(
      `postgres://ci:${secret}@127.0.0.1:${port}/ledger`,
      options,
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(unreachable).toBeInstanceOf(CliError);
    expect((unreachable as CliError).exitCode).toBe(1);
    expect((unreachable as CliError).message).toBe(
      `Cannot reach the PostgreSQL ledger postgres://ci:***@127.0.0.1:${port}/ledger (ECONNREFUSED), so nothing was sent.`,
    );
    expect(
      JSON.stringify({ ...(unreachable as CliError), message: (unreachable as CliError).message }),
    ).not.toContain(secret);
    const wrong = server.url.replace(server.password, secret);
    const refused = await PostgresLedger.open(wrong, options).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(CliError);
    expect((refused as CliError).exitCode).toBe(1);
    expect((refused as CliError).message).toMatch(
      /^The PostgreSQL ledger postgres:\/\/ci:\*\*\*@127\.0\.0\.1:\d+\/ledger refused the login \(.*\), so nothing was sent\.$/,
    );
    expect(`${(refused as CliError).message} ${(refused as CliError).details.join(' ')}`).not.toContain(
      secret,
    );
    expect(redactLedgerUrl(`postgresql://u:${secret}@db:5432/x?sslmode=require`)).toBe(
      'postgresql://u:***@db:5432/x?sslmode=require',
    );
    expect(redactLedgerUrl(`postgres://db/x?password=${secret}`)).not.toContain(secret);
  });
  it('judges owners elsewhere by their beats on the server’s clock, in list and in openers', async () => {
    const service = newService();
    const a = await open(service);
    await a.claim({ externalId: 'L-4', bodyHash: 'h', line: 7 });
    claimOf(await a.claim({ externalId: 'L-5', bodyHash: 'h', line: 7 }));
    // L-5's owner is in another PID namespace, its heartbeat an hour old by the server's clock.
    await ownClaimBy(service, 'L-5', 'gone-owner', '1 hour');
    const listed = await a.list();
    expect(listed.map(({ externalId, entry }) => [externalId, entry.status])).toEqual([
      ['L-4', 'claimed'],
      ['L-5', 'in-doubt'],
    ]);
    expect(listed[1]!.entry).toMatchObject({ event: 'unknown', line: 7, owner: { id: 'gone-owner' } });
    // Who has it open: a far owner beating, one not beating for long (another host: 'alive' or
    // 'dead' by the server's clock, where the local store says 'unknown').
    const far = { host: 'runner-9', boot: 'another-boot', pid: 77 };
    await sql.query(
      `INSERT INTO ordercli_ledger_owners (id, identity, beat_at) VALUES
        ('far-beating', $1::jsonb, now()), ('far-silent', $2::jsonb, now() - interval '1 hour')`,
      [JSON.stringify({ ...far, id: 'far-beating' }), JSON.stringify({ ...far, id: 'far-silent' })],
    );
    try {
      const openers = new Map((await a.openers()).map((opener) => [opener.owner.id, opener.alive]));
      expect(openers.get(a.owner.id)).toBe('alive');
      expect(openers.get('far-beating')).toBe('alive');
      expect(openers.get('far-silent')).toBe('dead');
    } finally {
      await sql.query("DELETE FROM ordercli_ledger_owners WHERE id LIKE 'far-%'");
    }
  });

  it('names the services it holds, and forgets one (every kind, and its history)', async () => {
    const [keep, drop] = [newService(), newService()];
    for (const [service, kind, key] of [
      [keep, 'orders', 'F-1'],
      [drop, 'orders', 'F-1'],
      [drop, 'orders', 'F-2'],
      [drop, 'contact-references', 'F-1'],
    ] as const) {
      const ledger = await open(service, { kind });
      ledger.created(claimOf(await ledger.claim({ externalId: key, bodyHash: 'h' })), { httpStatus: 201 });
      await ledger.sync();
    }
    const normalized = (url: string) => url.replace(/\/$/, '');
    const services = await PostgresLedger.services(server.url);
    expect(services).toContainEqual({ baseUrl: normalized(drop), kind: 'orders' });
    expect(services).toContainEqual({ baseUrl: normalized(drop), kind: 'contact-references' });
    expect(services).toContainEqual({ baseUrl: normalized(keep), kind: 'orders' });
    expect(await PostgresLedger.forget(server.url, drop)).toBe(3);
    expect(await PostgresLedger.forget(server.url, drop)).toBe(0);
    expect((await PostgresLedger.services(server.url)).map((s) => s.baseUrl)).not.toContain(normalized(drop));
    const history = await sql.query('SELECT 1 FROM ordercli_ledger_records WHERE service = $1', [
      normalized(drop),
    ]);
    expect(history.rowCount).toBe(0);
    expect(await rowOf(keep, 'F-1')).toMatchObject({ status: 'created' });
    // A schema without the tables holds nothing, and nothing is created there to say so.
    expect(await PostgresLedger.services(`${server.url}?schema=nothing_here`)).toEqual([]);
    expect(await PostgresLedger.forget(`${server.url}?schema=nothing_here`, keep)).toBe(0);
    const schemas = await sql.query("SELECT 1 FROM pg_namespace WHERE nspname = 'nothing_here'");
    expect(schemas.rowCount).toBe(0);
  });

  it('writes what another name of the service claims in the rows of the name it has', async () => {
    const port = 40_000 + services;
    services++;
    const byAddress = await open(`http://127.0.0.1:${port}`);
    byAddress.created(claimOf(await byAddress.claim({ externalId: 'SAME-1', bodyHash: 'h' })), {
      httpStatus: 201,
    });
    await byAddress.sync();
    const byName = await open(`http://localhost:${port}/`);
    claimOf(await byName.claim({ externalId: 'SAME-2', bodyHash: 'h' }));
    expect(await rowOf(`http://127.0.0.1:${port}`, 'SAME-2')).toMatchObject({ status: 'claimed' });
    expect(await rowOf(`http://localhost:${port}`, 'SAME-2')).toBeUndefined();
  });

  it('keeps its tables in the schema the URL or ORDERCLI_LEDGER_SCHEMA names', async () => {
    const service = newService();
    const options = { baseUrl: service, kind: 'orders' as const, source: { by: 'orders create' as const } };
    const byUrl = await PostgresLedger.open(`${server.url}?schema=Fleet%20Ledger`, options);
    opened.push(byUrl);
    const byEnv = await PostgresLedger.open(server.url, options, {
      env: { ORDERCLI_LEDGER_SCHEMA: 'Fleet Ledger' },
    });
    opened.push(byEnv);
    const inPublic = await open(service);
    expect(byUrl.location).toBe(`${server.url.replace(server.password, '***')}?schema=Fleet%20Ledger`);
    claimOf(await byUrl.claim({ externalId: 'SCH-1', bodyHash: 'h' }));
    expect(await byEnv.claim({ externalId: 'SCH-1', bodyHash: 'h' })).toMatchObject({
      refusal: { reason: 'claimed' },
    });
    // The public schema's ledger is another one.
    claimOf(await inPublic.claim({ externalId: 'SCH-1', bodyHash: 'h' }));
    const tables = await sql.query(
      "SELECT schemaname FROM pg_tables WHERE tablename = 'ordercli_ledger' ORDER BY schemaname",
    );
    expect(tables.rows.map((row) => row.schemaname)).toEqual(['Fleet Ledger', 'public']);
  });

  it('gives two roles whose own schemas come first in their search_path one ledger (public by default)', async () => {
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE fleet OWNER ci');
      for (const role of ['runner_a', 'runner_b']) {
        await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${role}-pw'`);
      }
    } finally {
      await admin.end();
    }
    const fleet = new pg.Client({ connectionString: server.adminUrl.replace(/\/ledger$/, '/fleet') });
    await fleet.connect();
    try {
      for (const [role, other] of [
        ['runner_a', 'runner_b'],
        ['runner_b', 'runner_a'],
      ]) {
        // A schema of its own, first in its search_path ("$user", public); both may create in public.
        await fleet.query(`CREATE SCHEMA ${role} AUTHORIZATION ${role}`);
        await fleet.query(`GRANT CREATE ON SCHEMA public TO ${role}`);
        for (const what of ['TABLES', 'SEQUENCES'])
          await fleet.query(
            `ALTER DEFAULT PRIVILEGES FOR ROLE ${role} IN SCHEMA public GRANT ALL ON ${what} TO ${other}`,
          );
      }
    } finally {
      await fleet.end();
    }
    const port = new URL(server.url).port;
    const service = newService();
    const [a, b] = await Promise.all(
      ['runner_a', 'runner_b'].map(async (role) => {
        const ledger = await PostgresLedger.open(`postgres://${role}:${role}-pw@127.0.0.1:${port}/fleet`, {
          baseUrl: service,
          kind: 'orders',
          source: { by: 'orders import' },
        });
        opened.push(ledger);
        return ledger;
      }),
    );
    const keys = Array.from({ length: 20 }, (_, i) => `ROLE-${i}`);
    const results = await Promise.all(
      keys.flatMap((externalId) => [
        a!.claim({ externalId, bodyHash: 'h' }),
        b!.claim({ externalId, bodyHash: 'h' }),
      ]),
    );
    for (let i = 0; i < keys.length; i++) {
      expect([results[2 * i]!, results[2 * i + 1]!].filter((result) => result.claimed)).toHaveLength(1);
    }
    const check = new pg.Client({ connectionString: server.adminUrl.replace(/\/ledger$/, '/fleet') });
    await check.connect();
    try {
      const tables = await check.query(
        "SELECT schemaname FROM pg_tables WHERE tablename LIKE 'ordercli_ledger%'",
      );
      expect(new Set(tables.rows.map((row) => row.schemaname))).toEqual(new Set(['public']));
    } finally {
      await check.end();
    }
  });
});
