// Which journal belongs to an input (beside its real file, links resolved), and which journal the
// argument of `orders journal` / `orders resolve` names.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import { journalOfInput, locateJournal } from '../../../src/import/send/journal-location.js';
import { tempDir } from '../../support/cli.js';
import { rejection } from '../../support/import-input.js';

const JOURNAL_LINE = '{"externalId":"A","event":"created","at":"t","baseUrl":"http://127.0.0.1:1"}\n';

describe('journalOfInput', () => {
  it('puts the journal beside the input, or where --journal says', async () => {
    const cwd = tempDir('ordercli-journal-location-');
    writeFileSync(join(cwd, 'orders.csv'), 'x');
    expect(await journalOfInput('orders.csv', undefined, cwd)).toEqual({
      path: join(cwd, 'orders.csv.journal.ndjson'),
      shown: 'orders.csv.journal.ndjson',
    });
    expect(await journalOfInput('missing.csv', undefined, cwd)).toEqual({
      path: join(cwd, 'missing.csv.journal.ndjson'),
      shown: 'missing.csv.journal.ndjson',
    });
    expect(await journalOfInput('-', 'j.ndjson', cwd)).toEqual({
      path: join(cwd, 'j.ndjson'),
      shown: 'j.ndjson',
    });
    await expect(journalOfInput('-', undefined, cwd)).rejects.toThrow(
      /^Standard input has no journal of its own/,
    );
  });

  it('follows a link to the real file, so that the link and its target share one journal', async () => {
    const cwd = tempDir('ordercli-journal-location-');
    mkdirSync(join(cwd, 'data'));
    writeFileSync(join(cwd, 'data', 'orders.csv'), 'x');
    symlinkSync(join(cwd, 'data', 'orders.csv'), join(cwd, 'link.csv'));
    expect(await journalOfInput('link.csv', undefined, cwd)).toEqual({
      path: join(cwd, 'data', 'orders.csv.journal.ndjson'),
      shown: join('data', 'orders.csv.journal.ndjson'),
    });
    // A linked folder leads to the same place: the journal keeps the name as given.
    symlinkSync(join(cwd, 'data'), join(cwd, 'linked'));
    expect((await journalOfInput('linked/orders.csv', undefined, cwd)).shown).toBe(
      'linked/orders.csv.journal.ndjson',
    );
  });

  it('refuses a link beside which an earlier journal lies, saying how to join the two', async () => {
    const cwd = tempDir('ordercli-journal-location-');
    writeFileSync(join(cwd, 'orders.csv'), 'x');
    symlinkSync(join(cwd, 'orders.csv'), join(cwd, 'link.csv'));
    writeFileSync(join(cwd, 'link.csv.journal.ndjson'), JOURNAL_LINE);
    const moveIt = await rejection(journalOfInput('link.csv', undefined, cwd));
    expect(moveIt).toBeInstanceOf(UsageError);
    expect(moveIt.message).toMatch(
      /^link\.csv is a link to .*orders\.csv, whose journal is .*, but a journal link\.csv\.journal\.ndjson also lies beside the link/,
    );
    expect((moveIt as UsageError).details[0]).toMatch(/^Move it there \(mv link\.csv\.journal\.ndjson /);
    writeFileSync(join(cwd, 'orders.csv.journal.ndjson'), JOURNAL_LINE);
    const appendIt = await rejection(journalOfInput('link.csv', undefined, cwd));
    expect((appendIt as UsageError).details[0]).toMatch(
      /^Append it to the other one \(cat link\.csv\.journal\.ndjson >> /,
    );
  });
});

describe('locateJournal', () => {
  it('takes a journal given itself, by its suffix or by its first record', async () => {
    const cwd = tempDir('ordercli-journal-location-');
    writeFileSync(join(cwd, 'orders.csv.journal.ndjson'), JOURNAL_LINE);
    writeFileSync(join(cwd, 'renamed.ndjson'), JOURNAL_LINE);
    expect(await locateJournal('orders.csv.journal.ndjson', cwd)).toEqual({
      path: join(cwd, 'orders.csv.journal.ndjson'),
      shown: 'orders.csv.journal.ndjson',
    });
    expect((await locateJournal('renamed.ndjson', cwd)).path).toBe(join(cwd, 'renamed.ndjson'));
    await expect(locateJournal('gone.journal.ndjson', cwd)).rejects.toThrow(
      'No journal at gone.journal.ndjson: check the path (a journal is written by orders import).',
    );
  });

  it("finds an input's journal, even once the input is gone", async () => {
    const cwd = tempDir('ordercli-journal-location-');
    writeFileSync(join(cwd, 'orders.ndjson'), '{"externalId":"A"}\n');
    writeFileSync(join(cwd, 'orders.ndjson.journal.ndjson'), JOURNAL_LINE);
    writeFileSync(join(cwd, 'moved.csv.journal.ndjson'), JOURNAL_LINE);
    expect((await locateJournal('orders.ndjson', cwd)).shown).toBe('orders.ndjson.journal.ndjson');
    expect(await locateJournal('moved.csv', cwd)).toEqual({
      path: join(cwd, 'moved.csv.journal.ndjson'),
      shown: 'moved.csv.journal.ndjson',
    });
  });

  it('refuses an input never imported, and a path that is neither input nor journal', async () => {
    const cwd = tempDir('ordercli-journal-location-');
    writeFileSync(join(cwd, 'new.csv'), 'x');
    await expect(locateJournal('new.csv', cwd)).rejects.toThrow(
      'new.csv has no journal (expected new.csv.journal.ndjson): it was never imported from this path. If its import used --journal, give that journal instead.',
    );
    await expect(locateJournal('nothing.csv', cwd)).rejects.toThrow(
      "nothing.csv is neither an import's input nor its journal: no such file. Give the input file you imported, or its journal.",
    );
  });
});
