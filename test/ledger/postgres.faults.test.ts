/**
 * The PostgreSQL ledger when the connection fails (a throwaway cluster, test/support/postgres.ts,
 * reached through a TCP proxy of the test that can hold the server's answers or cut connections):
 * a terminated backend is replaced, a stalled statement ends after the statement timeout and runs
 * again on a new connection, outcomes that cannot be written wait in a local file that the next
 * store folds in (so no order the service created, or that was never sent, is left in doubt),
 * and Ctrl-C ends claims, outcomes and the store within 2 s whatever the server does.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/core/errors.js';
import { LedgerWriteError } from '../../src/ledger/errors.js';
import { PostgresLedger, type PostgresSettings } from '../../src/ledger/postgres.js';
import type { Claim, ClaimResult } from '../../src/ledger/store.js';
import { tempDir } from '../support/cli.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../support/postgres.js';
import { waitFor } from '../support/wait.js';

const hasPostgres = requirePostgres(
  'the PostgreSQL ledger fault tests (test/ledger/postgres.faults.test.ts)',
);

/** A TCP proxy to the server: `freeze` holds the server's answers (a stalled server), `refuse` cuts. */
interface Proxy {
  url: string;
  /** Bytes sent to the server since the last `freeze`. */
  readonly sent: number;
  /**
   * Holds the server's answers on the connections open now (and, with `newOnes`, on those to
   * come); with `requests`, what is sent to it too (the server never sees the statement).
   */
  freeze(newOnes?: boolean, requests?: boolean): void;
  thaw(): void;
  /** Cuts every connection, and every new one until `accept`. */
  refuse(): void;
  accept(): void;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
  held: Buffer[];
  /** Requests held (not sent to the server) while frozen with `requests`. */
  heldRequests: Buffer[] | undefined;
}

async function startProxy(target: string): Promise<Proxy> {
  const to = new URL(target);
  const links = new Set<Link>();
  const state = { sent: 0, refusing: false, freezeNew: false };
  const cut = (link: Link) => {
    link.client.destroy();
    link.upstream.destroy();
    links.delete(link);
  };
  const server: Server = createServer((client) => {
    if (state.refusing) return void client.destroy();
    const link: Link = {
      client,
      upstream: connect(Number(to.port), to.hostname),
      frozen: state.freezeNew,
      held: [],
      heldRequests: undefined,
    };
    links.add(link);
    for (const socket of [client, link.upstream])
      socket.on('error', () => cut(link)).on('close', () => cut(link));
    client.on('data', (chunk: Buffer) => {
      state.sent += chunk.length;
      if (link.heldRequests) link.heldRequests.push(chunk);
      else link.upstream.write(chunk);
    });
    link.upstream.on('data', (chunk: Buffer) => {
      if (link.frozen) link.held.push(chunk);
      else client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.href,
    get sent() {
      return state.sent;
    },
    freeze(newOnes = false, requests = false) {
      state.freezeNew = newOnes;
      state.sent = 0;
      for (const link of links) {
        link.frozen = true;
        if (requests) link.heldRequests = [];
      }
    },
    thaw() {
      state.freezeNew = false;
      for (const link of links) {
        link.frozen = false;
        for (const chunk of link.held.splice(0)) link.client.write(chunk);
        for (const chunk of link.heldRequests?.splice(0) ?? []) link.upstream.write(chunk);
        link.heldRequests = undefined;
      }
    },
    refuse() {
      state.refusing = true;
      for (const link of links) cut(link);
    },
    accept() {
      state.refusing = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const link of links) cut(link);
        server.close(() => resolve());
      }),
  };
}

function claimOf(result: ClaimResult): Claim {
  if (!result.claimed) throw new Error(`not claimed: ${result.refusal.reason}`);
  return result.claim;
}

/** What a promise settles with, as a value. */
function settled<T>(promise: Promise<T>): Promise<T | Error> {
  return promise.then(
    (value) => value,
    (error: unknown) => error as Error,
  );
}

let services = 0;

describe.skipIf(!hasPostgres)('PostgresLedger faults', () => {
  let server: RunningPostgres;
  let sql: pg.Client;
  let proxy: Proxy;
  let pendingFolder: string;
  const opened: PostgresLedger[] = [];

  beforeAll(async () => {
    server = (await startPostgres())!;
    sql = new pg.Client({ connectionString: server.url });
    await sql.connect();
  }, 60_000);

  afterEach(async () => {
    proxy?.thaw();
    proxy?.accept();
    await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
    await proxy?.close();
  });

  afterAll(async () => {
    await sql?.end();
    await server?.stop();
  });

  /** A store of a service of its own, through the proxy, with a short statement timeout. */
  async function open(
    options: { service?: string; signal?: AbortSignal; settings?: PostgresSettings; url?: string } = {},
  ): Promise<PostgresLedger> {
    const ledger = await PostgresLedger.open(
      options.url ?? proxy.url,
      {
        baseUrl: options.service ?? `https://faults-${services}.example.test`,
        kind: 'orders',
        source: { by: 'orders import', input: 'in.csv' },
        signal: options.signal,
      },
      options.settings ?? { env: { ORDERCLI_LEDGER_STATEMENT_TIMEOUT: '500ms' }, pendingFolder },
    );
    opened.push(ledger);
    return ledger;
  }

  async function stateOf(key: string): Promise<string | undefined> {
    const { rows } = await sql.query(
      'SELECT status FROM ordercli_ledger WHERE service = $1 AND external_id = $2',
      [`https://faults-${services}.example.test`, key],
    );
    return rows[0]?.status;
  }

  beforeEach(async () => {
    services++;
    pendingFolder = join(tempDir(), 'ledger-pending');
    proxy = await startProxy(server.url);
  });

  it('replaces a connection the server terminated: outcomes and claims go on', async () => {
    const ledger = await open({ url: server.url });
    const first = claimOf(await ledger.claim({ externalId: 'LOST-1', bodyHash: 'h' }));
    const second = claimOf(await ledger.claim({ externalId: 'LOST-2', bodyHash: 'h' }));
    const terminate = () =>
      sql.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ordercli' AND pid <> pg_backend_pid()",
      );
    expect((await terminate()).rowCount).toBeGreaterThan(0);
    ledger.created(first, { httpStatus: 201, id: 1 });
    ledger.failed(second, { httpStatus: 422, message: 'no' });
    await ledger.sync();
    expect(await stateOf('LOST-1')).toBe('created');
    expect(await stateOf('LOST-2')).toBe('not-created');
    await terminate();
    claimOf(await ledger.claim({ externalId: 'LOST-3', bodyHash: 'h' }));
    expect(readdirSync(join(pendingFolder, '..'))).toEqual([]);
  });

  it('ends a statement the server stalls on after the statement timeout, and writes it on a new connection', async () => {
    const ledger = await open();
    const claim = claimOf(await ledger.claim({ externalId: 'STALL-1', bodyHash: 'h' }));
    // The server never sees the statement: only a new connection can write it.
    proxy.freeze(false, true);
    const started = performance.now();
    ledger.created(claim, { httpStatus: 201, id: 1 });
    await ledger.sync();
    // 500ms on the server, 1 s on this side, then once more on a new connection.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await stateOf('STALL-1')).toBe('created');
    claimOf(await ledger.claim({ externalId: 'STALL-2', bodyHash: 'h' }));
  });

  it('keeps outcomes it cannot write in a private file, which the next store applies first', async () => {
    const ledger = await open();
    const created = claimOf(await ledger.claim({ externalId: 'KEPT-1', bodyHash: 'h' }));
    const refused = claimOf(await ledger.claim({ externalId: 'KEPT-2', bodyHash: 'h' }));
    proxy.refuse();
    ledger.created(created, { httpStatus: 201, id: 41 });
    ledger.failed(refused, { httpStatus: 422, message: 'unknown product' });
    // Kept, not failed: the run that saw the answers knows them, and so will the ledger.
    await ledger.sync();
    await ledger.close();
    const [file, ...others] = readdirSync(pendingFolder);
    expect(others).toEqual([]);
    expect(file).toMatch(/^[0-9a-f]{24}\.ndjson$/);
    expect(statSync(pendingFolder).mode & 0o777).toBe(0o700);
    expect(statSync(join(pendingFolder, file!)).mode & 0o777).toBe(0o600);
    const kept = readFileSync(join(pendingFolder, file!), 'utf8');
    expect(kept).not.toContain(server.password);
    expect(kept.trim().split('\n')).toHaveLength(2);
    // The database still holds the claims: to anyone else, in doubt once their owner is gone.
    expect(await stateOf('KEPT-1')).toBe('claimed');
    proxy.accept();
    const next = await open();
    expect(readdirSync(pendingFolder)).toEqual([]);
    expect(await next.lookup('KEPT-1')).toMatchObject({ status: 'created', id: 41, token: created.token });
    expect(await next.lookup('KEPT-2')).toMatchObject({ status: 'not-created', message: 'unknown product' });
  });

  it('leaves a claim whose commit it never heard of as not sent, not in doubt, for the next store', async () => {
    const ledger = await open();
    // The server commits the claim; its answer never comes back, nor does a new connection's.
    proxy.freeze(true);
    const failure = await settled(ledger.claim({ externalId: 'UNSEEN-1', bodyHash: 'h' }));
    expect(failure).toBeInstanceOf(LedgerWriteError);
    expect((failure as Error).message).not.toContain(server.password);
    expect(await stateOf('UNSEEN-1')).toBe('claimed');
    await ledger.close();
    proxy.thaw();
    const next = await open();
    expect(await stateOf('UNSEEN-1')).toBeUndefined();
    expect(await next.list()).toEqual([]);
    claimOf(await next.claim({ externalId: 'UNSEEN-1', bodyHash: 'h' }));
  });

  it('gives up on Ctrl-C within 2 s while the server says nothing, keeping what it had not written', async () => {
    const controller = new AbortController();
    const ledger = await open({ signal: controller.signal });
    const answered = claimOf(await ledger.claim({ externalId: 'INT-1', bodyHash: 'h' }));
    proxy.freeze(true);
    const claiming = settled(ledger.claim({ externalId: 'INT-2', bodyHash: 'h' }));
    await waitFor(() => proxy.sent > 0, 5_000, 'the claim round reaching the server');
    ledger.created(answered, { httpStatus: 201, id: 1 });
    const started = performance.now();
    controller.abort(new CancelledError());
    expect(await claiming).toBeInstanceOf(CancelledError);
    expect(performance.now() - started).toBeLessThan(200);
    await expect(ledger.claim({ externalId: 'INT-3', bodyHash: 'h' })).rejects.toBeInstanceOf(CancelledError);
    await ledger.sync();
    await ledger.close();
    expect(performance.now() - started).toBeLessThan(2_000);
    proxy.thaw();
    // The next store applies the outcome, and the `not-sent` of the claim the server committed.
    const next = await open();
    expect(await next.lookup('INT-1')).toMatchObject({ status: 'created', id: 1 });
    expect(await stateOf('INT-2')).toBeUndefined();
  });

  it('gives up opening on Ctrl-C within 2 s against a server that accepts and never answers', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const controller = new AbortController();
      const opening = settled(
        open({ url: `postgres://ci:s3cret-pw@127.0.0.1:${port}/x`, signal: controller.signal }),
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = performance.now();
      controller.abort(new CancelledError());
      expect(await opening).toBeInstanceOf(CancelledError);
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      silent.close();
    }
  });
});
