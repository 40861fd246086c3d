/**
 * The PostgreSQL ledger against a real server (a throwaway cluster, test/support/postgres.ts):
 * claims raced by two stores, outcomes conditioned on their claim's token, `not-sent`, take-overs,
 * owners judged by the server's clock, adoption, prefetch, and errors that never show the
 * password. Without PostgreSQL server binaries it does not run, and says so in one SKIPPED line;
 * with `CI` set it fails instead (test/support/requirements.ts).
 */
import { createServer } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { thisProcess } from '../../src/core/liveness.js';
import { LedgerWriteError } from '../../src/ledger/errors.js';
import { PostgresLedger, redactLedgerUrl } from '../../src/ledger/postgres.js';
import { applyRecord, type LedgerEntry, type LedgerRecord } from '../../src/ledger/record.js';
import type { Claim, ClaimResult, LedgerKind } from '../../src/ledger/store.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const hasPostgres = requirePostgres('the PostgreSQL ledger tests (test/ledger/postgres.test.ts)');

let services = 0;
/** A service of its own for each test: the tests share one database. */
function newService(): string {
  services++;
  return `https://orders-${services}.example.test/`;
}

/** Runs `work` over `items`, `concurrency` at a time (an import's workers). */
async function pooled<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
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

  it('of two stores racing 500 claims of the same keys, exactly one claims each key', async () => {
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
    const winners = new Map<string, number>();
    for (const { externalId, result } of [...fromA, ...fromB]) {
      if (result.claimed) winners.set(externalId, (winners.get(externalId) ?? 0) + 1);
      // Both stores are alive (this process): the loser sees a claim being sent.
      else expect(result.refusal.reason).toBe('claimed');
    }
    expect(winners.size).toBe(500);
    expect([...winners.values()].every((count) => count === 1)).toBe(true);
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
    // The history, replayed with the one record model, gives every current state.
    const history = await sql.query(
      'SELECT external_id, record FROM ordercli_ledger_records WHERE service = $1 ORDER BY seq',
      [a.baseUrl],
    );
    expect(history.rowCount).toBe(1000);
    const replayed = new Map<string, LedgerEntry | undefined>();
    for (const row of history.rows as { external_id: string; record: LedgerRecord }[]) {
      replayed.set(row.external_id, applyRecord(replayed.get(row.external_id), row.record));
    }
    const current = await sql.query('SELECT external_id, entry FROM ordercli_ledger WHERE service = $1', [
      a.baseUrl,
    ]);
    for (const row of current.rows as { external_id: string; entry: LedgerEntry }[]) {
      expect(replayed.get(row.external_id)).toEqual(row.entry);
    }
    // Created is refused to anyone, with what was created.
    const again = await b.claim({ externalId: 'RACE-7', bodyHash: 'h' });
    expect(again).toMatchObject({
      claimed: false,
      refusal: { reason: 'created', entry: { id: 1, code: 'SO-1' } },
    });
  });

  it('claims the same key once when one store is asked twice at once', async () => {
    const ledger = await open(newService());
    const results = await Promise.all([
      ledger.claim({ externalId: 'DUP', bodyHash: 'h' }),
      ledger.claim({ externalId: 'DUP', bodyHash: 'h' }),
    ]);
    expect(results.filter((result) => result.claimed)).toHaveLength(1);
    expect(results.find((result) => !result.claimed)).toMatchObject({ refusal: { reason: 'claimed' } });
  });

  it('changes nothing on an outcome whose token is not the current claim', async () => {
    const service = newService();
    const [a, b] = await Promise.all([open(service), open(service)]);
    const claim = claimOf(await a.claim({ externalId: 'TOK', bodyHash: 'h' }));
    a.created({ ...claim, token: 'not-the-token' }, { httpStatus: 201, id: 9 });
    await a.sync();
    expect((await rowOf(service, 'TOK')).status).toBe('claimed');
    // Its owner is found dead; another store takes the key over (--retry-unknown)...
    await ownClaimBy(service, 'TOK', 'gone-owner', undefined);
    const taken = claimOf(await b.claim({ externalId: 'TOK', bodyHash: 'h', takeOverDoubt: true }));
    expect(taken.previous).toMatchObject({ status: 'in-doubt', event: 'unknown' });
    // ...then the first owner's late outcome, conditioned on its own token, changes nothing.
    a.created(claim, { httpStatus: 201, id: 9 });
    a.failed(claim, { httpStatus: 422, message: 'no' });
    await a.sync();
    const row = await rowOf(service, 'TOK');
    expect(row).toMatchObject({
      status: 'claimed',
      token: taken.token,
      entry: { owner: { id: b.owner.id } },
    });
    b.created(taken, { httpStatus: 201, id: 10 });
    await b.sync();
    expect(await a.lookup('TOK')).toMatchObject({ status: 'created', id: 10, token: taken.token });
  });

  it('restores the state before the claim on notSent, and a claim right after it waits for it', async () => {
    const service = newService();
    const ledger = await open(service);
    // A key without state: not-sent leaves none.
    const fresh = claimOf(await ledger.claim({ externalId: 'NS-1', bodyHash: 'h' }));
    expect(fresh.previous).toBeUndefined();
    ledger.notSent(fresh, 'interrupted');
    // Not awaited: the next claim of the key goes after it.
    const again = claimOf(await ledger.claim({ externalId: 'NS-1', bodyHash: 'h2' }));
    expect(again.previous).toBeUndefined();
    ledger.notSent(again, 'interrupted');
    await ledger.sync();
    expect(await rowOf(service, 'NS-1')).toBeUndefined();
    expect(await ledger.lookup('NS-1')).toBeUndefined();
    // A refused key: not-sent brings the refusal back as it was.
    const first = claimOf(await ledger.claim({ externalId: 'NS-2', bodyHash: 'h' }));
    ledger.failed(first, { httpStatus: 422, message: 'unknown product' });
    await ledger.sync();
    const refused = await ledger.lookup('NS-2');
    expect(refused).toMatchObject({ status: 'not-created', message: 'unknown product' });
    const second = claimOf(await ledger.claim({ externalId: 'NS-2', bodyHash: 'h' }));
    expect(second.previous).toEqual(refused);
    ledger.notSent(second, 'interrupted');
    await ledger.sync();
    expect(await ledger.lookup('NS-2')).toEqual(refused);
  });

  it('lets exactly one of two racing stores take over an unknown state with takeOverDoubt', async () => {
    const service = newService();
    const [a, b] = await Promise.all([open(service), open(service)]);
    const keys = Array.from({ length: 40 }, (_, i) => `DOUBT-${i}`);
    for (const claim of await Promise.all(
      keys.map(async (externalId) => claimOf(await a.claim({ externalId, bodyHash: 'h' }))),
    )) {
      a.unknown(claim, 'no answer within --timeout');
    }
    await a.sync();
    // Without takeOverDoubt: refused as in doubt.
    expect(await b.claim({ externalId: 'DOUBT-0', bodyHash: 'h' })).toMatchObject({
      claimed: false,
      refusal: { reason: 'in-doubt', entry: { status: 'in-doubt', reason: 'no answer within --timeout' } },
    });
    const race = await Promise.all(
      keys.flatMap((externalId) => [
        a.claim({ externalId, bodyHash: 'h', takeOverDoubt: true }),
        b.claim({ externalId, bodyHash: 'h', takeOverDoubt: true }),
      ]),
    );
    for (let i = 0; i < keys.length; i++) {
      const pair = [race[2 * i]!, race[2 * i + 1]!];
      expect(pair.filter((result) => result.claimed)).toHaveLength(1);
      expect(pair.find((result) => !result.claimed)).toMatchObject({ refusal: { reason: 'claimed' } });
      const winner = claimOf(pair.find((result) => result.claimed)!);
      expect(winner.previous).toMatchObject({ status: 'in-doubt', reason: 'no answer within --timeout' });
    }
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

  it('adopts only the keys the table has no row of', async () => {
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
    expect(await ledger.lookup('AD-2')).toMatchObject({ status: 'created', id: 2, journal: '/j' });
    expect(await ledger.lookup('AD-3')).toBeUndefined();
    const history = await sql.query(
      'SELECT external_id FROM ordercli_ledger_records WHERE service = $1 ORDER BY seq',
      [ledger.baseUrl],
    );
    expect(history.rows.map((row) => row.external_id)).toEqual(['AD-1', 'AD-1', 'AD-2', 'AD-2']);
    const keysOf = async (inputs: string[]) => (await ledger.list({ inputs })).map((item) => item.externalId);
    expect(await keysOf(['/j'])).toEqual(['AD-2']);
    expect(await keysOf(['/data/in.journal.ndjson'])).toEqual(['AD-1']);
    expect(await keysOf(['/elsewhere', '/j', '/data/in.journal.ndjson'])).toEqual(['AD-1', 'AD-2']);
  });

  it('counts what prefetch found and answers lookups from it, while claims still ask the database', async () => {
    const service = newService();
    const [writer, other] = await Promise.all([open(service), open(service)]);
    const states: [string, (claim: Claim) => void][] = [
      ['PF-C1', (c) => writer.created(c, { httpStatus: 201, id: 1 })],
      ['PF-C2', (c) => writer.created(c, { httpStatus: 201, id: 2 })],
      ['PF-D', (c) => writer.unknown(c, 'reset')],
      ['PF-N', (c) => writer.failed(c, { httpStatus: 422, message: 'no' })],
      ['PF-X', () => undefined],
    ];
    for (const [externalId, outcome] of states)
      outcome(claimOf(await writer.claim({ externalId, bodyHash: 'h' })));
    await writer.sync();
    const reader = await open(service);
    await reader.prefetch(['PF-C1', 'PF-C2', 'PF-D', 'PF-N', 'PF-X', 'PF-FREE', 'PF-FREE', 'PF-LATER']);
    expect(reader.prefetchedCounts()).toEqual({ created: 2, inDoubt: 2 });
    await reader.prefetch(['PF-C1']);
    expect(reader.prefetchedCounts()).toEqual({ created: 2, inDoubt: 2 });
    // An import's worth of keys is read in chunks.
    const big = await open(service);
    const many = Array.from({ length: 25_000 }, (_, i) => `PF-MANY-${i}`);
    many.splice(12_345, 0, 'PF-C1', 'PF-D');
    await big.prefetch(many);
    expect(big.prefetchedCounts()).toEqual({ created: 1, inDoubt: 1 });
    expect(await reader.lookup('PF-C2')).toMatchObject({ status: 'created', id: 2 });
    // Another store claims a key the prefetch found free: the claim is the database's to decide.
    claimOf(await other.claim({ externalId: 'PF-LATER', bodyHash: 'h' }));
    expect(await reader.lookup('PF-LATER')).toBeUndefined();
    expect(await reader.claim({ externalId: 'PF-LATER', bodyHash: 'h' })).toMatchObject({
      claimed: false,
      refusal: { reason: 'claimed' },
    });
    // A free key and a refused one are claimed in one round each.
    claimOf(await reader.claim({ externalId: 'PF-FREE', bodyHash: 'h' }));
    expect(claimOf(await reader.claim({ externalId: 'PF-N', bodyHash: 'h' })).previous).toMatchObject({
      status: 'not-created',
    });
    expect(await reader.claim({ externalId: 'PF-C1', bodyHash: 'h' })).toMatchObject({
      refusal: { reason: 'created' },
    });
    // The prefetch said created; a person resolved it as not created since: the database decides.
    await other.resolved('PF-C2', 'not-created', { evidence: 'not in the back office' });
    expect(claimOf(await reader.claim({ externalId: 'PF-C2', bodyHash: 'h' })).previous).toMatchObject({
      status: 'not-created',
      resolved: 'not-created',
    });
  });

  it('keeps kinds apart, records resolutions, and only reads when read-only', async () => {
    const service = newService();
    const orders = await open(service);
    const contacts = await open(service, { kind: 'contact-references' });
    const claim = claimOf(await orders.claim({ externalId: 'K-1', bodyHash: 'h' }));
    orders.unknown(claim, 'reset');
    await orders.sync();
    claimOf(await contacts.claim({ externalId: 'K-1', bodyHash: 'h' }));
    await orders.resolved('K-1', 'created', { id: 77, evidence: 'seen in the back office' });
    expect(await orders.lookup('K-1')).toMatchObject({ status: 'created', resolved: 'created', id: 77 });
    const reader = await open(service, { readOnly: true });
    expect(await reader.lookup('K-1')).toMatchObject({ status: 'created' });
    await expect(reader.claim({ externalId: 'K-2', bodyHash: 'h' })).rejects.toThrow(/read-only/);
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
  it('lists each key with its state (a gone owner’s claim as in doubt), by input, and who has it open', async () => {
    const service = newService();
    const a = await open(service);
    const b = await PostgresLedger.open(server.url, {
      baseUrl: service,
      kind: 'orders',
      source: { by: 'orders import', input: 'orders.csv#1a2b', journal: 'nightly' },
    });
    opened.push(b);
    const claimed = async (ledger: PostgresLedger, key: string) =>
      claimOf(await ledger.claim({ externalId: key, bodyHash: 'h', line: 7 }));
    a.created(await claimed(a, 'L-1'), { httpStatus: 201, id: 1 });
    a.unknown(await claimed(a, 'L-2'), 'reset');
    a.failed(await claimed(a, 'L-3'), { httpStatus: 422, message: 'no' });
    await claimed(a, 'L-4');
    await claimed(b, 'L-5');
    b.created(await claimed(b, 'L-6'), { httpStatus: 201, id: 6 });
    await Promise.all([a.sync(), b.sync()]);
    // L-5's owner is gone (another PID namespace, its heartbeat an hour old).
    await ownClaimBy(service, 'L-5', 'gone-owner', '1 hour');
    const listed = await a.list();
    expect(listed.map(({ externalId, entry }) => [externalId, entry.status])).toEqual([
      ['L-1', 'created'],
      ['L-2', 'in-doubt'],
      ['L-3', 'not-created'],
      ['L-4', 'claimed'],
      ['L-5', 'in-doubt'],
      ['L-6', 'created'],
    ]);
    expect(listed[4]!.entry).toMatchObject({ event: 'unknown', input: 'orders.csv#1a2b', line: 7 });
    expect(listed[4]!.entry.owner).toMatchObject({ id: 'gone-owner', host: 'worker-7' });
    const keys = async (inputs: string[]) => (await b.list({ inputs })).map((item) => item.externalId);
    expect(await keys(['orders.csv#1a2b'])).toEqual(['L-5', 'L-6']);
    expect(await keys(['nightly'])).toEqual(['L-5', 'L-6']);
    expect(await keys(['/data/in.csv', 'nightly'])).toHaveLength(6);
    expect(await keys([])).toEqual([]);
    // Who has it open: both stores (this process), a far owner beating, one not beating for long.
    const far = { host: 'runner-9', boot: 'another-boot', pid: 77 };
    await sql.query(
      `INSERT INTO ordercli_ledger_owners (id, identity, beat_at) VALUES
        ('far-beating', $1::jsonb, now()), ('far-silent', $2::jsonb, now() - interval '1 hour')`,
      [JSON.stringify({ ...far, id: 'far-beating' }), JSON.stringify({ ...far, id: 'far-silent' })],
    );
    try {
      const openers = new Map((await a.openers()).map((opener) => [opener.owner.id, opener.alive]));
      expect(openers.get(a.owner.id)).toBe('alive');
      expect(openers.get(b.owner.id)).toBe('alive');
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

  it('uses the rows of another name of the service: an order created through 127.0.0.1 is refused through localhost', async () => {
    const port = 40_000 + services;
    services++;
    const byAddress = await open(`http://127.0.0.1:${port}`);
    byAddress.created(claimOf(await byAddress.claim({ externalId: 'SAME-1', bodyHash: 'h' })), {
      httpStatus: 201,
      id: 1,
    });
    await byAddress.sync();
    const byName = await open(`http://localhost:${port}/`);
    expect(byName.baseUrl).toBe(`http://localhost:${port}`);
    expect(byName.sameServiceAs).toBe(`http://127.0.0.1:${port}`);
    expect(await byName.claim({ externalId: 'SAME-1', bodyHash: 'h' })).toMatchObject({
      claimed: false,
      refusal: { reason: 'created', entry: { id: 1 } },
    });
    // What it claims is in that service's rows, where the other name finds it.
    claimOf(await byName.claim({ externalId: 'SAME-2', bodyHash: 'h' }));
    expect(await rowOf(`http://127.0.0.1:${port}`, 'SAME-2')).toMatchObject({ status: 'claimed' });
    expect(await rowOf(`http://localhost:${port}`, 'SAME-2')).toBeUndefined();
    expect((await byAddress.list()).map((item) => item.externalId)).toEqual(['SAME-1', 'SAME-2']);
    // Another port is another service.
    const elsewhere = await open(`http://localhost:${port + 1}`);
    expect(elsewhere.sameServiceAs).toBeUndefined();
    claimOf(await elsewhere.claim({ externalId: 'SAME-1', bodyHash: 'h' }));
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
