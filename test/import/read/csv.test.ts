// CSV dialects as spreadsheets write them, and the line numbers every problem relies on.
import { describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../../src/core/errors.js';
import { validateImport } from '../../../src/import/check/validate.js';
import { type CsvLayout, detectDelimiter } from '../../../src/import/read/csv-rows.js';
import { lines, readAll, rejection, sourceOf } from '../../support/import-input.js';

const HEADER = [
  'externalId',
  'contact.internalReferenceId',
  'deliveryAddress.street',
  'item.internalReferenceId',
  'item.orderedQuantity',
];

function csv(delimiter: string, rows: string[][], eol = '\n'): string {
  return [HEADER, ...rows].map((cells) => cells.join(delimiter)).join(eol) + eol;
}

const ROWS = [
  ['A-1', '301', 'rue A', '401', '2'],
  ['A-1', '', '', '402', '3'],
  ['A-2', '302', 'rue B', '403', '1'],
];

const EXPECTED_ORDERS = [
  {
    externalId: 'A-1',
    contact: { internalReferenceId: 301 },
    deliveryAddress: { street: 'rue A' },
    items: [
      { internalReferenceId: 401, orderedQuantity: 2 },
      { internalReferenceId: 402, orderedQuantity: 3 },
    ],
  },
  {
    externalId: 'A-2',
    contact: { internalReferenceId: 302 },
    deliveryAddress: { street: 'rue B' },
    items: [{ internalReferenceId: 403, orderedQuantity: 1 }],
  },
];

describe('CSV dialects', () => {
  it.each([
    ['comma', ',', '\n'],
    ['semicolon', ';', '\n'],
    ['tab', '\t', '\n'],
    ['semicolon with CRLF', ';', '\r\n'],
  ])('reads %s-separated files, detecting the delimiter from the header', async (_name, delimiter, eol) => {
    const source = await sourceOf('orders.csv', csv(delimiter, ROWS, eol));
    expect(source.details).toMatchObject({ delimiter, lineEnding: eol, bom: false, header: HEADER });
    const orders = await readAll(source);
    expect(orders.map((order) => order.body)).toEqual(EXPECTED_ORDERS);
    expect(orders.map((order) => [order.location.line, order.location.endLine])).toEqual([
      [2, 3],
      [4, 4],
    ]);
    expect(orders.map((order) => order.itemLines)).toEqual([[2, 3], [4]]);
  });

  it('reads UTF-8 with a byte order mark, CRLF, accents, and keeps the BOM for rejects', async () => {
    const text = csv(';', [['CMD-é', '301', 'Bâtiment B, 2e étage', '401', '2']], '\r\n');
    const source = await sourceOf(
      'commandes.csv',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
    );
    expect(source.details).toMatchObject({ delimiter: ';', lineEnding: '\r\n', bom: true });
    expect(source.header?.[0]).toBe('externalId');
    const [order] = await readAll(source);
    expect(order?.body).toMatchObject({
      externalId: 'CMD-é',
      deliveryAddress: { street: 'Bâtiment B, 2e étage' },
    });
  });

  it('reads quoted cells with embedded delimiters, doubled quotes and line breaks, and counts lines through them', async () => {
    const text =
      'externalId;contact.internalReferenceId;deliveryAddress.street;item.internalReferenceId;item.orderedQuantity\r\n' +
      'Q-1;301;"Bâtiment B; 2e étage\r\n12 rue des Tanneurs";401;2\r\n' +
      'Q-1;;;402;"3"\r\n' +
      'Q-2;302;"Zone ""Les Prés""\nlot 4\nporte 2";403;x\r\n';
    const source = await sourceOf('quoted.csv', text);
    const orders = await readAll(source);
    expect(orders.map((order) => order.body.deliveryAddress)).toEqual([
      { street: 'Bâtiment B; 2e étage\r\n12 rue des Tanneurs' },
      { street: 'Zone "Les Prés"\nlot 4\nporte 2' },
    ]);
    expect(orders.map((order) => order.location)).toEqual([
      { file: 'quoted.csv', line: 2, endLine: 4 },
      { file: 'quoted.csv', line: 5, endLine: 7 },
    ]);
    // The problem of the third order is on the line where its row starts, after the quoted breaks.
    expect(lines(orders[1]!.problems)).toEqual([
      'quoted.csv:5: item.orderedQuantity: must be a whole number above zero, not "x"',
    ]);
  });

  it('skips blank lines and rows of empty cells, keeping the file line numbers', async () => {
    const text = `${HEADER.join(',')}\n\nA-1,301,,401,2\n,,,,\n\nA-2,302,,403,0\n`;
    const validation = await validateImport(await sourceOf('gaps.csv', text));
    expect(validation.total).toBe(2);
    expect(lines(validation.problems)).toEqual([
      'gaps.csv:6: item.orderedQuantity: must be a whole number above zero, not 0',
    ]);
  });

  it('reads a last row without a line ending', async () => {
    const orders = await readAll(await sourceOf('noeol.csv', `${HEADER.join(',')}\r\nA-1,301,,401,2`));
    expect(orders[0]?.body.items).toEqual([{ internalReferenceId: 401, orderedQuantity: 2 }]);
    expect(orders[0]?.location).toEqual({ file: 'noeol.csv', line: 2, endLine: 2 });
  });

  it('uses --delimiter over the detection', async () => {
    // The header has more commas than semicolons, but the file is semicolon-separated with commas in names.
    const text =
      'externalId;customer.name;contact.internalReferenceId;item.internalReferenceId;item.orderedQuantity\nD-1;Dupont, Durand, et fils;301;401;1\n';
    expect(detectDelimiter('a,b,c;d')).toBe(',');
    const [order] = await readAll(await sourceOf('d.txt', text, { delimiter: ';' }));
    expect(order?.body.customer).toEqual({ name: 'Dupont, Durand, et fils' });
    await expect(sourceOf('d.csv', text, { delimiter: 'ab' })).rejects.toThrow(UsageError);
    expect(
      (
        (await sourceOf('t.tsv', 'externalId\titem.orderedQuantity\n', { delimiter: 'tab' }))
          .details as CsvLayout
      ).delimiter,
    ).toBe('\t');
  });

  it('reports a row with the wrong number of cells as a problem of its order, with the other problems', async () => {
    const text = `${HEADER.join(',')}\nA-1,301,rue A,401\nA-2,302,rue B,403,1\nA-3,303,rue C,404,1,extra\n`;
    const validation = await validateImport(await sourceOf('cells.csv', text));
    expect(lines(validation.problems)).toEqual([
      'cells.csv:2: the row has 4 cells but the header has 5: check the delimiters and quotes of this row',
      'cells.csv:4: the row has 6 cells but the header has 5: check the delimiters and quotes of this row',
    ]);
    expect(validation.valid).toBe(1);
  });

  it('stops at a quote that is never closed, naming the line where its row starts', async () => {
    const text = `${HEADER.join(',')}\r\nA-1,301,"rue\r\nA",401,2\r\nA-2,302,"rue B,403,1\r\nA-3,303,,404,1\r\n`;
    const error = await rejection(validateImport(await sourceOf('open.csv', text)));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe('open.csv is not valid CSV from line 4 on; nothing was sent.');
    expect(lines(error.problems!)).toEqual([
      'open.csv:4: a quoted cell that starts in this row is never closed (a " is missing)',
    ]);
  });

  it('stops at a stray quote, with the problems found before it', async () => {
    const text = `${HEADER.join(',')}\nA-1,301,,401,x\nA-2,302,12 "bis" rue,403,1\n`;
    const error = await rejection(validateImport(await sourceOf('stray.csv', text)));
    expect(lines(error.problems!)).toEqual([
      'stray.csv:2: item.orderedQuantity: must be a whole number above zero, not "x"',
      'stray.csv:3: a quote inside a cell that is not quoted: put the whole cell in quotes and double the quote ("")',
    ]);
  });

  it('refuses a file that is not UTF-8 (a spreadsheet saved as Windows-1252), naming the line', async () => {
    const latin1 = Buffer.concat([
      Buffer.from(`${HEADER.join(';')}\nL-1;301;`),
      Buffer.from([0x42, 0xe2, 0x74]), // "Bât" in Windows-1252
      Buffer.from(';401;1\n'),
    ]);
    const error = await rejection(sourceOf('latin1.csv', latin1));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toContain('latin1.csv is not UTF-8 text (line 2');
    expect(lines(error.problems!)).toEqual([
      'latin1.csv:2: byte 0xE2 ("â" in Windows-1252) is not UTF-8: the file is in another encoding',
    ]);
  });
});

describe('CSV header', () => {
  it('names unknown columns, suggests the right one and lists the valid ones', async () => {
    const error = await rejection(sourceOf('h.csv', 'externalId,email,Qty,item.orderedQuantity\nA,b,1,2\n'));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe(
      `h.csv has 2 columns ordercli does not know ("email", "Qty"): rename them to the contract's column names, or map them with --map <file.json>; nothing was sent.`,
    );
    const problems = lines(error.problems!);
    expect(problems.slice(0, 2)).toEqual([
      'h.csv:1: email: is not a column ordercli knows (did you mean contact.email?)',
      'h.csv:1: Qty: is not a column ordercli knows',
    ]);
    expect(problems[2]).toMatch(
      /^h\.csv:1: the columns are: externalId, externalReference, contact\.id, .*item\.orderedQuantity$/,
    );
  });

  it('matches the contract columns case-insensitively and ignores surrounding spaces', async () => {
    const source = await sourceOf(
      'c.csv',
      ' ExternalId ,ITEM.orderedquantity,item.internalReferenceId,contact.internalReferenceId\nA-1,2,401,301\n',
    );
    const [order] = await readAll(source);
    expect(order?.body).toEqual({
      externalId: 'A-1',
      contact: { internalReferenceId: 301 },
      items: [{ internalReferenceId: 401, orderedQuantity: 2 }],
    });
    // Rejects get the header back as written.
    expect(source.header).toEqual([
      ' ExternalId ',
      'ITEM.orderedquantity',
      'item.internalReferenceId',
      'contact.internalReferenceId',
    ]);
  });

  it('refuses two columns for the same field and a column without a header', async () => {
    const error = await rejection(sourceOf('dup.csv', 'externalId,item.orderedQuantity,,ExternalID\n'));
    expect(lines(error.problems!)).toEqual([
      'dup.csv:1: column 3 has no header',
      'dup.csv:1: ExternalID: "ExternalID" and column 1 ("externalId") both fill externalId',
    ]);
  });

  it('refuses an empty file', async () => {
    const error = await rejection(sourceOf('empty.csv', ''));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe('empty.csv has no header line; nothing was sent.');
  });
});
