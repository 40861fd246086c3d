// The local order ledger's own ways: its folders and shard files, the records a claim and an
// adoption append, lines that writers never interleave, damage and torn lines, the write-ahead log
// and its recovery, prefetch by shard, and shards written by the release before claims. What every
// store guarantees (claims raced, outcomes, takeovers, liveness, resolve, list, prefetch, adopt,
// one service under two names) is the contract suite's: test/ledger/store.contract.test.ts.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { heartbeatOwner, thisProcess } from '../../src/core/liveness.js';
import { LedgerDamagedError } from '../../src/ledger/errors.js';
import { LEDGER_SHARDS, LocalLedger, ledgerFolder, shardFileName, shardOf } from '../../src/ledger/local.js';
import {
  applyRecord,
  type ClaimOwner,
  type LedgerEntry,
  type LedgerRecord,
  type RecordSource,
  stateKey,
} from '../../src/ledger/record.js';
import type { Claim, ClaimResult, LedgerKind } from '../../src/ledger/store.js';
import { ROOT, tempDir } from '../support/cli.js';
import { probe, requireTool } from '../support/requirements.js';

const MKFIFO = requireTool('mkfifo', {
  what: 'a ledger root or shard that is a pipe (test/ledger/local.test.ts)',
  missing: probe('mkfifo', '--version'),
  how: 'apt-get install -y coreutils',
});

const BASE = 'http://127.0.0.1:4780/';
const NORMALIZED = 'http://127.0.0.1:4780';
const IMPORT: RecordSource = {
  by: 'orders import',
  input: '/data/in.csv',
  journal: '/data/in.csv.journal.ndjson',
};
const me = thisProcess();

const opened: LocalLedger[] = [];
afterEach(async () => {
  // Stops the heartbeats of ledgers a failing test left open.
  await Promise.all(opened.splice(0).map((ledger) => ledger.close().catch(() => undefined)));
});

async function open(
  root: string,
  options: { source?: RecordSource; kind?: LedgerKind; readOnly?: boolean; baseUrl?: string } = {},
): Promise<LocalLedger> {
  const ledger = await LocalLedger.open(root, {
    baseUrl: options.baseUrl ?? BASE,
    kind: options.kind ?? 'orders',
    source: options.source ?? { by: 'orders import' },
    readOnly: options.readOnly,
  });
  opened.push(ledger);
  return ledger;
}

function claimOf(result: ClaimResult): Claim {
  if (!result.claimed) throw new Error(`expected a claim, got a refusal (${result.refusal.reason})`);
  return result.claim;
}

function refusalOf(result: ClaimResult): { reason: string; entry: LedgerEntry } {
  if (result.claimed) throw new Error(`expected a refusal, got a claim of ${result.claim.externalId}`);
  return result.refusal;
}

function shardPath(root: string, externalId: string): string {
  return join(ledgerFolder(root, BASE), shardFileName(shardOf(externalId)));
}

/** Appends records by hand to the shard of their key (creating the service folder). */
function writeRecords(root: string, ...records: LedgerRecord[]): void {
  mkdirSync(ledgerFolder(root, BASE), { recursive: true });
  for (const record of records)
    appendFileSync(shardPath(root, record.externalId), `${JSON.stringify(record)}\n`);
}

/** The records of every shard of the service, file by file, in file order. */
function shardRecords(root: string): LedgerRecord[][] {
  const folder = ledgerFolder(root, BASE);
  return readdirSync(folder)
    .filter((name) => /^[0-9a-f]{3}\.ndjson$/.test(name))
    .map((name) =>
      readFileSync(join(folder, name), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as LedgerRecord),
    );
}

/** Replays the shards as every reader does: the claims that took effect, and the final states. */
function replayShards(root: string): { claimsWon: LedgerRecord[]; states: Map<string, LedgerEntry> } {
  const states = new Map<string, LedgerEntry>();
  const claimsWon: LedgerRecord[] = [];
  for (const records of shardRecords(root)) {
    for (const record of records) {
      const state = applyRecord(states.get(record.externalId), record);
      if (record.event === 'claim' && state?.status === 'claimed' && state.token === record.token) {
        claimsWon.push(record);
      }
      if (state) states.set(record.externalId, state);
      else states.delete(record.externalId);
    }
  }
  return { claimsWon, states };
}

/** The PID of a process that has exited. */
function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString(),
  );
}

/** A claim record as another process writes it. */
function claimRecord(
  externalId: string,
  owner: ClaimOwner | undefined,
  token = 'foreign-token',
): LedgerRecord {
  const record: LedgerRecord = {
    externalId,
    event: 'claim',
    at: '2026-11-26T10:00:00.000Z',
    token,
    by: 'orders import',
    bodyHash: 'h',
  };
  if (owner) record.owner = owner;
  return record;
}

/** Ids that fall in few shards, so that writers meet in the same files. */
function fewShardIds(count: number, prefix = 'ID'): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) {
    if (shardOf(`${prefix}-${i}`) % 512 === 0) ids.push(`${prefix}-${i}`);
  }
  return ids;
}

describe('LocalLedger: layout', () => {
  it('keeps one folder per service, whatever the trailing slash, named by service.json, with 3-hex-digit shard files', async () => {
    expect(ledgerFolder('/c', 'http://127.0.0.1:4780')).toBe(ledgerFolder('/c', BASE));
    expect(ledgerFolder('/c', BASE)).toMatch(/^\/c\/http_127\.0\.0\.1_4780-[0-9a-f]{8}$/);
    expect(ledgerFolder('/c', 'http://127.0.0.1:4781')).not.toBe(ledgerFolder('/c', BASE));
    expect(shardFileName(shardOf('WEB-2001'))).toMatch(/^[0-9a-f]{3}\.ndjson$/);
    expect(shardOf('WEB-2001')).toBeLessThan(LEDGER_SHARDS);

    const root = tempDir();
    const ledger = await open(root);
    expect(ledger.location).toBe(ledgerFolder(root, BASE));
    expect(ledger.baseUrl).toBe(NORMALIZED);
    expect(ledger.sameServiceAs).toBeUndefined();
    expect(ledger.owner).toMatchObject({
      host: me.host,
      pid: process.pid,
      id: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(JSON.parse(readFileSync(join(ledger.location, 'service.json'), 'utf8'))).toEqual({
      baseUrl: NORMALIZED,
    });
    claimOf(await ledger.claim({ externalId: 'WEB-2001', bodyHash: 'h' }));
    expect(existsSync(shardPath(root, 'WEB-2001'))).toBe(true);
    expect(statSync(shardPath(root, 'WEB-2001')).mode & 0o777).toBe(0o600);
  });

  it('keeps contact references in a folder of their own, and another name of the service in its folder', async () => {
    const root = tempDir();
    const contacts = await open(root, { kind: 'contact-references', source: { by: 'refs contacts import' } });
    expect(contacts.location).toBe(join(ledgerFolder(root, BASE), 'contact-references'));
    contacts.created(claimOf(await contacts.claim({ externalId: 'C-1', bodyHash: 'h' })), {
      httpStatus: 201,
    });
    await contacts.close();
    const alias = await open(root, { baseUrl: 'http://localhost:4780' });
    expect(alias.sameServiceAs).toBe(NORMALIZED);
    expect(alias.location).toBe(ledgerFolder(root, BASE));
  });

  it('read-only: creates nothing, not even its folder', async () => {
    const root = join(tempDir(), 'ledger');
    const nothing = await open(root, { readOnly: true });
    expect(await nothing.lookup('A')).toBeUndefined();
    expect(await nothing.list()).toEqual([]);
    await nothing.close();
    expect(existsSync(root)).toBe(false);
  });
});

describe('LocalLedger: the records a claim appends', () => {
  it('a claim over a known state names it (`over`, the compare-and-swap); one of a free key names none', async () => {
    const root = tempDir();
    const ledger = await open(root);
    const first = claimOf(await ledger.claim({ externalId: 'U', bodyHash: 'h' }));
    ledger.unknown(first, 'no answer within --timeout');
    const retry = claimOf(await ledger.claim({ externalId: 'U', bodyHash: 'h', takeOverDoubt: true }));
    await ledger.sync();
    const records = shardRecords(root).flat();
    expect(
      records.find((record) => record.token === first.token && record.event === 'claim')?.over,
    ).toBeUndefined();
    expect(records.find((record) => record.token === retry.token && record.event === 'claim')?.over).toBe(
      stateKey(retry.previous!),
    );
  });
});

describe('LocalLedger: racing claims', () => {
  it('never interleaves the lines of writers appending to the same shards at once', async () => {
    const root = tempDir();
    const writers = await Promise.all(Array.from({ length: 6 }, () => open(root)));
    const ids = fewShardIds(60);
    await Promise.all(
      writers.map(async (ledger, w) => {
        const claims = await Promise.all(
          ids.map((id) => ledger.claim({ externalId: `${id}-${w}`, bodyHash: 'x'.repeat(200) })),
        );
        for (const claim of claims) ledger.created(claimOf(claim), { httpStatus: 201, id: w });
        await ledger.close();
      }),
    );
    const folder = ledgerFolder(root, BASE);
    let lines = 0;
    for (const file of readdirSync(folder).filter((name) => name.endsWith('.ndjson'))) {
      for (const line of readFileSync(join(folder, file), 'utf8').split('\n')) {
        if (line === '') continue;
        lines++;
        expect(() => JSON.parse(line)).not.toThrow();
      }
    }
    expect(lines).toBe(6 * ids.length * 2);
  });

  // Which claim wins is the contract suite's; here, what the racing processes leave in the files.
  it('separate processes racing for the same keys leave shards that replay to one claim a key, and logs the next command deletes', async () => {
    const script = await raceScript();
    const root = tempDir();
    const go = join(tempDir(), 'go');
    const keys = 200;
    const children = Array.from({ length: 4 }, (_, i) =>
      runChild(script, [root, BASE, String(keys), go, i % 2 === 0 ? 'forward' : 'backward']),
    );
    // All children have opened the ledger: start them at once.
    await Promise.all(children.map((child) => child.ready));
    writeFileSync(go, '');
    const outputs = await Promise.all(children.map((child) => child.done));
    expect(outputs.flatMap((output) => output.won)).toHaveLength(keys);
    const { claimsWon, states } = replayShards(root);
    expect(claimsWon).toHaveLength(keys);
    expect(new Set(claimsWon.map((record) => record.externalId)).size).toBe(keys);
    expect(states.size).toBe(keys);
    expect([...states.values()].every((state) => state.status === 'created')).toBe(true);
    // Each child wrote to many shards: its log stays for the next command, which deletes the
    // logs of owners that ended (the shards hold their lines: same boot).
    const next = await open(root);
    expect(readdirSync(join(ledgerFolder(root, BASE), 'wal'))).toEqual([
      expect.stringMatching(new RegExp(`^w-${next.owner.id}-`)),
    ]);
    await next.close();
  }, 60_000);
});

describe('LocalLedger: its heartbeat', () => {
  it('keeps its own heartbeat under owners/ while open, and removes it at close', async () => {
    const root = tempDir();
    const ledger = await open(root);
    const heartbeat = join(ledger.location, 'owners', ledger.owner.id);
    // The one heartbeat of core/liveness.ts: one line, the owner and its beat.
    expect(heartbeatOwner(readFileSync(heartbeat, 'utf8'))).toEqual({
      ...ledger.owner,
      beat: expect.any(Number),
    });
    await ledger.close();
    expect(existsSync(heartbeat)).toBe(false);
  });
});

describe('LocalLedger: damage', () => {
  it('a shard with a line of NUL bytes in the middle stops lookup and claim (exit 2), naming file and line', async () => {
    const root = tempDir();
    writeRecords(root, claimRecord('A', undefined, 't1'));
    appendFileSync(shardPath(root, 'A'), `${'\0'.repeat(64)}\n`);
    writeRecords(root, { externalId: 'A', event: 'created', at: 'x', token: 't1' });
    const ledger = await open(root);
    for (const attempt of [
      () => ledger.lookup('A'),
      () => ledger.claim({ externalId: 'A', bodyHash: 'h' }),
    ]) {
      const error = await attempt().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(LedgerDamagedError);
      expect(error).toMatchObject({ exitCode: 2 });
      expect((error as Error).message).toContain(
        `The order ledger ${shardPath(root, 'A')} is damaged at line 2`,
      );
      expect((error as Error).message).toContain('a line of NUL bytes');
    }
    // Other shards are not concerned.
    const elsewhere = ['B', 'C', 'D', 'E'].find((id) => shardOf(id) !== shardOf('A'))!;
    claimOf(await ledger.claim({ externalId: elsewhere, bodyHash: 'h' }));
  });

  it('a line that is not a record is damage, quoted in the message', async () => {
    const root = tempDir();
    writeRecords(root, claimRecord('A', undefined, 't1'));
    appendFileSync(shardPath(root, 'A'), 'garbage\n');
    writeRecords(root, { externalId: 'A', event: 'created', at: 'x', token: 't1' });
    const ledger = await open(root);
    await expect(ledger.lookup('A')).rejects.toBeInstanceOf(LedgerDamagedError);
    await expect(ledger.lookup('A')).rejects.toThrow(/damaged at line 2 \(not a ledger record: "garbage"\)/);
  });

  // Fails (src bug, see the report): a line shorter than `{"externalId":` near the end of what is
  // read makes Buffer.compare throw a RangeError instead of LedgerDamagedError.
  it('a short line that is not a record, as the last complete line, is damage too', async () => {
    const root = tempDir();
    writeRecords(root, claimRecord('A', undefined, 't1'));
    appendFileSync(shardPath(root, 'A'), 'garbage\n');
    const ledger = await open(root);
    await expect(ledger.lookup('A')).rejects.toBeInstanceOf(LedgerDamagedError);
    await expect(ledger.claim({ externalId: 'A', bodyHash: 'h' })).rejects.toThrow(
      /damaged at line 2 \(not a ledger record: "garbage"\)/,
    );
  });

  it('a torn last line (no newline yet) is not damage: the records before it are read', async () => {
    const root = tempDir();
    const ledger = await open(root);
    ledger.created(claimOf(await ledger.claim({ externalId: 'A', bodyHash: 'h' })), {
      httpStatus: 201,
      id: 1,
    });
    await ledger.sync();
    // A writer cut in the middle of its write: a record without its end.
    appendFileSync(shardPath(root, 'A'), '{"externalId":"A","event":"unkn');
    expect((await ledger.lookup('A'))?.status).toBe('created');
    const reader = await open(root);
    expect((await reader.lookup('A'))?.status).toBe('created');
    expect(refusalOf(await reader.claim({ externalId: 'A', bodyHash: 'h' })).reason).toBe('created');
  });

  // What the code does now (see the report): the next record of that shard glues onto the torn
  // line, which is then a damaged line in the middle of the shard; the claim that wrote it fails.
  it('a record appended after a torn last line glues onto it and is read as the record it is', async () => {
    const root = tempDir();
    const ledger = await open(root);
    ledger.failed(claimOf(await ledger.claim({ externalId: 'A', bodyHash: 'h' })), { message: 'no' });
    await ledger.sync();
    appendFileSync(shardPath(root, 'A'), '{"externalId":"A","event":"unkn');
    const writer = await open(root);
    const claim = claimOf(await writer.claim({ externalId: 'A', bodyHash: 'h' }));
    const lines = readFileSync(shardPath(root, 'A'), 'utf8').split('\n');
    expect(lines[2]).toMatch(/^\{"externalId":"A","event":"unkn\{"externalId":"A","event":"claim"/);
    expect(await (await open(root)).lookup('A')).toMatchObject({ status: 'claimed', token: claim.token });
    // Garbage glued before a record is not a torn record: that is damage.
    appendFileSync(shardPath(root, 'A'), 'xx{"externalId":"A","event":"failed","at":"x"}\n');
    await expect((await open(root)).lookup('A')).rejects.toThrow(/damaged at line 4/);
  });

  it('a ledger root that is a file is refused at once (exit 2)', async () => {
    const file = join(tempDir(), 'file');
    writeFileSync(file, 'not a folder');
    await expect(open(file)).rejects.toBeInstanceOf(UsageError);
    await expect(open(file)).rejects.toThrow(`The order ledger ${file} is a file, not a folder`);
  });

  it.skipIf(!MKFIFO)('a ledger root that is a pipe is refused at once (exit 2)', async () => {
    const fifo = join(tempDir(), 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const started = performance.now();
    const error = await open(fifo).catch((caught: unknown) => caught);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ exitCode: 2 });
    expect((error as Error).message).toContain(`The order ledger ${fifo} is a pipe (FIFO), not a folder`);
  });

  it.skipIf(!MKFIFO)('a shard that is a pipe is refused (exit 2) without waiting for a writer', async () => {
    const root = tempDir();
    mkdirSync(ledgerFolder(root, BASE), { recursive: true });
    expect(spawnSync('mkfifo', [shardPath(root, 'A')]).status).toBe(0);
    const ledger = await open(root);
    await expect(ledger.lookup('A')).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('is a pipe'),
    });
  });
});

describe('LocalLedger: write-ahead log', () => {
  /** Writes a write-ahead log as another process leaves it: its owner line, then records. */
  function writeWal(root: string, owner: ClaimOwner, body: string): string {
    const wal = join(ledgerFolder(root, BASE), 'wal');
    mkdirSync(wal, { recursive: true });
    const path = join(wal, `w-${owner.id}-0badc0de.ndjson`);
    writeFileSync(path, `${JSON.stringify({ wal: 2, owner })}\n${body}`);
    return path;
  }

  it('logs the claims (not the outcomes) while open, its first line naming the owner; gone after a close that wrote few shards', async () => {
    const root = tempDir();
    const ledger = await open(root);
    ledger.created(claimOf(await ledger.claim({ externalId: 'A', bodyHash: 'h' })), { httpStatus: 201 });
    await ledger.sync();
    const wal = join(ledger.location, 'wal');
    const names = readdirSync(wal);
    expect(names).toEqual([expect.stringMatching(new RegExp(`^w-${ledger.owner.id}-[0-9a-f]{8}\\.ndjson$`))]);
    const logged = readFileSync(join(wal, names[0]!), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged[0]).toEqual({ wal: 2, owner: ledger.owner });
    // An outcome is not synced: lost in a crash of the machine, it leaves its claim in doubt.
    expect(logged.slice(1).map((record) => record.event)).toEqual(['claim']);
    await ledger.close();
    expect(readdirSync(wal)).toEqual([]);
    // Closing twice is harmless.
    await ledger.close();
  });

  it('copies into the shards the records that a log of another boot of this host holds and the shards lost', async () => {
    const root = tempDir();
    const first = await open(root);
    first.created(claimOf(await first.claim({ externalId: 'KEPT', bodyHash: 'h' })), {
      httpStatus: 201,
      id: 1,
    });
    await first.close();
    const kept = readFileSync(shardPath(root, 'KEPT'), 'utf8');
    // What a machine crash leaves: the log synced, the shards' last lines not.
    const owner: ClaimOwner = {
      host: hostname(),
      boot: 'other-boot',
      pidns: me.pidns,
      pid: 4242,
      id: '0123456789abcdef',
    };
    const lost = [
      claimRecord('LOST', owner, 'l1'),
      { externalId: 'LOST', event: 'created', at: 'x', token: 'l1', id: 2 } as LedgerRecord,
      claimRecord('OPEN', owner, 'o1'),
    ]
      .map((record) => `${JSON.stringify(record)}\n`)
      .join('');
    const path = writeWal(root, owner, `${kept}${lost}{"externalId":"TORN","ev`);
    const ledger = await open(root);
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(join(ledger.location, 'wal'))).toEqual([
      expect.stringMatching(/^w-[0-9a-f]+-[0-9a-f]+\.ndjson$/),
    ]);
    expect(await ledger.lookup('LOST')).toMatchObject({ status: 'created', id: 2 });
    expect(await ledger.lookup('TORN')).toBeUndefined();
    // The claim of a process of another boot: its heartbeat is gone, so is the process.
    expect(refusalOf(await ledger.claim({ externalId: 'OPEN', bodyHash: 'h' })).reason).toBe('in-doubt');
    // Not copied twice: the lines the shard had stay once.
    expect(readFileSync(shardPath(root, 'KEPT'), 'utf8')).toBe(kept);
  });

  it('recovers the log of the release before claims (<pid>-<id>.ndjson) once its process is gone', async () => {
    const root = tempDir();
    const first = await open(root);
    first.created(claimOf(await first.claim({ externalId: 'KEPT', bodyHash: 'h' })), { httpStatus: 201 });
    await first.close();
    const kept = readFileSync(shardPath(root, 'KEPT'), 'utf8');
    const lost = `${JSON.stringify({ externalId: 'LOST', event: 'sending', at: '2026-11-23T10:00:00.000Z', by: 'orders import' })}\n`;
    const wal = join(ledgerFolder(root, BASE), 'wal');
    // A pid above the kernel's limit: no such process.
    writeFileSync(join(wal, '4194305-0badc0de.ndjson'), `${kept}${lost}{"externalId":"TORN","ev`);
    const ledger = await open(root);
    expect(await ledger.lookup('LOST')).toMatchObject({ status: 'claimed', event: 'sending' });
    expect(refusalOf(await ledger.claim({ externalId: 'LOST', bodyHash: 'h' })).reason).toBe('in-doubt');
    expect(await ledger.lookup('TORN')).toBeUndefined();
    expect(readFileSync(shardPath(root, 'KEPT'), 'utf8')).toBe(kept);
    expect(existsSync(join(wal, '4194305-0badc0de.ndjson'))).toBe(false);
  });

  it('leaves alone the log of this boot whose owner lives in another PID namespace; removes, without copying, one whose owner is dead here', async () => {
    const root = tempDir();
    const elsewhere: ClaimOwner = {
      host: me.host,
      boot: me.boot,
      pidns: 'pid:[1]',
      pid: 1,
      id: 'a11e0000000000cc',
    };
    const dead: ClaimOwner = { ...me, pid: deadPid(), id: 'dead0000000000dd' };
    const kept = writeWal(root, elsewhere, `${JSON.stringify(claimRecord('THEIRS', elsewhere))}\n`);
    const removed = writeWal(root, dead, `${JSON.stringify(claimRecord('DEAD', dead))}\n`);
    const ledger = await open(root);
    expect(existsSync(kept)).toBe(true);
    expect(readFileSync(kept, 'utf8')).toContain('THEIRS');
    // A log of this boot is never needed: the shards had its lines before any crash could lose them.
    expect(existsSync(removed)).toBe(false);
    expect(await ledger.lookup('THEIRS')).toBeUndefined();
    expect(await ledger.lookup('DEAD')).toBeUndefined();
    await ledger.close();
    expect(readdirSync(join(ledgerFolder(root, BASE), 'wal'))).toEqual([kept.split('/').pop()]);
  });
});

describe('LocalLedger: prefetch and adopt, shard by shard', () => {
  // A prefetch applies only the prefetched keys' records of a shard: another key of that shard must
  // not look new (claimed and sent again).
  it('after prefetch, a key of a prefetched shard that was not prefetched still sees its records', async () => {
    const root = tempDir();
    const prefetched = 'SAME-0';
    let n = 1;
    while (shardOf(`SAME-${n}`) !== shardOf(prefetched)) n++;
    const other = `SAME-${n}`;
    const writer = await open(root);
    writer.created(claimOf(await writer.claim({ externalId: other, bodyHash: 'h' })), {
      httpStatus: 201,
      id: 1,
    });
    await writer.close();
    const ledger = await open(root);
    await ledger.prefetch([prefetched]);
    expect(await ledger.lookup(other)).toMatchObject({ status: 'created', id: 1 });
    expect(refusalOf(await ledger.claim({ externalId: other, bodyHash: 'h' })).reason).toBe('created');
  });

  it('a second prefetch of a key in a shard the first read in part sees its records', async () => {
    const root = tempDir();
    const first = 'TWICE-0';
    let n = 1;
    while (shardOf(`TWICE-${n}`) !== shardOf(first)) n++;
    const second = `TWICE-${n}`;
    const writer = await open(root);
    for (const [index, externalId] of [first, second].entries()) {
      writer.created(claimOf(await writer.claim({ externalId, bodyHash: 'h' })), {
        httpStatus: 201,
        id: index + 1,
      });
    }
    await writer.close();
    const ledger = await open(root);
    await ledger.prefetch([first]);
    await ledger.prefetch([second]);
    expect(ledger.knows(second)).toBe(true);
    expect(ledger.prefetchedCounts()).toEqual({ created: 2, inDoubt: 0 });
    expect(await ledger.lookup(second)).toMatchObject({ status: 'created', id: 2 });
    expect(refusalOf(await ledger.claim({ externalId: second, bodyHash: 'h' })).reason).toBe('created');
  });

  it('a shard cut under a running ledger (moved aside, started anew) is read again: what it no longer holds is forgotten', async () => {
    const root = tempDir();
    const ledger = await open(root);
    ledger.created(claimOf(await ledger.claim({ externalId: 'CUT-1', bodyHash: 'h' })), { httpStatus: 201 });
    await ledger.prefetch(['CUT-1', 'CUT-2']);
    expect(ledger.knows('CUT-1')).toBe(true);
    // A claim by another process, without outcome: a state no single record decides.
    const other = await open(root);
    claimOf(await other.claim({ externalId: 'CUT-2', bodyHash: 'h' }));
    expect((await ledger.lookup('CUT-2'))?.status).toBe('claimed');
    for (const key of ['CUT-1', 'CUT-2']) {
      writeFileSync(join(ledgerFolder(root, BASE), shardFileName(shardOf(key))), '');
    }
    expect(await ledger.lookup('CUT-1')).toBeUndefined();
    expect(await ledger.lookup('CUT-2')).toBeUndefined();
    expect(ledger.knows('CUT-1')).toBe(false);
    expect(claimOf(await ledger.claim({ externalId: 'CUT-1', bodyHash: 'h' })).externalId).toBe('CUT-1');
  });

  it('adopt appends the records of keys it has no record of, and nothing for a key it knows', async () => {
    const root = tempDir();
    const ledger = await open(root, { source: IMPORT });
    ledger.failed(claimOf(await ledger.claim({ externalId: 'KNOWN', bodyHash: 'h' })), { message: 'no' });
    await ledger.sync();
    const source = { by: 'orders import', journal: IMPORT.journal } as const;
    const before = shardRecords(root).flat().length;
    await ledger.adopt([
      { externalId: 'KNOWN', event: 'created', at: 'x', ...source, id: 1 },
      { externalId: 'NEW-CREATED', event: 'created', at: 'x', ...source, id: 2, bodyHash: 'h' },
    ]);
    expect(shardRecords(root).flat().length).toBe(before + 1);
    // Adopting again writes nothing more.
    await ledger.adopt([{ externalId: 'NEW-CREATED', event: 'created', at: 'y', ...source }]);
    expect(shardRecords(root).flat().length).toBe(before + 1);
  });
});

describe('LocalLedger: shards written by the release before claims', () => {
  it('replays `sending` without token or owner, outcomes without token, not-sent and resolved as before', async () => {
    const root = tempDir();
    const at = '2026-11-20T10:00:00.000Z';
    const old = (externalId: string, event: string, fields: Record<string, unknown> = {}): LedgerRecord =>
      ({ externalId, event, at, by: 'orders import', input: '/data/old.csv', ...fields }) as LedgerRecord;
    writeRecords(
      root,
      old('CREATED', 'sending', { bodyHash: 'h' }),
      old('CREATED', 'created', { httpStatus: 201, id: 1, code: 'SO-1' }),
      old('OPEN', 'sending', { bodyHash: 'h' }),
      old('UNKNOWN', 'sending'),
      old('UNKNOWN', 'unknown', { reason: 'reset' }),
      old('FAILED', 'sending'),
      old('FAILED', 'failed', { httpStatus: 422, message: 'invalid' }),
      old('NOT-SENT', 'sending'),
      old('NOT-SENT', 'not-sent', { reason: 'interrupted' }),
      old('TWICE', 'sending'),
      old('TWICE', 'sending'),
      old('TWICE', 'not-sent', { reason: 'interrupted' }),
      old('RESOLVED-C', 'sending'),
      old('RESOLVED-C', 'resolved', { resolution: 'created', id: 5 }),
      old('RESOLVED-N', 'sending'),
      old('RESOLVED-N', 'unknown', { reason: 'reset' }),
      old('RESOLVED-N', 'resolved', { resolution: 'not-created' }),
    );
    const ledger = await open(root);
    expect(await ledger.lookup('CREATED')).toMatchObject({
      status: 'created',
      id: 1,
      code: 'SO-1',
      bodyHash: 'h',
      sentAt: at,
      input: '/data/old.csv',
    });
    expect(refusalOf(await ledger.claim({ externalId: 'CREATED', bodyHash: 'h' }))).toMatchObject({
      reason: 'created',
      entry: { id: 1 },
    });
    // A `sending` without outcome names no owner: in doubt, never `claimed`.
    expect(await ledger.lookup('OPEN')).toMatchObject({ status: 'claimed', event: 'sending' });
    expect(refusalOf(await ledger.claim({ externalId: 'OPEN', bodyHash: 'h' }))).toMatchObject({
      reason: 'in-doubt',
      entry: { status: 'in-doubt', event: 'unknown' },
    });
    expect(refusalOf(await ledger.claim({ externalId: 'UNKNOWN', bodyHash: 'h' }))).toMatchObject({
      reason: 'in-doubt',
      entry: { reason: 'reset' },
    });
    expect(refusalOf(await ledger.claim({ externalId: 'TWICE', bodyHash: 'h' })).reason).toBe('in-doubt');
    expect(refusalOf(await ledger.claim({ externalId: 'RESOLVED-C', bodyHash: 'h' }))).toMatchObject({
      reason: 'created',
      entry: { resolved: 'created', id: 5 },
    });
    claimOf(await ledger.claim({ externalId: 'FAILED', bodyHash: 'h' }));
    claimOf(await ledger.claim({ externalId: 'NOT-SENT', bodyHash: 'h' }));
    claimOf(await ledger.claim({ externalId: 'RESOLVED-N', bodyHash: 'h' }));
    // --retry-unknown takes over an old `sending`, and its outcome settles it.
    const retry = claimOf(await ledger.claim({ externalId: 'OPEN', bodyHash: 'h', takeOverDoubt: true }));
    ledger.created(retry, { httpStatus: 201, id: 9 });
    await ledger.sync();
    expect(await (await open(root)).lookup('OPEN')).toMatchObject({ status: 'created', id: 9 });
  });
});

interface ChildRun {
  ready: Promise<void>;
  done: Promise<{ won: string[]; refused: Record<string, number> }>;
}

/** Runs the race script; `ready` once it opened the ledger, `done` with what it won and was refused. */
function runChild(script: string, args: string[]): ChildRun {
  const child: ChildProcess = spawn(process.execPath, [script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolvePromise) => (onReady = resolvePromise));
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (stdout.startsWith('ready\n')) onReady();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<{ won: string[]; refused: Record<string, number> }>((resolvePromise, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      onReady();
      if (code !== 0) reject(new Error(`race child exited with ${code}: ${stderr}`));
      else
        resolvePromise(
          JSON.parse(stdout.slice('ready\n'.length)) as { won: string[]; refused: Record<string, number> },
        );
    });
  });
  return { ready, done };
}

/** Bundles a racer (this source's LocalLedger) into a script that node runs without TypeScript. */
async function raceScript(): Promise<string> {
  const dir = tempDir('ordercli-ledger-race-');
  const entry = join(dir, 'race.ts');
  writeFileSync(
    entry,
    `import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalLedger } from ${JSON.stringify(resolve(ROOT, 'src/ledger/local.ts'))};
const [root, baseUrl, count, go, order] = process.argv.slice(2);
const ledger = await LocalLedger.open(root, { baseUrl, kind: 'orders', source: { by: 'orders import' } });
process.stdout.write('ready\\n');
while (!existsSync(go)) await sleep(2);
const keys = Array.from({ length: Number(count) }, (_, i) => 'RACE-' + i);
if (order === 'backward') keys.reverse();
const won = [];
const refused = {};
await Promise.all(
  keys.map(async (externalId) => {
    const result = await ledger.claim({ externalId, bodyHash: 'h' });
    if (result.claimed) {
      won.push(externalId);
      ledger.created(result.claim, { httpStatus: 201 });
    } else {
      refused[result.refusal.reason] = (refused[result.refusal.reason] ?? 0) + 1;
    }
  }),
);
await ledger.close();
process.stdout.write(JSON.stringify({ won, refused }));
`,
  );
  const script = join(dir, 'race.mjs');
  await build({
    entryPoints: [entry],
    outfile: script,
    bundle: true,
    format: 'esm',
    platform: 'node',
    logLevel: 'silent',
  });
  return script;
}
