// The order ledger on its own: states, concurrent writers, torn lines, the import's check.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerFolder, OrderLedger, shardFileName, shardOf } from '../../src/import/ledger.js';
import { tempDir } from '../support/cli.js';

const BASE = 'http://127.0.0.1:4780/';

function open(config: string, by: 'orders create' | 'orders import' = 'orders create', journal?: string) {
  return OrderLedger.open(config, BASE, { by, input: '/data/in.csv', ...(journal ? { journal } : {}) });
}

/** The externalIds of an input, with the line of each, as the validation pass keeps them. */
function idsOf(...ids: string[]): Map<string, number> {
  return new Map(ids.map((id, index) => [id, index + 1]));
}

describe('OrderLedger', () => {
  it('keeps one folder per service, whatever the trailing slash, and 3-hex-digit shard files', () => {
    expect(ledgerFolder('/c', 'http://127.0.0.1:4780')).toBe(ledgerFolder('/c', BASE));
    expect(ledgerFolder('/c', BASE)).toMatch(/\/c\/ledger\/http_127\.0\.0\.1_4780-[0-9a-f]{8}$/);
    expect(ledgerFolder('/c', 'http://127.0.0.1:4781')).not.toBe(ledgerFolder('/c', BASE));
    expect(shardFileName(shardOf('WEB-2001'))).toMatch(/^[0-9a-f]{3}\.ndjson$/);
  });

  it('says created, in doubt or not created by the last record, and not-sent restores the state before', async () => {
    const config = tempDir();
    const ledger = await open(config);
    await ledger.sending('A', 'h');
    expect((await ledger.lookup('A'))?.status).toBe('in-doubt');
    ledger.created('A', { httpStatus: 201, id: 7, code: 'SO-7' });
    await ledger.sending('B', 'h');
    ledger.failed('B', { httpStatus: 422, message: 'no' });
    await ledger.sending('C', 'h');
    ledger.unknown('C', 'no answer within --timeout');
    await ledger.sending('D', 'h');
    ledger.notSent('D', 'interrupted');
    await ledger.close();
    const reader = await open(config);
    expect(await reader.lookup('A')).toMatchObject({
      status: 'created',
      id: 7,
      code: 'SO-7',
      by: 'orders create',
    });
    expect((await reader.lookup('B'))?.status).toBe('not-created');
    expect(await reader.lookup('C')).toMatchObject({
      status: 'in-doubt',
      reason: 'no answer within --timeout',
    });
    expect(await reader.lookup('D')).toBeUndefined();
    expect(await reader.lookup('E')).toBeUndefined();
  });

  it('counts a resolution: created is created, not-created clears the doubt', async () => {
    const config = tempDir();
    const ledger = await open(config);
    await ledger.sending('A', 'h');
    ledger.unknown('A', 'reset');
    await ledger.sending('B', 'h');
    await ledger.resolved('A', 'not-created');
    await ledger.resolved('B', 'created', 42);
    await ledger.close();
    expect((await ledger.lookup('A'))?.status).toBe('not-created');
    expect(await ledger.lookup('B')).toMatchObject({ status: 'created', id: 42, event: 'resolved' });
  });

  it('never interleaves the lines of writers appending to the same shards at once', async () => {
    const config = tempDir();
    const writers = await Promise.all(Array.from({ length: 6 }, () => open(config)));
    // Ids that fall in few shards, so that the writers meet in the same files.
    const ids = Array.from({ length: 3000 }, (_, i) => `ID-${i}`).filter((id) => shardOf(id) % 512 === 0);
    await Promise.all(
      writers.map(async (ledger, w) => {
        await Promise.all(ids.map((id) => ledger.sending(`${id}-${w}`, 'x'.repeat(200))));
        for (const id of ids) ledger.created(`${id}-${w}`, { httpStatus: 201, id: w });
        await ledger.close();
      }),
    );
    const folder = ledgerFolder(config, BASE);
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

  it('skips a torn line, even with the next record glued to it', async () => {
    const config = tempDir();
    const ledger = await open(config);
    await ledger.sending('A', 'h');
    ledger.created('A', { httpStatus: 201, id: 1 });
    await ledger.sync();
    const shard = join(ledgerFolder(config, BASE), shardFileName(shardOf('A')));
    // A kill in the middle of a write: a record cut off without its newline.
    appendFileSync(shard, '{"externalId":"A","event":"unkn');
    expect((await ledger.lookup('A'))?.status).toBe('created');
    await ledger.sending('A', 'h');
    ledger.failed('A', { httpStatus: 422, message: 'refused' });
    await ledger.close();
    expect((await ledger.lookup('A'))?.status).toBe('not-created');
  });

  it('an import loads only other writers’ orders of its input, from the shards they fall in', async () => {
    const config = tempDir();
    const other = await open(config, 'orders create');
    await other.sending('X-1', 'h');
    other.created('X-1', { httpStatus: 201, id: 1, code: 'SO-1' });
    await other.sending('X-2', 'h');
    other.unknown('X-2', 'reset');
    await other.sending('NOT-IN-INPUT', 'h');
    await other.close();
    const mine = await open(config, 'orders import', '/data/in.csv.journal.ndjson');
    await mine.sending('X-3', 'h');
    mine.created('X-3', { httpStatus: 201, id: 3 });
    await mine.close();

    const ledger = await open(config, 'orders import', '/data/in.csv.journal.ndjson');
    const { shardsRead } = await ledger.load(idsOf('X-1', 'X-2', 'X-3', 'X-4', 'X "quoted"'), {
      journal: '/data/in.csv.journal.ndjson',
    });
    expect(shardsRead).toBeLessThanOrEqual(4);
    expect(ledger.stateOf('X-1')).toMatchObject({
      status: 'created',
      id: 1,
      code: 'SO-1',
      by: 'orders create',
    });
    expect(ledger.stateOf('X-2')).toMatchObject({ status: 'in-doubt', reason: 'reset' });
    // Its own order is the journal's to decide; unknown ids are unknown.
    expect(ledger.stateOf('X-3')).toBeUndefined();
    expect(ledger.stateOf('X-4')).toBeUndefined();
    expect(ledger.stateOf('NOT-IN-INPUT')).toBeUndefined();
    expect(ledger.loadedCounts()).toEqual({ created: 1, inDoubt: 1 });
  });

  it('removes its write-ahead log at a clean close', async () => {
    const config = tempDir();
    const ledger = await open(config);
    await ledger.sending('A', 'h');
    const wal = join(ledgerFolder(config, BASE), 'wal');
    expect(readdirSync(wal)).toHaveLength(1);
    await ledger.close();
    expect(readdirSync(wal)).toEqual([]);
  });

  it('starts a new write-ahead log once it grows large, after syncing the shards; loses nothing', async () => {
    const config = tempDir();
    const ledger = await OrderLedger.open(
      config,
      BASE,
      { by: 'orders import' },
      { walCheckpointBytes: 1000 },
    );
    const wal = join(ledgerFolder(config, BASE), 'wal');
    const logs = new Set<string>();
    for (let i = 0; i < 60; i++) {
      await ledger.sending(`C-${i}`, 'h');
      ledger.created(`C-${i}`, { httpStatus: 201, id: i });
      for (const name of readdirSync(wal)) logs.add(name);
    }
    await ledger.sync();
    expect(logs.size).toBeGreaterThan(3);
    // The logs whose records the synced shards hold are gone: one at most is left besides the current one.
    expect(readdirSync(wal).length).toBeLessThanOrEqual(2);
    await ledger.close();
    expect(readdirSync(wal)).toEqual([]);
    for (let i = 0; i < 60; i++) expect((await ledger.lookup(`C-${i}`))?.id).toBe(i);
  });

  it('copies into the shards the records a dead process logged but its shards lost', async () => {
    const config = tempDir();
    const folder = ledgerFolder(config, BASE);
    const first = await open(config);
    await first.sending('KEPT', 'h');
    await first.close();
    // What a machine crash leaves: the log synced, the shard's last lines not.
    const lost = `${JSON.stringify({ externalId: 'LOST', event: 'sending', at: '2026-11-23T10:00:00.000Z', by: 'orders import' })}\n`;
    const kept = readFileSync(join(folder, shardFileName(shardOf('KEPT'))), 'utf8');
    mkdirSync(join(folder, 'wal'), { recursive: true });
    // A pid above the kernel's limit: no such process.
    writeFileSync(join(folder, 'wal', '4194305-0badc0de.ndjson'), `${kept}${lost}{"externalId":"TORN","ev`);
    const ledger = await open(config);
    expect((await ledger.lookup('LOST'))?.status).toBe('in-doubt');
    expect(await ledger.lookup('TORN')).toBeUndefined();
    // Not copied twice: the line the shard had stays once.
    expect(readFileSync(join(folder, shardFileName(shardOf('KEPT'))), 'utf8')).toBe(kept);
    await ledger.close();
    expect(existsSync(join(folder, 'wal', '4194305-0badc0de.ndjson'))).toBe(false);
  });

  it('finds an externalId that JSON escapes', async () => {
    const config = tempDir();
    const ledger = await open(config);
    await ledger.sending('X "quoted" é\\', 'h');
    ledger.created('X "quoted" é\\', { httpStatus: 201, id: 9 });
    await ledger.close();
    expect((await ledger.lookup('X "quoted" é\\'))?.id).toBe(9);
    const reader = await open(config);
    await reader.load(idsOf('X "quoted" é\\'));
    expect(reader.stateOf('X "quoted" é\\')?.id).toBe(9);
  });
});
