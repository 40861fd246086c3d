// The zip container of a workbook on its own: its entries, the sheets in tab order, merged ranges
// scanned from a sheet's XML, entries inflated with their declared size checked, column letters.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/core/errors.js';
import {
  columnLetters,
  columnNumber,
  entryText,
  mergedRanges,
  readWorkbookZip,
  readZipEntry,
  workbookSheets,
} from '../../../../src/import/read/xlsx/zip.js';
import { tempDir } from '../../../support/cli.js';
import { rejection } from '../../../support/import-input.js';
import { writeZip } from '../../../support/workbooks.js';

const WORKBOOK =
  '<x:workbook xmlns:x="main" xmlns:r="rels"><x:sheets>' +
  '<x:sheet name="Commandes &amp; retours" sheetId="2" r:id="rId2"/>' +
  "<x:sheet name='Graphique' sheetId='3' r:id='rId3'/>" +
  '<x:sheet name="Données" sheetId="1" r:id="rId1"/>' +
  '</x:sheets></x:workbook>';
const RELS =
  '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/>' +
  '<Relationship Id="rId2" Target="/xl/worksheets/sheet2.xml"/>' +
  '<Relationship Id="rId3" Target="chartsheets/sheet1.xml"/>' +
  '<Relationship Id="rId4" Target="worksheets/gone.xml"/></Relationships>';

function zipOf(entries: Record<string, string | Buffer>, declared?: Record<string, number>): string {
  const path = join(tempDir('ordercli-zip-'), 'book.xlsx');
  writeZip(path, entries, declared);
  return path;
}

describe('readWorkbookZip', () => {
  it('lists the entries of a workbook with their sizes', async () => {
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK, 'xl/worksheets/sheet1.xml': '<worksheet/>' });
    const entries = await readWorkbookZip(path, 'book.xlsx');
    expect([...entries.keys()]).toEqual(['xl/workbook.xml', 'xl/worksheets/sheet1.xml']);
    expect(entries.get('xl/worksheets/sheet1.xml')).toMatchObject({ method: 8, size: 12 });
  });

  it('refuses a file that is not a zip, an old .xls and a zip without a workbook, in one sentence', async () => {
    const dir = tempDir('ordercli-zip-');
    writeFileSync(join(dir, 'csv.xlsx'), 'externalId,item.orderedQuantity\n');
    writeFileSync(join(dir, 'old.xlsx'), Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]));
    const reasons = [
      [join(dir, 'csv.xlsx'), 'it is not a zip archive (a CSV file renamed .xlsx? then name it .csv)'],
      [
        join(dir, 'old.xlsx'),
        'it is an old binary Excel file (.xls) or a protected workbook; open it in Excel and save it as "Excel Workbook (.xlsx)"',
      ],
      [
        zipOf({ 'word/document.xml': '<document/>' }),
        'it is a zip archive without a workbook in it (another kind of document?)',
      ],
    ];
    for (const [path, reason] of reasons) {
      const error = await rejection(readWorkbookZip(path!, 'in.xlsx'));
      expect(error).toBeInstanceOf(InputError);
      expect(error.message).toBe(`in.xlsx is not an Excel workbook (.xlsx): ${reason}; nothing was sent.`);
    }
  });

  it('refuses a zip that holds one part twice, rather than take either', async () => {
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK, 'xl/workbook.xmm': WORKBOOK });
    const bytes = readFileSync(path);
    // The second part renamed as the first, in its local header and in the directory.
    writeFileSync(
      path,
      Buffer.from(bytes.toString('latin1').replaceAll('xl/workbook.xmm', 'xl/workbook.xml'), 'latin1'),
    );
    await expect(readWorkbookZip(path, 'in.xlsx')).rejects.toThrow(
      'in.xlsx is not an Excel workbook (.xlsx): its zip archive holds the part xl/workbook.xml twice; nothing was sent.',
    );
  });

  it('refuses a zip cut short', async () => {
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK });
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 30));
    await expect(readWorkbookZip(path, 'in.xlsx')).rejects.toThrow(
      'in.xlsx is not an Excel workbook (.xlsx): the zip archive is truncated or damaged; nothing was sent.',
    );
  });
});

describe('readZipEntry', () => {
  it('refuses bytes that are not UTF-8 in a part, naming it and where, a character cut by a chunk kept', async () => {
    const good = Buffer.from('é€'.repeat(300_000));
    const bad = Buffer.concat([good, Buffer.from([0x41, 0xff, 0x42])]);
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK, 'good.xml': good, 'bad.xml': bad });
    const entries = await readWorkbookZip(path, 'in.xlsx');
    expect(await entryText(path, 'in.xlsx', entries.get('good.xml')!)).toBe(good.toString());
    await expect(entryText(path, 'in.xlsx', entries.get('bad.xml')!)).rejects.toThrow(
      `in.xlsx could not be read as an Excel workbook: its part bad.xml holds bytes that are not UTF-8 (at byte ${good.length + 1}); nothing was sent.`,
    );
    // A handler that goes on reads them as U+FFFD, after the text before them.
    const offsets: number[] = [];
    let text = '';
    for await (const chunk of readZipEntry(path, 'in.xlsx', entries.get('bad.xml')!, (at) =>
      offsets.push(at),
    )) {
      text += chunk;
    }
    expect(offsets).toEqual([good.length + 1]);
    expect(text.endsWith('A\uFFFDB')).toBe(true);
  });

  it('inflates an entry, and stops past the size its directory declares', async () => {
    const text = 'é'.repeat(50_000);
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK, 'a.xml': text, 'b.xml': text }, { 'b.xml': 100 });
    const entries = await readWorkbookZip(path, 'in.xlsx');
    expect(await entryText(path, 'in.xlsx', entries.get('a.xml')!)).toBe(text);
    await expect(entryText(path, 'in.xlsx', entries.get('b.xml')!)).rejects.toThrow(
      'in.xlsx is not an Excel workbook (.xlsx): its zip directory does not match its contents; nothing was sent.',
    );
  });

  it('refuses a compression method Excel does not write', async () => {
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK });
    const entry = (await readWorkbookZip(path, 'in.xlsx')).get('xl/workbook.xml')!;
    const read = readZipEntry(path, 'in.xlsx', { ...entry, method: 12 });
    await expect(read.next()).rejects.toThrow('it uses a zip compression method (12) Excel does not write');
  });
});

describe('workbookSheets', () => {
  it('lists the worksheets in tab order with their entries, names decoded, others left out', async () => {
    const path = zipOf({
      'xl/workbook.xml': WORKBOOK,
      'xl/_rels/workbook.xml.rels': RELS,
      'xl/worksheets/sheet1.xml': '<worksheet/>',
      'xl/worksheets/sheet2.xml': '<worksheet/>',
    });
    const entries = await readWorkbookZip(path, 'in.xlsx');
    expect(await workbookSheets(path, 'in.xlsx', entries)).toEqual([
      { name: 'Commandes & retours', entry: 'xl/worksheets/sheet2.xml' },
      { name: 'Données', entry: 'xl/worksheets/sheet1.xml' },
    ]);
  });

  it('refuses a worksheet whose part is not in the zip, or that names no part, rather than take the next', async () => {
    const cases = [
      [
        '<x:sheet name="Missing" sheetId="4" r:id="rId4"/>',
        '(its part xl/worksheets/gone.xml is not in the zip)',
      ],
      [
        '<x:sheet name="Missing" sheetId="5" r:id="rId9"/>',
        '(no part is named for it in xl/_rels/workbook.xml.rels)',
      ],
    ];
    for (const [sheet, why] of cases) {
      const path = zipOf({
        'xl/workbook.xml': WORKBOOK.replace('</x:sheets>', `${sheet}</x:sheets>`),
        'xl/_rels/workbook.xml.rels': RELS,
        'xl/worksheets/sheet1.xml': '<worksheet/>',
        'xl/worksheets/sheet2.xml': '<worksheet/>',
      });
      const entries = await readWorkbookZip(path, 'in.xlsx');
      await expect(workbookSheets(path, 'in.xlsx', entries)).rejects.toThrow(
        `in.xlsx could not be read as an Excel workbook: its sheet "Missing" is missing ${why}; nothing was sent.`,
      );
    }
  });
});

describe('parts read whole', () => {
  it('refuses a list of sheets that expands past 64 MiB from the zip directory, before reading it', async () => {
    const path = join(tempDir('ordercli-zip-'), 'book.xlsx');
    writeZip(path, { 'xl/workbook.xml': [WORKBOOK, { char: ' ', count: 70_000_000 }] });
    const entries = await readWorkbookZip(path, 'in.xlsx');
    await expect(workbookSheets(path, 'in.xlsx', entries)).rejects.toThrow(
      'in.xlsx could not be read as an Excel workbook: its part xl/workbook.xml expands to more than 64 MiB, far more than such a part holds; nothing was sent.',
    );
  });
});

describe('mergedRanges', () => {
  it('finds the merged ranges after the rows, absolute references and prefixed names included', async () => {
    const rows = '<row><c><v>1</v></c></row>'.repeat(20_000);
    const sheet =
      `<worksheet><sheetData>${rows}</sheetData><mergeCells count="3">` +
      '<mergeCell ref="A2:A4"/><x:mergeCell ref="$B$10:$AB$12"/><mergeCell ref="nonsense"/></mergeCells></worksheet>';
    const path = zipOf({ 'xl/workbook.xml': WORKBOOK, 'sheet.xml': sheet });
    const entries = await readWorkbookZip(path, 'in.xlsx');
    expect(await mergedRanges(path, 'in.xlsx', entries.get('sheet.xml')!)).toEqual([
      { left: 1, top: 2, right: 1, bottom: 4 },
      { left: 2, top: 10, right: 28, bottom: 12 },
    ]);
  });
});

describe('column letters', () => {
  it('turns letters into column numbers and back', () => {
    expect(['A', 'z', 'AA', 'AB', 'AZ', 'BA', 'ZZ', 'AAA', 'XFD'].map(columnNumber)).toEqual([
      1, 26, 27, 28, 52, 53, 702, 703, 16384,
    ]);
    for (const column of [1, 26, 27, 52, 53, 702, 703, 16384]) {
      expect(columnNumber(columnLetters(column))).toBe(column);
    }
    expect(columnLetters(28)).toBe('AB');
  });
});
