/**
 * The contract of the order ledger (src/ledger/store.ts), one suite run against every store:
 * the local store (shard files in a folder) and PostgreSQL (a throwaway cluster). Each backend is
 * one entry of LEDGER_BACKENDS (test/support/ledger-backends.ts); a new store is its module plus
 * one entry there. Written against the interface only: what a store keeps and how is tested in
 * its own file (local.test.ts, postgres*.test.ts).
 *
 * Races prove they raced: in-process contenders had all started claiming before the first claim
 * was granted (counted); processes report when they started and first won, and a race that did
 * not overlap is run again with new keys. Owners in another PID namespace (unshare) are judged by
 * their heartbeat, so that test waits out the real stale time once (STALE_MS).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeyTable } from '../../src/core/key-table.js';
import { STALE_MS, thisProcess } from '../../src/core/liveness.js';
import { describeEntry } from '../../src/import/send/describe-entry.js';
import { ClaimedNowError } from '../../src/ledger/errors.js';
import type { LedgerEntry, LedgerRecord, RecordSource } from '../../src/ledger/record.js';
import type { Claim, ClaimRequest, ClaimResult, LedgerKind, LedgerStore } from '../../src/ledger/store.js';
import {
  type Claimer,
  killClaimers,
  LEDGER_BACKENDS,
  pooled,
  type RunningLedger,
  spawnClaimer,
} from '../support/ledger-backends.js';
import { requireUnshare } from '../support/requirements.js';
import { waitFor } from '../support/wait.js';

const UNSHARE = requireUnshare(
  'the ledger contract’s owners in another PID namespace (test/ledger/store.contract.test.ts)',
  '-p',
  '-f',
  '--mount-proc',
);

/** The source of most writers: an import, by its input's identity and its history's name. */
const IMPORT: RecordSource = { by: 'orders import', input: 'exports/orders.csv#1a2b3c', journal: 'nightly' };
const OTHER: RecordSource = { by: 'orders import', input: 'exports/other.csv#4d5e6f', journal: 'weekly' };
const me = thisProcess();

function claimOf(result: ClaimResult): Claim {
  if (!result.claimed) throw new Error(`expected a claim, got a refusal (${result.refusal.reason})`);
  return result.claim;
}

function refusalOf(result: ClaimResult): { reason: string; entry: LedgerEntry } {
  if (result.claimed) throw new Error(`expected a refusal, got a claim of ${result.claim.externalId}`);
  return result.refusal;
}

describe.each(LEDGER_BACKENDS)('the $name store', (backend) => {
  const runs = backend.available(
    `the ledger contract on the ${backend.name} store (test/ledger/store.contract.test.ts)`,
  );

  describe.skipIf(!runs)('keeps the ledger’s contract', () => {
    let ledger: RunningLedger;
    const opened: LedgerStore[] = [];
    let services = 0;

    beforeAll(async () => {
      ledger = await backend.start();
    }, 60_000);

    afterEach(async () => {
      await killClaimers();
      await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
    });

    afterAll(async () => {
      await ledger?.stop();
    });

    /** A service of its own for each test: the tests share one ledger. */
    function newService(): string {
      services++;
      return `http://127.0.0.1:${41_000 + services}`;
    }

    async function open(
      baseUrl: string,
      options: { source?: RecordSource; kind?: LedgerKind; readOnly?: boolean } = {},
    ): Promise<LedgerStore> {
      const store = await ledger.open({
        baseUrl,
        kind: options.kind ?? 'orders',
        source: options.source ?? IMPORT,
        readOnly: options.readOnly,
      });
      opened.push(store);
      return store;
    }

    /** Keys claimed by another process of this host that was then killed -9 (no outcome, no close). */
    async function claimedByKilledProcess(service: string, keys: string[], line?: number): Promise<Claimer> {
      const child = await spawnClaimer(ledger.ledger, service, { source: IMPORT });
      const { won } = await child.claim(keys, { outcome: 'none', ...(line ? { line } : {}) });
      expect(won.sort()).toEqual([...keys].sort());
      await child.kill();
      return child;
    }

    it('claims racing in one process: of three stores claiming the same keys, exactly one claim of each key is granted', async () => {
      const service = newService();
      const stores = await Promise.all([0, 1, 2].map(() => open(service)));
      const keys = Array.from({ length: 300 }, (_, i) => `RACE-${i}`);
      const orders = [keys, [...keys].reverse(), [...keys.slice(150), ...keys.slice(0, 150)]];
      // Proof of a race: every store had asked for a claim before the first one was granted.
      const asked = [0, 0, 0];
      let askedAtFirstGrant: number[] | undefined;
      const results = await Promise.all(
        stores.map((store, s) =>
          pooled(orders[s]!, 8, async (externalId) => {
            asked[s]!++;
            const result = await store.claim({ externalId, bodyHash: 'h', line: 1 });
            if (result.claimed) askedAtFirstGrant ??= [...asked];
            return { store, externalId, result };
          }),
        ),
      );
      expect(
        askedAtFirstGrant?.every((count) => count > 0),
        'every store asked before the first grant',
      ).toBe(true);
      const winners = new Map<string, LedgerStore[]>();
      for (const { store, externalId, result } of results.flat()) {
        if (result.claimed) winners.set(externalId, [...(winners.get(externalId) ?? []), store]);
      }
      expect(winners.size).toBe(keys.length);
      expect([...winners.values()].every((won) => won.length === 1)).toBe(true);
      // Every loser was told the key is being sent right now, by the store that won it.
      for (const { externalId, result } of results.flat()) {
        if (result.claimed) continue;
        expect(result.refusal).toMatchObject({
          reason: 'claimed',
          entry: { status: 'claimed', owner: { id: winners.get(externalId)![0]!.owner.id } },
        });
      }
      // One store asked twice at once: one claim.
      const twice = await Promise.all([
        stores[0]!.claim({ externalId: 'DUP', bodyHash: 'h' }),
        stores[0]!.claim({ externalId: 'DUP', bodyHash: 'h' }),
      ]);
      expect(twice.filter((result) => result.claimed)).toHaveLength(1);
      expect(twice.find((result) => !result.claimed)).toMatchObject({ refusal: { reason: 'claimed' } });

      // The winners' outcomes, not awaited, then synced: a fresh store finds every key created.
      for (const { store, result } of results.flat()) {
        if (result.claimed) store.created(result.claim, { httpStatus: 201, id: 1, code: 'SO-1' });
      }
      await Promise.all(stores.map((store) => store.sync()));
      const fresh = await open(service);
      await fresh.prefetch(keys);
      expect(fresh.prefetchedCounts()).toEqual({ created: keys.length, inDoubt: 0 });
      expect(refusalOf(await fresh.claim({ externalId: 'RACE-7', bodyHash: 'h' }))).toMatchObject({
        reason: 'created',
        entry: { id: 1, code: 'SO-1' },
      });

      // Keys in doubt, taken over by all three at once with takeOverDoubt: one each.
      const doubts = Array.from({ length: 40 }, (_, i) => `DOUBT-${i}`);
      for (const externalId of doubts) {
        stores[0]!.unknown(claimOf(await stores[0]!.claim({ externalId, bodyHash: 'h' })), 'no answer');
      }
      await stores[0]!.sync();
      const takeovers = await Promise.all(
        doubts.map((externalId) =>
          Promise.all(stores.map((store) => store.claim({ externalId, bodyHash: 'h', takeOverDoubt: true }))),
        ),
      );
      for (const contenders of takeovers) {
        expect(contenders.filter((result) => result.claimed)).toHaveLength(1);
        const winner = claimOf(contenders.find((result) => result.claimed)!);
        expect(winner.previous).toMatchObject({ status: 'in-doubt', reason: 'no answer' });
        for (const loser of contenders.filter((result) => !result.claimed)) {
          expect(refusalOf(loser).reason).toBe('claimed');
        }
      }
    });

    it('claims racing across processes: of four processes claiming the same keys, exactly one claim of each key is granted', async () => {
      const service = newService();
      const children = await Promise.all([0, 1, 2, 3].map(() => spawnClaimer(ledger.ledger, service)));
      let raced = false;
      for (let attempt = 1; attempt <= 5 && !raced; attempt++) {
        const keys = Array.from({ length: 200 }, (_, i) => `PROC-${attempt}-${i}`);
        // Every process is told to start at the same moment, so that none is done before another begins.
        const startAt = Date.now() + 250 * attempt;
        const outcomes = await Promise.all(
          children.map((child, i) =>
            child.claim(i % 2 === 0 ? keys : [...keys].reverse(), { outcome: 'created', startAt }),
          ),
        );
        const won = outcomes.flatMap((outcome) => outcome.won);
        expect(won.sort()).toEqual([...keys].sort());
        for (const outcome of outcomes) {
          // A loser sees the winner alive (being sent) or its key already created, never in doubt.
          expect(
            Object.keys(outcome.refused).filter((reason) => reason !== 'claimed' && reason !== 'created'),
          ).toEqual([]);
          expect(outcome.won.length + Object.values(outcome.refused).reduce((sum, n) => sum + n, 0)).toBe(
            keys.length,
          );
        }
        const firstGrant = Math.min(...outcomes.flatMap((outcome) => outcome.firstWonAt ?? []));
        // Raced: several processes were granted keys (their claims interleaved), or all of them
        // had begun before the first grant.
        raced =
          outcomes.filter((outcome) => outcome.won.length > 0).length >= 2 ||
          outcomes.every((outcome) => outcome.startedAt < firstGrant);
        const fresh = await open(service);
        await fresh.prefetch(keys);
        expect(fresh.prefetchedCounts()).toEqual({ created: keys.length, inDoubt: 0 });
      }
      expect(raced, 'the processes raced (two or more won keys, or all started before the first won)').toBe(
        true,
      );
    }, 30_000);

    it('outcomes: created, failed, unknown and notSent are recorded on the claim by its token; sync() makes them visible to a fresh store', async () => {
      const service = newService();
      const store = await open(service);
      const created = claimOf(await store.claim({ externalId: 'C', bodyHash: 'hc', line: 2 }));
      expect(created).toMatchObject({ externalId: 'C', previous: undefined, token: expect.any(String) });
      store.created(created, { httpStatus: 201, id: 7, code: 'SO-7' });
      const failed = claimOf(await store.claim({ externalId: 'F', bodyHash: 'hf', line: 3 }));
      store.failed(failed, { httpStatus: 422, message: 'unknown product' });
      const unknown = claimOf(await store.claim({ externalId: 'U', bodyHash: 'hu', line: 4 }));
      store.unknown(unknown, 'no answer within --timeout');
      const notSent = claimOf(await store.claim({ externalId: 'N', bodyHash: 'hn', line: 5 }));
      store.notSent(notSent, 'interrupted');
      await store.sync();

      const fresh = await open(service, { source: { by: 'orders create' } });
      expect(await fresh.lookup('C')).toMatchObject({
        status: 'created',
        event: 'created',
        httpStatus: 201,
        id: 7,
        code: 'SO-7',
        bodyHash: 'hc',
        line: 2,
        token: created.token,
        ...IMPORT,
      });
      expect(await fresh.lookup('F')).toMatchObject({
        status: 'not-created',
        event: 'failed',
        httpStatus: 422,
        message: 'unknown product',
        line: 3,
        token: failed.token,
      });
      expect(await fresh.lookup('U')).toMatchObject({
        status: 'in-doubt',
        event: 'unknown',
        reason: 'no answer within --timeout',
        line: 4,
        token: unknown.token,
      });
      // Claimed and not sent: as if never claimed.
      expect(await fresh.lookup('N')).toBeUndefined();
      expect(await fresh.lookup('NEVER')).toBeUndefined();

      // Refused by the service: claimed again without a takeover; notSent brings the refusal back.
      const refused = await fresh.lookup('F');
      const resend = claimOf(await fresh.claim({ externalId: 'F', bodyHash: 'hf2' }));
      expect(resend.previous).toEqual(refused);
      fresh.notSent(resend, 'interrupted');
      // Not awaited: a claim right after a notSent of its key goes after it.
      const again = claimOf(await fresh.claim({ externalId: 'N', bodyHash: 'hn' }));
      expect(again.previous).toBeUndefined();
      fresh.notSent(again, 'interrupted');
      const third = claimOf(await fresh.claim({ externalId: 'N', bodyHash: 'hn' }));
      expect(third.previous).toBeUndefined();
      fresh.notSent(third, 'interrupted');
      await fresh.sync();
      expect(await store.lookup('F')).toEqual(refused);
      expect(await store.lookup('N')).toBeUndefined();
    });

    it('validated: recorded on a created key (kept by a fresh store, listed, described); nothing for a key not created', async () => {
      const service = newService();
      const store = await open(service);
      const created = claimOf(await store.claim({ externalId: 'V', bodyHash: 'hv', line: 2 }));
      store.created(created, { httpStatus: 201, id: 9, code: 'SO-9' });
      const failed = claimOf(await store.claim({ externalId: 'W', bodyHash: 'hw' }));
      store.failed(failed, { httpStatus: 422, message: 'no' });
      await store.sync();
      store.validated('V', '2026-11-28T10:00:00.000Z');
      store.validated('W', '2026-11-28T10:00:01.000Z');
      store.validated('NEVER', '2026-11-28T10:00:02.000Z');
      await store.sync();
      const fresh = await open(service, { readOnly: true });
      const entry = await fresh.lookup('V');
      expect(entry).toMatchObject({
        status: 'created',
        id: 9,
        code: 'SO-9',
        validatedAt: '2026-11-28T10:00:00.000Z',
      });
      expect(describeEntry(entry!)).toContain('validated at 2026-11-28T10:00:00.000Z');
      expect((await fresh.lookup('W'))?.validatedAt).toBeUndefined();
      expect(await fresh.lookup('NEVER')).toBeUndefined();
      const listed = await fresh.list();
      expect(listed.find((row) => row.externalId === 'V')?.entry.validatedAt).toBe(
        '2026-11-28T10:00:00.000Z',
      );
      // Once validated, a later notification changes nothing.
      store.validated('V', '2026-11-28T11:00:00.000Z');
      await store.sync();
      expect((await (await open(service, { readOnly: true })).lookup('V'))?.validatedAt).toBe(
        '2026-11-28T10:00:00.000Z',
      );
    });

    it('outcomes of a stale token change nothing: a late outcome of a claim taken over, or a token that is not the claim’s', async () => {
      const service = newService();
      const first = await open(service);
      const second = await open(service, { source: OTHER });
      const early = claimOf(await first.claim({ externalId: 'S', bodyHash: 'h' }));
      first.unknown(early, 'reset');
      await first.sync();
      const taken = claimOf(await second.claim({ externalId: 'S', bodyHash: 'h', takeOverDoubt: true }));
      // The first claim's late outcomes, and outcomes of a token nobody was given.
      first.created(early, { httpStatus: 201, id: 1 });
      first.failed(early, { httpStatus: 422, message: 'no' });
      first.created({ ...taken, token: 'not-the-token' }, { httpStatus: 201, id: 2 });
      second.failed({ ...taken, token: 'not-the-token' }, { message: 'no' });
      await Promise.all([first.sync(), second.sync()]);
      const fresh = await open(service);
      expect(await fresh.lookup('S')).toMatchObject({
        status: 'claimed',
        token: taken.token,
        owner: { id: second.owner.id },
        ...OTHER,
      });
      second.created(taken, { httpStatus: 201, id: 10 });
      await second.sync();
      expect(await first.lookup('S')).toMatchObject({ status: 'created', id: 10, token: taken.token });
    });

    // Fails on the local store (src bug, see the report): a reader in another process gets the
    // settled state from its outcome record alone, which does not carry when the claim was made.
    it('an outcome keeps when its claim was made (sentAt), as every store reads it', async () => {
      const service = newService();
      const store = await open(service);
      for (const externalId of ['C', 'F', 'U']) {
        const claim = claimOf(await store.claim({ externalId, bodyHash: 'h' }));
        if (externalId === 'C') store.created(claim, { httpStatus: 201 });
        if (externalId === 'F') store.failed(claim, { message: 'no' });
        if (externalId === 'U') store.unknown(claim, 'reset');
      }
      await store.close();
      const fresh = await open(service);
      for (const externalId of ['C', 'F', 'U']) {
        const entry = await fresh.lookup(externalId);
        expect(entry?.sentAt, externalId).toEqual(expect.any(String));
        expect(Date.parse(entry!.sentAt!)).toBeLessThanOrEqual(Date.parse(entry!.at));
      }
    });

    it('finds a key that JSON escapes', async () => {
      const service = newService();
      const key = 'X "quoted" é\\ \u2028';
      const writer = await open(service);
      writer.created(claimOf(await writer.claim({ externalId: key, bodyHash: 'h' })), {
        httpStatus: 201,
        id: 9,
      });
      await writer.close();
      const reader = await open(service);
      expect((await reader.lookup(key))?.id).toBe(9);
      expect(refusalOf(await reader.claim({ externalId: key, bodyHash: 'h' })).reason).toBe('created');
      const prefetching = await open(service);
      await prefetching.prefetch([key]);
      expect(prefetching.prefetchedCounts()).toEqual({ created: 1, inDoubt: 0 });
      expect((await prefetching.list()).map((listed) => listed.externalId)).toEqual([key]);
    });

    it('refusals: created is refused as created (to its own owner too), in doubt as in-doubt, a live owner’s claim as claimed even with takeOverDoubt or takeOverAny', async () => {
      const service = newService();
      const owner = await open(service);
      const other = await open(service, { source: { by: 'orders create' } });
      owner.created(claimOf(await owner.claim({ externalId: 'CREATED', bodyHash: 'h' })), {
        httpStatus: 201,
        id: 7,
        code: 'SO-7',
      });
      owner.unknown(claimOf(await owner.claim({ externalId: 'DOUBT', bodyHash: 'h' })), 'reset');
      const live = claimOf(await owner.claim({ externalId: 'LIVE', bodyHash: 'h', line: 5 }));
      await owner.sync();

      for (const store of [owner, other]) {
        expect(refusalOf(await store.claim({ externalId: 'CREATED', bodyHash: 'changed' }))).toMatchObject({
          reason: 'created',
          entry: { status: 'created', id: 7, code: 'SO-7' },
        });
        expect(
          refusalOf(await store.claim({ externalId: 'CREATED', bodyHash: 'h', takeOverDoubt: true })).reason,
        ).toBe('created');
        expect(refusalOf(await store.claim({ externalId: 'DOUBT', bodyHash: 'h' }))).toMatchObject({
          reason: 'in-doubt',
          entry: { status: 'in-doubt', reason: 'reset' },
        });
      }
      const takeovers: Partial<ClaimRequest>[] = [{}, { takeOverDoubt: true }, { takeOverAny: true }];
      for (const takeover of takeovers) {
        for (const store of [owner, other]) {
          expect(
            refusalOf(await store.claim({ externalId: 'LIVE', bodyHash: 'h', ...takeover })),
          ).toMatchObject({
            reason: 'claimed',
            entry: { status: 'claimed', token: live.token, owner: { id: owner.owner.id }, line: 5 },
          });
        }
      }
      // A live owner in another process of this host (judged by its PID): claimed as well.
      const child = await spawnClaimer(ledger.ledger, service);
      await child.claim(['CHILD'], { outcome: 'none' });
      for (const takeover of takeovers) {
        expect(
          refusalOf(await other.claim({ externalId: 'CHILD', bodyHash: 'h', ...takeover })),
        ).toMatchObject({
          reason: 'claimed',
          entry: { status: 'claimed', owner: { id: child.owner.id, pid: child.pid } },
        });
      }
      expect(await other.lookup('LIVE')).toMatchObject({ status: 'claimed', token: live.token });
    });

    it('takeovers: takeOverDoubt claims a key in doubt, takeOverAny a created one; a claim whose owner was killed is in doubt at once, taken over by one takeOverDoubt; notSent puts back what was taken over', async () => {
      const service = newService();
      const a = await open(service);
      const b = await open(service, { source: { by: 'orders create' } });
      a.unknown(claimOf(await a.claim({ externalId: 'U', bodyHash: 'h' })), 'reset');
      a.created(claimOf(await a.claim({ externalId: 'C', bodyHash: 'h' })), { httpStatus: 201, id: 1 });
      await a.sync();

      // --retry-unknown: takes over the doubt; not sent after all, the doubt stands.
      const retry = claimOf(await b.claim({ externalId: 'U', bodyHash: 'h', takeOverDoubt: true }));
      expect(retry.previous).toMatchObject({ status: 'in-doubt', reason: 'reset' });
      expect(await a.lookup('U')).toMatchObject({
        status: 'claimed',
        token: retry.token,
        by: 'orders create',
      });
      b.notSent(retry, 'interrupted');
      await b.sync();
      expect(await a.lookup('U')).toMatchObject({ status: 'in-doubt', reason: 'reset' });
      expect(refusalOf(await a.claim({ externalId: 'U', bodyHash: 'h' })).reason).toBe('in-doubt');

      // `orders create --force`: takes over a created key; not sent after all, created stands.
      const forced = claimOf(await b.claim({ externalId: 'C', bodyHash: 'h2', takeOverAny: true }));
      expect(forced.previous).toMatchObject({ status: 'created', id: 1 });
      expect(await a.lookup('C')).toMatchObject({ status: 'claimed', token: forced.token });
      b.notSent(forced, 'interrupted');
      await b.sync();
      expect(await a.lookup('C')).toMatchObject({ status: 'created', id: 1 });

      // A claim left by a process of this host that was killed: judged by its PID, without waiting.
      const child = await claimedByKilledProcess(service, ['GONE-1', 'GONE-2'], 9);
      const asked = performance.now();
      const refusal = refusalOf(await a.claim({ externalId: 'GONE-1', bodyHash: 'h' }));
      expect(performance.now() - asked).toBeLessThan(STALE_MS / 2);
      expect(refusal).toMatchObject({
        reason: 'in-doubt',
        entry: {
          status: 'in-doubt',
          event: 'unknown',
          reason: 'the command that sent it stopped before the answer',
          line: 9,
          // The doubt names who left it.
          owner: { id: child.owner.id, pid: child.pid },
        },
      });
      // Nobody wrote an outcome: its state is still the claim.
      expect(await b.lookup('GONE-1')).toMatchObject({ status: 'claimed', owner: { id: child.owner.id } });
      expect(refusalOf(await b.claim({ externalId: 'GONE-1', bodyHash: 'h' })).reason).toBe('in-doubt');
      // Two stores take it over at once: one does.
      const race = await Promise.all(
        [a, b].map(async (store) => ({
          store,
          result: await store.claim({ externalId: 'GONE-1', bodyHash: 'h', takeOverDoubt: true }),
        })),
      );
      expect(race.filter(({ result }) => result.claimed)).toHaveLength(1);
      expect(refusalOf(race.find(({ result }) => !result.claimed)!.result).reason).toBe('claimed');
      const winner = race.find(({ result }) => result.claimed)!;
      const takeover = claimOf(winner.result);
      expect(takeover.previous).toMatchObject({
        status: 'in-doubt',
        event: 'unknown',
        owner: { id: child.owner.id },
      });
      winner.store.notSent(takeover, 'interrupted');
      await winner.store.sync();
      expect(await a.lookup('GONE-1')).toMatchObject({
        status: 'in-doubt',
        event: 'unknown',
        owner: { id: child.owner.id },
      });
      // takeOverAny takes over a dead owner's claim too.
      claimOf(await b.claim({ externalId: 'GONE-2', bodyHash: 'h', takeOverAny: true }));
    });

    it.skipIf(!UNSHARE)(
      'liveness: an owner in another PID namespace is claimed while it beats, in doubt once it stopped beating for the stale time, at once when it closed',
      async () => {
        const service = newService();
        const elsewhere = { source: IMPORT, namespace: true };
        const beating = await spawnClaimer(ledger.ledger, service, elsewhere);
        const closing = await spawnClaimer(ledger.ledger, service, elsewhere);
        const stopping = await spawnClaimer(ledger.ledger, service, elsewhere);
        expect(beating.owner.pidns).not.toBe(me.pidns);
        expect(beating.owner.boot).toBe(me.boot);
        // In this order: the beating owner's claim is older than the stopped owner's last beat.
        await beating.claim(['BEATING'], { outcome: 'none' });
        await closing.claim(['CLOSED'], { outcome: 'none' });
        // Its last beat is no earlier than this claim (a store beats when it claims, or watches).
        const lastClaimAsked = performance.now();
        await stopping.claim(['STOPPED'], { outcome: 'none' });
        await closing.close();
        stopping.signal('SIGSTOP');

        const observer = await open(service, { source: { by: 'orders create' } });
        // Closed (its heartbeat ended): in doubt at once.
        const asked = performance.now();
        expect(refusalOf(await observer.claim({ externalId: 'CLOSED', bodyHash: 'h' }))).toMatchObject({
          reason: 'in-doubt',
          entry: { status: 'in-doubt', owner: { id: closing.owner.id } },
        });
        expect(performance.now() - asked).toBeLessThan(STALE_MS / 2);

        // Stopped: in doubt once its heartbeat has not changed for the stale time.
        const verdict = await waitForDoubt(observer, 'STOPPED', STALE_MS + 10_000);
        expect(verdict.entry.owner).toMatchObject({ id: stopping.owner.id });
        // Not before the stale time (a margin for the server's clock against this one's).
        expect(performance.now() - lastClaimAsked).toBeGreaterThanOrEqual(STALE_MS - 250);

        // Beating: still claimed, its claim now older than the stale time, whatever the takeover.
        for (const takeover of [{}, { takeOverDoubt: true }, { takeOverAny: true }]) {
          expect(
            refusalOf(await observer.claim({ externalId: 'BEATING', bodyHash: 'h', ...takeover })),
          ).toMatchObject({ reason: 'claimed', entry: { owner: { id: beating.owner.id } } });
        }
        const listed = new Map((await observer.list()).map(({ externalId, entry }) => [externalId, entry]));
        expect(listed.get('BEATING')).toMatchObject({ status: 'claimed' });
        expect(listed.get('STOPPED')).toMatchObject({ status: 'in-doubt', owner: { id: stopping.owner.id } });
        expect(listed.get('CLOSED')).toMatchObject({ status: 'in-doubt', owner: { id: closing.owner.id } });
        // The doubt it left is taken over with takeOverDoubt.
        const taken = claimOf(
          await observer.claim({ externalId: 'STOPPED', bodyHash: 'h', takeOverDoubt: true }),
        );
        expect(taken.previous).toMatchObject({ status: 'in-doubt', owner: { id: stopping.owner.id } });
      },
      STALE_MS + 20_000,
    );

    /** Asks for a claim of `externalId` until it is refused as in doubt (its owner judged dead). */
    function waitForDoubt(
      store: LedgerStore,
      externalId: string,
      timeoutMs: number,
    ): Promise<{ reason: string; entry: LedgerEntry }> {
      return waitFor(
        async () => {
          const refusal = refusalOf(await store.claim({ externalId, bodyHash: 'h' }));
          // Until then: being sent by a live owner.
          if (refusal.reason !== 'in-doubt') expect(refusal.reason).toBe('claimed');
          return refusal.reason === 'in-doubt' && refusal;
        },
        timeoutMs,
        `${externalId} refused as in doubt`,
        100,
      );
    }

    it('damage: nothing is sent for a key whose stored state cannot be read; other keys are not concerned', async () => {
      const service = newService();
      const writer = await open(service);
      for (const externalId of ['DAMAGED', 'FINE']) {
        writer.created(claimOf(await writer.claim({ externalId, bodyHash: 'h' })), { httpStatus: 201 });
      }
      await writer.close();
      await ledger.damage(writer, 'DAMAGED');
      const store = await open(service);
      for (const takeover of [{}, { takeOverDoubt: true }, { takeOverAny: true }]) {
        const outcome = await store.claim({ externalId: 'DAMAGED', bodyHash: 'h', ...takeover }).then(
          (result) => result,
          (error: unknown) => error,
        );
        expect(outcome, 'never a claim of a damaged key').not.toMatchObject({ claimed: true });
      }
      expect(refusalOf(await store.claim({ externalId: 'FINE', bodyHash: 'h' })).reason).toBe('created');
      claimOf(await store.claim({ externalId: 'NEW', bodyHash: 'h' }));
    });

    it('damage: a key whose stored state cannot be read is reported as damage (exit 2) by lookup, claim and list, never read as a state', async () => {
      const service = newService();
      const writer = await open(service);
      writer.created(claimOf(await writer.claim({ externalId: 'DAMAGED', bodyHash: 'h' })), {
        httpStatus: 201,
      });
      await writer.close();
      await ledger.damage(writer, 'DAMAGED');
      const store = await open(service);
      const damage = { exitCode: 2, message: expect.stringMatching(/damaged/) };
      await expect(store.lookup('DAMAGED')).rejects.toMatchObject(damage);
      await expect(store.list()).rejects.toMatchObject(damage);
      for (const takeover of [{}, { takeOverDoubt: true }, { takeOverAny: true }]) {
        await expect(
          store.claim({ externalId: 'DAMAGED', bodyHash: 'h', ...takeover }),
        ).rejects.toMatchObject(damage);
      }
    });

    it('resolve: a person’s word settles a key in doubt (created; or not created, free again), and is refused while a live owner holds the claim', async () => {
      const service = newService();
      const sender = await open(service);
      sender.unknown(claimOf(await sender.claim({ externalId: 'A', bodyHash: 'h', line: 2 })), 'reset');
      sender.unknown(claimOf(await sender.claim({ externalId: 'B', bodyHash: 'h', line: 3 })), 'reset');
      const live = claimOf(await sender.claim({ externalId: 'LIVE', bodyHash: 'h' }));
      await sender.sync();
      const person = await open(service, { source: { by: 'orders resolve' } });
      await person.resolved('A', 'not-created', { evidence: 'checked by hand' });
      await person.resolved('B', 'created', { id: 42, code: 'SO-42', evidence: 'checked by hand' });

      const fresh = await open(service);
      expect(await fresh.lookup('A')).toMatchObject({
        status: 'not-created',
        event: 'resolved',
        resolved: 'not-created',
        evidence: 'checked by hand',
        by: 'orders resolve',
        // It stays in the history of the input that sent it.
        input: IMPORT.input,
        line: 2,
      });
      expect(await fresh.lookup('B')).toMatchObject({
        status: 'created',
        event: 'resolved',
        resolved: 'created',
        id: 42,
        code: 'SO-42',
        evidence: 'checked by hand',
        input: IMPORT.input,
      });
      expect(claimOf(await fresh.claim({ externalId: 'A', bodyHash: 'h' })).previous).toMatchObject({
        status: 'not-created',
        resolved: 'not-created',
      });
      expect(
        refusalOf(await fresh.claim({ externalId: 'B', bodyHash: 'h', takeOverDoubt: true })),
      ).toMatchObject({
        reason: 'created',
        entry: { resolved: 'created', id: 42 },
      });

      // Being sent right now by a live ordercli: refused, nothing recorded.
      const error = await person.resolved('LIVE', 'not-created', { evidence: 'checked' }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ClaimedNowError);
      expect(error).toMatchObject({
        exitCode: 2,
        message: expect.stringContaining('is being sent right now by another ordercli'),
      });
      expect(await fresh.lookup('LIVE')).toMatchObject({ status: 'claimed', token: live.token });
      // Once its outcome is in (in doubt), the person's word applies.
      sender.unknown(live, 'no answer within --timeout');
      await sender.sync();
      await person.resolved('LIVE', 'not-created', { evidence: 'checked' });
      expect(await fresh.lookup('LIVE')).toMatchObject({ status: 'not-created', resolved: 'not-created' });

      // A claim whose owner was killed is in doubt: a person may settle it.
      await claimedByKilledProcess(service, ['GONE']);
      await person.resolved('GONE', 'created', { id: 5, evidence: 'seen in the back office' });
      expect(await fresh.lookup('GONE')).toMatchObject({ status: 'created', resolved: 'created', id: 5 });
    });

    it('list: every key with its state (a killed owner’s claim as the doubt it leaves, naming it), or the keys of given inputs; openers: the stores open', async () => {
      const service = newService();
      const mine = await open(service, { source: IMPORT });
      const theirs = await open(service, { source: OTHER });
      const claimed = async (store: LedgerStore, externalId: string, line?: number) =>
        claimOf(await store.claim({ externalId, bodyHash: 'h', ...(line ? { line } : {}) }));
      mine.created(await claimed(mine, 'M-1', 2), { httpStatus: 201 });
      mine.unknown(await claimed(mine, 'M-2', 3), 'reset');
      // Being sent right now by a live ordercli (this process).
      await claimed(mine, 'M-3', 4);
      mine.failed(await claimed(mine, 'M-4', 5), { httpStatus: 422, message: 'no' });
      theirs.created(await claimed(theirs, 'T-1'), { httpStatus: 201 });
      // Sent by one input, in doubt, then taken over and created by the other: its history now.
      mine.unknown(await claimed(mine, 'BOTH'), 'reset');
      await mine.sync();
      theirs.created(
        claimOf(await theirs.claim({ externalId: 'BOTH', bodyHash: 'h', takeOverDoubt: true })),
        { httpStatus: 201 },
      );
      await Promise.all([mine.sync(), theirs.sync()]);
      const child = await claimedByKilledProcess(service, ['GONE'], 9);

      const reader = await open(service, { readOnly: true });
      const states = new Map((await reader.list()).map(({ externalId, entry }) => [externalId, entry]));
      expect([...states.keys()].sort()).toEqual(['BOTH', 'GONE', 'M-1', 'M-2', 'M-3', 'M-4', 'T-1']);
      expect(states.get('M-1')).toMatchObject({ status: 'created', input: IMPORT.input, line: 2 });
      expect(states.get('M-2')).toMatchObject({ status: 'in-doubt', reason: 'reset', line: 3 });
      expect(states.get('M-3')).toMatchObject({ status: 'claimed', line: 4, owner: { id: mine.owner.id } });
      expect(states.get('M-4')).toMatchObject({ status: 'not-created', message: 'no' });
      expect(states.get('T-1')).toMatchObject({ status: 'created', ...OTHER });
      expect(states.get('BOTH')).toMatchObject({ status: 'created', ...OTHER });
      expect(states.get('GONE')).toMatchObject({
        status: 'in-doubt',
        event: 'unknown',
        input: IMPORT.input,
        line: 9,
        owner: { id: child.owner.id, host: me.host, pid: child.pid },
      });

      const keys = async (inputs: string[]) =>
        (await reader.list({ inputs })).map((listed) => listed.externalId).sort();
      // By the input's identity, or by the name of its history.
      expect(await keys([IMPORT.input!])).toEqual(['GONE', 'M-1', 'M-2', 'M-3', 'M-4']);
      expect(await keys([IMPORT.journal!])).toEqual(['GONE', 'M-1', 'M-2', 'M-3', 'M-4']);
      expect(await keys([OTHER.input!])).toEqual(['BOTH', 'T-1']);
      expect(await keys([OTHER.journal!])).toEqual(['BOTH', 'T-1']);
      expect(await keys(['/nowhere', OTHER.input!, IMPORT.journal!])).toEqual([...states.keys()].sort());
      expect(await keys(['/nowhere'])).toEqual([]);
      expect(await keys([])).toEqual([]);
      // A sample (the move check reads no more): at most `limit` keys, each one a key of the ledger.
      const sample = await reader.list({ limit: 2 });
      expect(sample).toHaveLength(2);
      for (const { externalId } of sample) expect(states.has(externalId), externalId).toBe(true);
      expect(await reader.list({ inputs: [IMPORT.input!], limit: 1 })).toHaveLength(1);

      // Who has it open: both writing stores, alive; not the read-only one; not the killed process.
      const openers = new Map((await reader.openers()).map((opener) => [opener.owner.id, opener]));
      expect(openers.get(mine.owner.id)).toMatchObject({ alive: 'alive', owner: mine.owner });
      expect(openers.get(theirs.owner.id)).toMatchObject({ alive: 'alive' });
      expect(openers.has(reader.owner.id)).toBe(false);
      expect(openers.get(child.owner.id)?.alive ?? 'dead').toBe('dead');
      await theirs.close();
      expect((await mine.openers()).map((opener) => opener.owner.id)).not.toContain(theirs.owner.id);
    });

    it('adopt: states of keys the ledger has no record of are recorded; keys it knows are untouched', async () => {
      const service = newService();
      const store = await open(service);
      store.failed(claimOf(await store.claim({ externalId: 'KNOWN', bodyHash: 'h' })), { message: 'no' });
      await store.sync();
      const before = await store.lookup('KNOWN');
      const at = '2026-11-20T10:00:00.000Z';
      const old = { by: 'orders import', journal: '/data/in.csv.journal.ndjson' } as const;
      const records: LedgerRecord[] = [
        { externalId: 'KNOWN', event: 'created', at, ...old, id: 1 },
        { externalId: 'NEW-CREATED', event: 'created', at, ...old, id: 2, bodyHash: 'h' },
        { externalId: 'NEW-DOUBT', event: 'unknown', at, ...old, reason: 'reset' },
        { externalId: 'NEW-RESOLVED', event: 'resolved', at, ...old, resolution: 'created' },
      ];
      await store.adopt(records);
      const reader = await open(service);
      expect(await reader.lookup('KNOWN')).toEqual(before);
      expect(await reader.lookup('NEW-CREATED')).toMatchObject({ status: 'created', id: 2, ...old });
      expect(await reader.lookup('NEW-DOUBT')).toMatchObject({ status: 'in-doubt', reason: 'reset' });
      expect(await reader.lookup('NEW-RESOLVED')).toMatchObject({ status: 'created', resolved: 'created' });
      expect(refusalOf(await reader.claim({ externalId: 'NEW-DOUBT', bodyHash: 'h' })).reason).toBe(
        'in-doubt',
      );
      expect(refusalOf(await reader.claim({ externalId: 'NEW-CREATED', bodyHash: 'h' })).reason).toBe(
        'created',
      );
      expect(
        (await reader.list({ inputs: [old.journal] })).map((listed) => listed.externalId).sort(),
      ).toEqual(['NEW-CREATED', 'NEW-DOUBT', 'NEW-RESOLVED']);
      // Adopting again changes nothing.
      await store.adopt([{ externalId: 'NEW-CREATED', event: 'created', at: 'later', ...old, id: 99 }]);
      expect(await (await open(service)).lookup('NEW-CREATED')).toMatchObject({ status: 'created', id: 2 });
    });

    // Fails on the local store (src bug, see the report): it writes only the first record of a key
    // it has no record of, then knows the key and passes over the rest of its records.
    it('adopt: a key’s several records (`ledger copy`: its claim, then its outcome) are applied in order', async () => {
      const service = newService();
      const store = await open(service);
      const at = '2026-11-20T10:00:00.000Z';
      const owner = { host: 'old-runner', pid: 1, id: 'old-owner' };
      await store.adopt([
        { externalId: 'COPIED', event: 'claim', at, token: 't1', owner, by: 'orders import', journal: '/j' },
        { externalId: 'COPIED', event: 'created', at, token: 't1', httpStatus: 201, id: 3, journal: '/j' },
        { externalId: 'NOT-SENT', event: 'claim', at, token: 't2', owner, by: 'orders import' },
        { externalId: 'NOT-SENT', event: 'not-sent', at, token: 't2', reason: 'interrupted' },
        { externalId: 'DOUBT', event: 'claim', at, token: 't3', owner, by: 'orders import' },
        { externalId: 'DOUBT', event: 'unknown', at, token: 't3', reason: 'reset' },
      ]);
      const reader = await open(service);
      expect(await reader.lookup('COPIED')).toMatchObject({ status: 'created', id: 3, journal: '/j' });
      expect(await reader.lookup('NOT-SENT')).toBeUndefined();
      expect(await reader.lookup('DOUBT')).toMatchObject({ status: 'in-doubt', reason: 'reset' });
      expect(refusalOf(await reader.claim({ externalId: 'COPIED', bodyHash: 'h' })).reason).toBe('created');
      expect((await reader.list({ inputs: ['/j'] })).map((listed) => listed.externalId)).toEqual(['COPIED']);
    });

    it('prefetch: reads ahead what every writer knows of the keys (knows, prefetchedCounts); a claim still sees what was written since', async () => {
      const service = newService();
      const writer = await open(service, { source: { by: 'orders create' } });
      const outcomes: [string, (claim: Claim) => void][] = [
        ['C1', (claim) => writer.created(claim, { httpStatus: 201, id: 1, code: 'SO-1' })],
        ['C2', (claim) => writer.created(claim, { httpStatus: 201, id: 2 })],
        ['C3', (claim) => writer.created(claim, { httpStatus: 201, id: 3 })],
        ['D', (claim) => writer.unknown(claim, 'reset')],
        ['N', (claim) => writer.failed(claim, { httpStatus: 422, message: 'no' })],
        // Being sent by a live store: counted with the doubts.
        ['X', () => undefined],
      ];
      for (const [externalId, outcome] of outcomes) {
        outcome(claimOf(await writer.claim({ externalId, bodyHash: 'h' })));
      }
      await writer.sync();

      const reader = await open(service);
      expect(reader.prefetchedCounts()).toEqual({ created: 0, inDoubt: 0 });
      await reader.prefetch(['C1', 'C2', 'D', 'N', 'X', 'FREE', 'FREE', 'LATER']);
      expect(reader.prefetchedCounts()).toEqual({ created: 2, inDoubt: 2 });
      expect(['C1', 'C2', 'D', 'N', 'X'].every((key) => reader.knows(key))).toBe(true);
      // Free, or not prefetched (C3 exists): not known.
      expect(['FREE', 'LATER', 'C3'].some((key) => reader.knows(key))).toBe(false);
      // Prefetched again: counted once.
      await reader.prefetch(['C1', 'D']);
      expect(reader.prefetchedCounts()).toEqual({ created: 2, inDoubt: 2 });
      expect(await reader.lookup('C1')).toMatchObject({
        status: 'created',
        id: 1,
        code: 'SO-1',
        by: 'orders create',
      });
      expect(await reader.lookup('D')).toMatchObject({ status: 'in-doubt', reason: 'reset' });
      expect(await reader.lookup('FREE')).toBeUndefined();
      expect(await reader.lookup('C3')).toMatchObject({ status: 'created', id: 3 });

      // Written since the prefetch: a claim sees it.
      writer.created(claimOf(await writer.claim({ externalId: 'LATER', bodyHash: 'h' })), {
        httpStatus: 201,
      });
      await writer.sync();
      await writer.resolved('C2', 'not-created', { evidence: 'not in the back office' });
      expect(refusalOf(await reader.claim({ externalId: 'LATER', bodyHash: 'h' })).reason).toBe('created');
      expect(claimOf(await reader.claim({ externalId: 'C2', bodyHash: 'h' })).previous).toMatchObject({
        status: 'not-created',
        resolved: 'not-created',
      });
      claimOf(await reader.claim({ externalId: 'FREE', bodyHash: 'h' }));
      expect(claimOf(await reader.claim({ externalId: 'N', bodyHash: 'h' })).previous).toMatchObject({
        status: 'not-created',
      });
      expect(refusalOf(await reader.claim({ externalId: 'C1', bodyHash: 'h' })).reason).toBe('created');
      expect(refusalOf(await reader.claim({ externalId: 'X', bodyHash: 'h' })).reason).toBe('claimed');

      // An import's KeyTable (which the store may take over), after a lookup of one of its keys.
      const table = new KeyTable();
      ['C1', 'D', 'FREE-2'].forEach((key, line) => {
        table.set(key, line + 2);
      });
      const importer = await open(service);
      expect((await importer.lookup('C1'))?.status).toBe('created');
      await importer.prefetch(table);
      expect(importer.prefetchedCounts()).toEqual({ created: 1, inDoubt: 1 });
      expect(importer.knows('C1') && importer.knows('D') && !importer.knows('FREE-2')).toBe(true);
    });

    it('one service, two names: a key created through http://127.0.0.1:<port> is refused as created through http://localhost:<port>', async () => {
      const port = new URL(newService()).port;
      const byAddress = await open(`http://127.0.0.1:${port}`);
      byAddress.created(claimOf(await byAddress.claim({ externalId: 'SAME-1', bodyHash: 'h' })), {
        httpStatus: 201,
        id: 1,
      });
      await byAddress.sync();
      const byName = await open(`http://localhost:${port}/`);
      expect(byName.baseUrl).toBe(`http://localhost:${port}`);
      expect(byName.sameServiceAs).toBe(`http://127.0.0.1:${port}`);
      expect(refusalOf(await byName.claim({ externalId: 'SAME-1', bodyHash: 'h' }))).toMatchObject({
        reason: 'created',
        entry: { id: 1 },
      });
      // What it claims, the other name sees.
      const claim = claimOf(await byName.claim({ externalId: 'SAME-2', bodyHash: 'h' }));
      expect(await byAddress.lookup('SAME-2')).toMatchObject({ status: 'claimed', token: claim.token });
      expect((await byAddress.list()).map((listed) => listed.externalId).sort()).toEqual([
        'SAME-1',
        'SAME-2',
      ]);
      // Another port is another service.
      const elsewhere = await open(`http://localhost:${new URL(newService()).port}`);
      expect(elsewhere.sameServiceAs).toBeUndefined();
      claimOf(await elsewhere.claim({ externalId: 'SAME-1', bodyHash: 'h' }));
    });

    it('kinds and read-only: contact references are kept apart from orders; a read-only store reads, never writes, and has no heartbeat', async () => {
      const service = newService();
      const orders = await open(service);
      orders.created(claimOf(await orders.claim({ externalId: 'K-1', bodyHash: 'h' })), { httpStatus: 201 });
      await orders.sync();
      const contacts = await open(service, {
        kind: 'contact-references',
        source: { by: 'refs contacts import' },
      });
      expect(await contacts.lookup('K-1')).toBeUndefined();
      contacts.created(claimOf(await contacts.claim({ externalId: 'K-1', bodyHash: 'h' })), {
        httpStatus: 409,
      });
      contacts.created(claimOf(await contacts.claim({ externalId: 'K-2', bodyHash: 'h' })), {
        httpStatus: 201,
      });
      await contacts.sync();
      expect(await orders.lookup('K-2')).toBeUndefined();
      expect((await orders.list()).map((listed) => listed.externalId)).toEqual(['K-1']);
      expect((await contacts.list()).map((listed) => listed.externalId).sort()).toEqual(['K-1', 'K-2']);

      const reader = await open(service, { readOnly: true });
      expect(await reader.lookup('K-1')).toMatchObject({ status: 'created' });
      await expect(reader.claim({ externalId: 'K-3', bodyHash: 'h' })).rejects.toThrow(/read-only/);
      await expect(reader.resolved('K-1', 'not-created', {})).rejects.toThrow(/read-only/);
      expect((await orders.openers()).map((opener) => opener.owner.id)).not.toContain(reader.owner.id);
    });
  });
});
