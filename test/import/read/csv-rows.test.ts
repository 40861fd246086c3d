// The CSV dialect of a file (delimiter, BOM, line ending, header) and its rows with the lines they span.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../../src/core/errors.js';
import {
  type CsvRow,
  delimiterOption,
  detectDelimiter,
  readCsvLayout,
  readCsvRows,
} from '../../../src/import/read/csv-rows.js';
import { tempDir } from '../../support/cli.js';
import { lines, rejection } from '../../support/import-input.js';

/** Writes `content` to a fresh file and returns its path. */
function csvFile(content: string | Buffer): string {
  const path = join(tempDir('ordercli-csv-rows-'), 'in.csv');
  writeFileSync(path, content);
  return path;
}

async function rowsOf(content: string | Buffer, limits?: { maxOrderBytes: number; maxCellBytes: number }) {
  const path = csvFile(content);
  const layout = await readCsvLayout(path, 'in.csv');
  const rows: CsvRow[] = [];
  for await (const row of readCsvRows(path, 'in.csv', layout, limits ? { limits } : {})) rows.push(row);
  return rows;
}

describe('delimiterOption', () => {
  it('takes one character, or tab written as a word, an escape or the character', () => {
    expect(delimiterOption(';')).toBe(';');
    expect(delimiterOption('|')).toBe('|');
    expect(delimiterOption('tab')).toBe('\t');
    expect(delimiterOption('\\t')).toBe('\t');
    expect(delimiterOption('\t')).toBe('\t');
  });

  it('refuses several characters, a quote and a line break', () => {
    for (const value of [';;', '', '"', '\n', '\r']) {
      expect(() => delimiterOption(value)).toThrow(UsageError);
    }
    expect(() => delimiterOption('ab')).toThrow(
      '--delimiter takes one character such as , ; or tab, not "ab".',
    );
  });
});

describe('detectDelimiter', () => {
  it('picks the delimiter that occurs most often in the header line', () => {
    expect(detectDelimiter('a;b;c')).toBe(';');
    expect(detectDelimiter('a\tb\tc,d')).toBe('\t');
    expect(detectDelimiter('a,b,c;d')).toBe(',');
  });

  it('ignores delimiters inside quotes, and falls back to a comma', () => {
    expect(detectDelimiter('"a;b;c;d",e,f')).toBe(',');
    expect(detectDelimiter('externalId')).toBe(',');
  });
});

describe('readCsvLayout', () => {
  it('reads the header, its delimiter and line ending, and whether a BOM leads the file', async () => {
    const path = csvFile(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a;"b;c";d\r\n1;2;3\r\n')]),
    );
    expect(await readCsvLayout(path, 'in.csv')).toEqual({
      header: ['a', 'b;c', 'd'],
      delimiter: ';',
      lineEnding: '\r\n',
      bom: true,
    });
  });

  it('takes a header whose quoted cell spans two lines, and a delimiter given over the detection', async () => {
    const path = csvFile('"first\nname";b,c\nx;y,z\n');
    expect(await readCsvLayout(path, 'in.csv', ';')).toEqual({
      header: ['first\nname', 'b,c'],
      delimiter: ';',
      lineEnding: '\n',
      bom: false,
    });
  });

  it('refuses a file without a header line', async () => {
    const error = await rejection(readCsvLayout(csvFile('\n\n'), 'empty.csv'));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe('empty.csv has no header line; nothing was sent.');
  });

  it('refuses a first line longer than a header may be, without reading the whole file', async () => {
    const error = await rejection(readCsvLayout(csvFile('x'.repeat(1024 * 1024 + 10)), 'blob.csv'));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe(
      'The first line of blob.csv is longer than 1 MiB, too long to be the header of a CSV file of orders; nothing was sent.',
    );
  });
});

describe('readCsvRows', () => {
  it('yields the data rows with the first and last line of each, through quoted CRLF line breaks', async () => {
    const rows = await rowsOf('a,b\r\n1,"x\r\ny"\r\n\r\n2,z\r\n3,"p\r\nq\r\nr"\r\n4,w');
    expect(rows.map((row) => [row.cells, row.line, row.endLine])).toEqual([
      [['1', 'x\r\ny'], 2, 3],
      [['2', 'z'], 5, 5],
      [['3', 'p\r\nq\r\nr'], 6, 8],
      [['4', 'w'], 9, 9],
    ]);
  });

  it('skips rows of empty cells and keeps rows with a different number of cells', async () => {
    const rows = await rowsOf('a,b,c\n,,\n1,2\n1,2,3,4\n');
    expect(rows.map((row) => [row.cells, row.line])).toEqual([
      [['1', '2'], 3],
      [['1', '2', '3', '4'], 4],
    ]);
  });

  it('stops at an unclosed quote, naming the line where its row starts', async () => {
    const error = await rejection(rowsOf('a,b\n1,2\n3,"open\n4,5\n6,7\n'));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe('in.csv is not valid CSV from line 3 on; nothing was sent.');
    expect(lines(error.problems!)).toEqual([
      'in.csv:3: a quoted cell that starts in this row is never closed (a " is missing)',
    ]);
  });

  it('stops at a quoted cell that goes on after its closing quote', async () => {
    const error = await rejection(rowsOf('a,b\n1,"x"y\n'));
    expect(lines(error.problems!)).toEqual([
      'in.csv:2: a quoted cell goes on after its closing quote: write a quote inside a quoted cell as two quotes ("")',
    ]);
  });

  it('stops at a row larger than an order, naming a cell too large when it alone is over its limit', async () => {
    const limits = { maxOrderBytes: 100, maxCellBytes: 20 };
    const cell = await rejection(rowsOf(`a,b\n1,2\n3,${'x'.repeat(200)}\n`, limits));
    expect(cell.message).toBe('in.csv has a cell too large to send on line 3; nothing was sent.');
    expect(cell.problems).toMatchObject([{ file: 'in.csv', line: 3, field: 'column 2' }]);

    const row = await rejection(rowsOf(`a,b,c,d,e,f\n${Array(6).fill('y'.repeat(19)).join(',')}\n`, limits));
    expect(row.message).toBe('in.csv has a row too large to send on line 2; nothing was sent.');
    expect(lines(row.problems!)).toEqual([
      'in.csv:2: the row is larger than 100 bytes, the largest order ordercli sends: split the order, or raise the limit with --max-order-bytes',
    ]);
  });
});
