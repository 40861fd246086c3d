/**
 * foldJournal: a journal an earlier release wrote beside an input is folded into the ledger once
 * (created stays created, in doubt stays in doubt) and renamed `.folded`; a file that is not a
 * journal (a `--journal` naming the input itself, say) is left alone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalLedger } from '../../src/ledger/local.js';
import { foldJournal } from '../../src/ledger/upgrade.js';
import { tempDir } from '../support/cli.js';

const BASE = 'http://127.0.0.1:4999';

async function ledgerAt(root: string): Promise<LocalLedger> {
  return LocalLedger.open(root, {
    baseUrl: BASE,
    kind: 'orders',
    source: { by: 'orders import', input: 'in.csv' },
  });
}

function journalLines(baseUrl = BASE): string {
  const at = '2026-11-20T10:00:00.000Z';
  return [
    { event: 'run', baseUrl, input: '/data/in.csv', format: 2, pid: 1, at },
    { externalId: 'A-1', event: 'claim', at, token: 't1', baseUrl, line: 2 },
    { externalId: 'A-1', event: 'created', at, token: 't1', baseUrl, httpStatus: 201, id: 7, code: 'SO-7' },
    { externalId: 'A-2', event: 'claim', at, token: 't2', baseUrl, line: 3 },
    { externalId: 'A-3', event: 'claim', at, token: 't3', baseUrl, line: 4 },
    { externalId: 'A-3', event: 'failed', at, token: 't3', baseUrl, httpStatus: 422, message: 'no' },
  ]
    .map((record) => JSON.stringify(record))
    .join('\n');
}

describe('foldJournal', () => {
  it('records what the journal knew (created, in doubt) and renames it .folded', async () => {
    const dir = tempDir();
    const path = join(dir, 'in.csv.journal.ndjson');
    writeFileSync(path, `${journalLines()}\n{"externalId":"A-9","ev`);
    const ledger = await ledgerAt(join(dir, 'ledger'));
    const folded = await foldJournal(ledger, path, { by: 'orders import', input: 'in.csv' });
    expect(folded).toEqual({ path, adopted: 2, renamed: true });
    expect((await ledger.lookup('A-1'))?.status).toBe('created');
    expect((await ledger.lookup('A-1'))?.code).toBe('SO-7');
    expect((await ledger.lookup('A-2'))?.status).toBe('in-doubt');
    expect(await ledger.lookup('A-3')).toBeUndefined();
    await ledger.close();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.folded`)).toBe(true);
  });

  it('keeps a journal that also holds another service, and folds only this one', async () => {
    const dir = tempDir();
    const path = join(dir, 'j.ndjson');
    writeFileSync(path, `${journalLines()}\n${journalLines('https://other.example.test')}\n`);
    const ledger = await ledgerAt(join(dir, 'ledger'));
    const folded = await foldJournal(ledger, path, { by: 'orders import' });
    await ledger.close();
    expect(folded?.renamed).toBe(false);
    expect(existsSync(path)).toBe(true);
  });

  it('leaves a file that is not a journal as it is (a --journal naming the input)', async () => {
    const dir = tempDir();
    const path = join(dir, 'orders.csv');
    const csv = 'externalId,contact.id\nA-1,1\n';
    writeFileSync(path, csv);
    const ledger = await ledgerAt(join(dir, 'ledger'));
    expect(await foldJournal(ledger, path, { by: 'orders import' })).toBeUndefined();
    expect(await foldJournal(ledger, join(dir, 'absent.ndjson'), { by: 'orders import' })).toBeUndefined();
    await ledger.close();
    expect(readFileSync(path, 'utf8')).toBe(csv);
    expect(existsSync(`${path}.folded`)).toBe(false);
  });
});
