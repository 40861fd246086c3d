// The workbook reader on sheets written by hand, XML as Excel and other tools store it: shared and
// inline strings (rich text, phonetic guides), merged cells, formulas and their cached results,
// dates in both date systems, error cells, number formats from the styles, and what other writers
// do (no `r` on rows and cells, prefixed element names, CDATA). Each reads as Excel shows it.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../../src/core/errors.js';
import type { CsvRow } from '../../../../src/import/read/csv-rows.js';
import type { InputLimits } from '../../../../src/import/read/limits.js';
import { readXlsxLayout, readXlsxRows } from '../../../../src/import/read/xlsx/layout.js';
import { tempDir } from '../../../support/cli.js';
import { writeZip } from '../../../support/workbooks.js';

const NS =
  'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const RELS =
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>';
/** Styles: 1 = `00000`, 2 = `dd/mm/yyyy`, 3 = built-in 10 (`0.00%`); a dxf format that must not count. */
const STYLES = `<styleSheet ${NS}><numFmts count="2"><numFmt numFmtId="164" formatCode="00000"/><numFmt numFmtId="165" formatCode="dd/mm/yyyy"/></numFmts><cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs><cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="164" applyNumberFormat="1"/><xf numFmtId="165" applyNumberFormat="1"/><xf numFmtId="10"/></cellXfs><dxfs count="1"><dxf><numFmt numFmtId="164" formatCode="0.0"/></dxf></dxfs></styleSheet>`;
const HEADER =
  '<row r="1"><c r="A1" t="inlineStr"><is><t>externalId</t></is></c><c r="B1" t="inlineStr"><is><t>b</t></is></c><c r="C1" t="inlineStr"><is><t>c</t></is></c></row>';

interface Sheet {
  rows: string;
  /** The `<si>` contents of the shared strings. */
  strings?: string[];
  /** After `</sheetData>` (merged ranges). */
  tail?: string;
  /** In `<workbook>` before its sheets (`<workbookPr date1904="1"/>`). */
  properties?: string;
}

function writeWorkbook(sheet: Sheet): string {
  const path = join(tempDir(), 'classeur.xlsx');
  const entries: Record<string, string> = {
    'xl/workbook.xml': `<workbook ${NS}>${sheet.properties ?? ''}<sheets><sheet name="Commandes" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': RELS,
    'xl/styles.xml': STYLES,
    'xl/worksheets/sheet1.xml': `<?xml version="1.0" encoding="UTF-8"?><worksheet ${NS}><sheetData>${HEADER}${sheet.rows}</sheetData>${sheet.tail ?? ''}</worksheet>`,
  };
  if (sheet.strings) {
    entries['xl/sharedStrings.xml'] =
      `<sst ${NS}>${sheet.strings.map((text) => `<si>${text}</si>`).join('')}</sst>`;
  }
  writeZip(path, entries);
  return path;
}

async function readRows(sheet: Sheet, limits?: InputLimits): Promise<CsvRow[]> {
  const path = writeWorkbook(sheet);
  const layout = await readXlsxLayout(path, 'classeur.xlsx', {
    isKnownColumn: (header) => header === 'externalId',
    describeColumns: 'externalId',
    limits,
  });
  const rows: CsvRow[] = [];
  for await (const row of readXlsxRows(path, 'classeur.xlsx', layout, { limits })) rows.push(row);
  return rows;
}

async function readCells(sheet: Sheet): Promise<string[][]> {
  return (await readRows(sheet)).map((row) => row.cells);
}

function row(number: number, ...cells: string[]): string {
  return `<row r="${number}">${cells.join('')}</row>`;
}

describe('reading a sheet: strings', () => {
  it('reads shared strings, rich text as its plain text, without phonetic guides', async () => {
    const cells = await readCells({
      strings: [
        '<t>CMD-1</t>',
        '<r><t>Biocoop de </t></r><r><rPr><b/></rPr><t xml:space="preserve">l\'Iroise</t></r>',
        '<r><t>東京</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh><phoneticPr fontId="1"/>',
      ],
      rows: row(
        2,
        '<c r="A2" t="s"><v>0</v></c>',
        '<c r="B2" t="s"><v>1</v></c>',
        '<c r="C2" t="s"><v>2</v></c>',
      ),
    });
    expect(cells).toEqual([['CMD-1', "Biocoop de l'Iroise", '東京']]);
  });

  it('reads inline strings, rich ones whole, and formula strings, entities decoded once', async () => {
    const cells = await readCells({
      rows: row(
        2,
        '<c r="A2" t="inlineStr"><is><t>CMD-&amp;-1</t></is></c>',
        '<c r="B2" t="inlineStr"><is><r><t>Biocoop </t></r><r><t>&lt;b&gt;</t></r><rPh><t>x</t></rPh></is></c>',
        '<c r="C2" t="str"><f>"a"&amp;"b"</f><v>a&amp;amp;b</v></c>',
      ),
    });
    expect(cells).toEqual([['CMD-&-1', 'Biocoop <b>', 'a&amp;b']]);
  });

  it('keeps a character whose UTF-8 bytes straddle two chunks of the inflated strings', async () => {
    // Long strings of two- and three-byte characters cross every chunk boundary of the reader.
    const long = 'É€'.repeat(200_000);
    const cells = await readCells({
      strings: ['<t>CMD-1</t>', `<t>${long}</t>`],
      rows: row(2, '<c r="A2" t="s"><v>0</v></c>', '<c r="B2" t="s"><v>1</v></c>'),
    });
    expect(cells[0]![1]).toBe(long);
  });

  it('reads an empty shared string as an empty cell', async () => {
    const cells = await readCells({
      strings: ['<t>CMD-1</t>', '<t/>'],
      rows: row(2, '<c r="A2" t="s"><v>0</v></c>', '<c r="B2" t="s"><v>1</v></c>'),
    });
    expect(cells).toEqual([['CMD-1', '', '']]);
  });
});

describe('reading a sheet: numbers, dates, formulas, errors', () => {
  it('applies the number format of the cell style, and of the row style to cells without one', async () => {
    const cells = await readCells({
      rows:
        row(
          2,
          '<c r="A2" t="str"><v>CMD-1</v></c>',
          '<c r="B2" s="1"><v>1000</v></c>',
          '<c r="C2" s="3"><v>0.25</v></c>',
        ) +
        '<row r="3" s="1" customFormat="1"><c r="A3" t="str"><v>CMD-2</v></c><c r="B3"><v>1000</v></c><c r="C3" s="2"><v>46349</v></c></row>',
    });
    expect(cells).toEqual([
      ['CMD-1', '01000', '25.00%'],
      ['CMD-2', '01000', '2026-11-23'],
    ]);
  });

  it('reads dates as ISO dates, in the 1904 date system too, and cells of type d', async () => {
    const rows = row(
      2,
      '<c r="A2" t="str"><v>CMD-1</v></c>',
      '<c r="B2" s="2"><v>44888</v></c>',
      '<c r="C2" t="d"><v>2026-11-23T14:30:00</v></c>',
    );
    expect(await readCells({ rows })).toEqual([['CMD-1', '2022-11-23', '2026-11-23']]);
    expect(await readCells({ rows, properties: '<workbookPr date1904="1"/>' })).toEqual([
      ['CMD-1', '2026-11-24', '2026-11-23'],
    ]);
  });

  it('reads a formula as its cached result, zero, empty text and booleans included', async () => {
    const cells = await readCells({
      rows:
        row(
          2,
          '<c r="A2" t="str"><v>CMD-1</v></c>',
          '<c r="B2" s="1"><f>1000+1</f><v>1001</v></c>',
          '<c r="C2"><f>B2-B2</f><v>0</v></c>',
        ) +
        row(
          3,
          '<c r="A3" t="str"><v>CMD-2</v></c>',
          '<c r="B3" t="b"><f>TRUE()</f><v>1</v></c>',
          '<c r="C3" t="str"><f>T("")</f><v></v></c>',
        ),
    });
    expect(cells).toEqual([
      ['CMD-1', '01001', '0'],
      ['CMD-2', 'TRUE', ''],
    ]);
  });

  it('makes an error cell, an error result and a formula never computed problems naming the cell', async () => {
    const rows = await readRows({
      rows: row(
        2,
        '<c r="A2" t="str"><v>CMD-1</v></c>',
        '<c r="B2" t="e"><v>#DIV/0!</v></c>',
        '<c r="C2" t="e"><f>NA()</f><v>#N/A</v></c>',
        '<c r="D2"><f>NOW()</f></c>',
      ),
    });
    expect(rows[0]!.problems?.map((problem) => [problem.cell, problem.message])).toEqual([
      ['Commandes!B2', 'holds the error #DIV/0!, not a value: fix the cell or its formula'],
      ['Commandes!C2', 'holds the error #N/A, not a value: fix the cell or its formula'],
      [
        'Commandes!D2',
        'holds a formula that was never computed (the file keeps no result for it, as workbooks written by some tools do): open and save the workbook in Excel or LibreOffice, or recompute it with soffice --headless --convert-to xlsx <file>',
      ],
    ]);
  });

  it('reads booleans as TRUE and FALSE', async () => {
    const cells = await readCells({
      rows: row(
        2,
        '<c r="A2" t="str"><v>CMD-1</v></c>',
        '<c r="B2" t="b"><v>1</v></c>',
        '<c r="C2" t="b"><v>0</v></c>',
      ),
    });
    expect(cells).toEqual([['CMD-1', 'TRUE', 'FALSE']]);
  });
});

describe('reading a sheet: layout', () => {
  it('gives every cell of a merged range its top-left value, and skips empty rows', async () => {
    const cells = await readCells({
      rows:
        row(2, '<c r="A2" t="str"><v>CMD-1</v></c>', '<c r="B2"><v>1</v></c>', '<c r="C2"><v>9</v></c>') +
        row(3, '<c r="A3" s="1"/>', '<c r="B3"><v>2</v></c>') +
        row(4, '<c r="A4" s="1"/>', '<c r="B4" t="s"><v>0</v></c>') +
        row(5, '<c r="A5" t="str"><v>CMD-2</v></c>', '<c r="B5"><v>3</v></c>'),
      strings: ['<t/>'],
      tail: '<mergeCells count="2"><mergeCell ref="A2:A3"/><mergeCell ref="C2:C3"/></mergeCells>',
    });
    expect(cells).toEqual([
      ['CMD-1', '1', '9'],
      ['CMD-1', '2', '9'],
      ['CMD-2', '3', ''],
    ]);
  });

  it('reads rows and cells without a reference, prefixed element names and CDATA', async () => {
    const cells = await readCells({
      rows:
        '<row><c t="str"><v>CMD-1</v></c><c/><c><v>3</v></c></row>' +
        '<x:row r="7"><x:c r="A7" t="str"><x:v><![CDATA[CMD-<2>]]></x:v></x:c><x:c r="C7"><x:v>4</x:v></x:c></x:row>',
    });
    expect(cells).toEqual([
      ['CMD-1', '', '3'],
      ['CMD-<2>', '', '4'],
    ]);
  });

  it.each([
    ['whose XML is not well-formed', `${row(2, '<c r="A2" t="str"><v>CMD-1</v></c>')}<row r="3"><c>`],
    ['with a cell past column XFD', row(2, '<c r="AAAAAAAAAAAA2"><v>1</v></c>')],
  ])('refuses a sheet %s, naming the file and the part', async (_what, rows) => {
    const error = await readRows({ rows }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(
      /^classeur\.xlsx could not be read as an Excel workbook \(xl\/worksheets\/sheet1\.xml: .+\); nothing was sent\.$/,
    );
  });
});

describe('reading a sheet: what is held is bounded by the order limit', () => {
  const limits: InputLimits = { maxOrderBytes: 1000, maxCellBytes: 500 };
  const refusal = (where: string) =>
    `classeur.xlsx could not be read: ${where} holds more than 1000 bytes of text, the largest order ordercli sends: shorten it, or raise the limit with --max-order-bytes; nothing was sent.`;
  const inline = (ref: string, ...runs: string[]) =>
    `<c r="${ref}" t="inlineStr"><is>${runs.map((run) => `<r><t>${run}</t></r>`).join('')}</is></c>`;

  it('reads a text of the limit, and refuses one character more', async () => {
    const rows = await readRows({ rows: row(2, inline('A2', 'é'.repeat(1000))) }, limits);
    expect(rows[0]!.cells[0]).toBe('é'.repeat(1000));
    const error = await readRows({ rows: row(2, inline('B2', 'x'.repeat(1001))) }, limits).catch(
      (caught: unknown) => caught as Error,
    );
    expect((error as Error).message).toBe(refusal('Commandes!B2'));
  });

  it('refuses runs of rich text, the cells of a row, a shared string and a tag that are together over the limit', async () => {
    const cases: [Sheet, string][] = [
      [{ rows: row(2, inline('A2', 'a'.repeat(600), 'b'.repeat(600))) }, 'Commandes!A2'],
      [
        {
          rows: row(
            2,
            inline('A2', 'a'.repeat(400)),
            inline('B2', 'b'.repeat(400)),
            inline('C2', 'c'.repeat(400)),
          ),
        },
        'Commandes!C2',
      ],
      [
        {
          rows: row(2, '<c r="A2" t="s"><v>0</v></c>'),
          strings: [`<r><t>${'a'.repeat(600)}</t></r><r><t>${'b'.repeat(600)}</t></r>`],
        },
        'shared string 0 (in xl/sharedStrings.xml)',
      ],
      [{ rows: `<row r="2"><c r="A2" x="${'y'.repeat(1200)}"/></row>` }, 'Commandes!2:2'],
    ];
    for (const [sheet, where] of cases) {
      const error = await readRows(sheet, limits).catch((caught: unknown) => caught as Error);
      expect((error as Error).message, where).toBe(refusal(where));
    }
  });
});
