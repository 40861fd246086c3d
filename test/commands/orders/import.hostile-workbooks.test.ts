// Workbooks that no spreadsheet writes, imported through the built binary (issue 31, items 2 and
// 3): a sheet read wrongly would send wrong orders, and a workbook held whole would take gigabytes.
// Each is refused with exit 2 in one sentence naming the file and the sheet and cell (or the zip
// part) at fault, and the sandbox receives nothing. The large ones are written by hand as deflate
// streams of a few megabytes (test/support/workbooks.ts), and refused before their text is read.
// Needs `npm run build`.
import { describe, expect, it } from 'vitest';
import { type CliResult, runBin, tempDir } from '../../support/cli.js';
import { postsTo } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import {
  HAND_MADE_STRINGS,
  type HandMadeWorkbook,
  handMadeOrderRow,
  writeHandMadeWorkbook,
  xmlCell,
} from '../../support/workbooks.js';

const sandbox = useSandbox();

function importOf(book: HandMadeWorkbook, ...args: string[]): Promise<CliResult & { input: string }> {
  const input = writeHandMadeWorkbook(tempDir(), book);
  const argv = ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'import', input];
  return runBin([...argv, ...args]).then((result) => ({ ...result, input }));
}

/**
 * Exit 2 with one error line, `error: <file> <sentence>`, no stack trace, and nothing sent. (A slow
 * run may print progress lines on stderr besides: they are not what is tested here.)
 */
function expectRefused(result: CliResult & { input: string }, sentence: string): void {
  const lines = result.stderr.split('\n');
  expect(lines.filter((line) => /^error:|^\s+at /.test(line))).toEqual([
    `error: ${result.input} ${sentence}`,
  ]);
  expect(result.code).toBe(2);
  expectNoOrder();
}

/** The sandbox received no order: no POST, none created. */
function expectNoOrder(): void {
  expect(postsTo(sandbox)).toBe(0);
  expect(sandbox.orders()).toEqual([]);
}

const DAMAGED = 'could not be read as an Excel workbook:';

describe('a hand-made workbook', () => {
  it('is imported when it is well formed: the refusals below are of their one fault', async () => {
    const result = await importOf({ rows: handMadeOrderRow(2) });
    expect(result.code, result.stderr).toBe(0);
    expect(sandbox.orders()).toHaveLength(1);
    expect(sandbox.requests.find((request) => request.method === 'POST')?.body).toMatchObject({
      externalId: 'SO-1',
      deliveryAddress: { street: '12 rue des Halles' },
      items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
    });
  });
});

describe('workbooks read wrong, refused instead', () => {
  it('refuses a row stored twice (its item would be sent twice)', async () => {
    const result = await importOf({ rows: handMadeOrderRow(2) + handMadeOrderRow(2) });
    expectRefused(result, `${DAMAGED} Commandes!2:2 is stored twice in the sheet; nothing was sent.`);
  });

  it('refuses rows out of order (a row number that goes backwards)', async () => {
    const result = await importOf({ rows: handMadeOrderRow(3) + handMadeOrderRow(2) });
    expectRefused(
      result,
      `${DAMAGED} Commandes!2:2 is stored after row 3 (rows out of order); nothing was sent.`,
    );
  });

  it('refuses a cell stored twice in its row, cells out of order, and a cell outside its row', async () => {
    const twice = await importOf({ rows: handMadeOrderRow(2, [xmlCell.number('F2', 5)]) });
    expectRefused(twice, `${DAMAGED} Commandes!F2 is stored twice in its row; nothing was sent.`);
    const backwards = await importOf({ rows: handMadeOrderRow(2, [xmlCell.number('C2', 5)]) });
    expectRefused(
      backwards,
      `${DAMAGED} Commandes!C2 is stored after F2 (cells out of order); nothing was sent.`,
    );
    const elsewhere = await importOf({ rows: handMadeOrderRow(2, [xmlCell.number('G7', 5)]) });
    expectRefused(elsewhere, `${DAMAGED} the cell Commandes!G7 is stored in row 2; nothing was sent.`);
  });

  it('refuses a shared string the workbook does not have, rather than read an empty cell', async () => {
    const rows = handMadeOrderRow(2).replace('<c r="D2" t="s"><v>2</v>', '<c r="D2" t="s"><v>7</v>');
    const result = await importOf({ rows });
    expectRefused(
      result,
      `${DAMAGED} Commandes!D2 refers to shared string 7, but the workbook has 3 (0 to 2); nothing was sent.`,
    );
  });

  it('refuses bytes that are not UTF-8 in a shared string, naming the cell that shows it', async () => {
    const street = Buffer.concat([Buffer.from('12 rue des Halles '), Buffer.from([0xe9]), Buffer.from('t')]);
    const result = await importOf({
      rows: handMadeOrderRow(2),
      strings: [...HAND_MADE_STRINGS.slice(0, 2), street],
    });
    expectRefused(
      result,
      `${DAMAGED} Commandes!D2 holds bytes that are not UTF-8 (in shared string 2); nothing was sent.`,
    );
  });

  it('passes over a shared string that is not UTF-8 when no cell of the sheet shows it', async () => {
    const result = await importOf({
      rows: handMadeOrderRow(2),
      strings: [...HAND_MADE_STRINGS, Buffer.from([0x41, 0xff])],
    });
    expect(result.code, result.stderr).toBe(0);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('refuses bytes that are not UTF-8 in an inline string, naming the cell and the byte', async () => {
    const [before, after] = handMadeOrderRow(2).split(/<c r="D2".*?<\/c>/);
    const row = Buffer.concat([
      Buffer.from(`${before}<c r="D2" t="inlineStr"><is><t>12 rue `),
      Buffer.from([0xc3, 0x28]),
      Buffer.from(`</t></is></c>${after}`),
    ]);
    const result = await importOf({ rows: [row] });
    const byte = /at byte (\d+) of/.exec(result.stderr)?.[1];
    expectRefused(
      result,
      `${DAMAGED} Commandes!D2 holds bytes that are not UTF-8 (at byte ${byte} of xl/worksheets/sheet1.xml); nothing was sent.`,
    );
    expect(Number(byte)).toBeGreaterThan(500);
  });

  it('refuses a sheet whose part is missing from the zip, with --sheet and without, rather than read the next', async () => {
    const book: HandMadeWorkbook = {
      before: { Archive: handMadeOrderRow(2) },
      rows: handMadeOrderRow(2),
      without: ['xl/worksheets/sheet2.xml'],
    };
    const why = `${DAMAGED} its sheet "Commandes" is missing (its part xl/worksheets/sheet2.xml is not in the zip); nothing was sent.`;
    expectRefused(await importOf(book, '--sheet', 'Commandes'), why);
    expectRefused(await importOf(book), why);
  });
});

describe('workbook memory, bounded', () => {
  it('refuses a workbook whose shared strings expand to 3.2 GB (a ratio of about 150) from its zip directory', async () => {
    const strings = ['<sst><si><t>', { char: 'a', count: 3_200_000_000 }, '</t></si></sst>'];
    const result = await importOf({ rows: handMadeOrderRow(2), strings });
    expectRefused(
      result,
      'is not an Excel workbook (.xlsx): it expands to more than 2 GiB, which no workbook of orders does (a zip bomb?); nothing was sent.',
    );
  });

  it('refuses shared strings past 256 MiB before reading them, whatever the ratio', async () => {
    const strings = ['<sst><si><t>', { char: 'a', count: 300 * 1024 * 1024 }, '</t></si></sst>'];
    const result = await importOf({ rows: handMadeOrderRow(2), strings });
    expectRefused(
      result,
      'is too large a workbook to read: its shared strings (xl/sharedStrings.xml) expand to 300.0 MiB, over the 256 MiB ordercli reads; save the sheet of orders as "CSV UTF-8" and import that; nothing was sent.',
    );
  });

  it('refuses one shared string of 200 MB when it passes 1 MiB, naming it, without reading on', async () => {
    const strings = [
      '<sst><si><t>SO-1</t></si><si><t>',
      { char: 'x', count: 200_000_000 },
      '</t></si></sst>',
    ];
    const rows = handMadeOrderRow(2).replace(/<c r="C2".*?<\/c><c r="D2".*?<\/c>/, '');
    const result = await importOf({ rows, strings });
    expectRefused(
      result,
      'could not be read: shared string 1 (in xl/sharedStrings.xml) holds more than 1 MiB of text, the largest order ordercli sends: shorten it, or raise the limit with --max-order-bytes; nothing was sent.',
    );
  });

  it('refuses an inline string of 200 MB in a cell, naming the cell', async () => {
    const rows = [
      handMadeOrderRow(2).replace(/<c r="D2".*?<\/c>/, '<c r="D2" t="inlineStr"><is><t>'),
      { char: 'x', count: 200_000_000 },
      '</t></is></c></row>',
    ];
    rows[0] = (rows[0] as string).replace(/<c r="E2".*$/, '');
    const result = await importOf({ rows });
    expectRefused(
      result,
      'could not be read: Commandes!D2 holds more than 1 MiB of text, the largest order ordercli sends: shorten it, or raise the limit with --max-order-bytes; nothing was sent.',
    );
  });

  it('reads an inline string of 2 MiB once --max-order-bytes and --max-cell-bytes allow it', async () => {
    const rows = handMadeOrderRow(2).replace(
      /<c r="D2".*?<\/c>/,
      xmlCell.inline('D2', 'r'.repeat(2 * 1024 * 1024)),
    );
    const refused = await importOf({ rows }, '--dry-run');
    expect(refused.stderr).toContain('Commandes!D2 holds more than 1 MiB of text');
    expect(refused.code).toBe(2);
    const read = await importOf(
      { rows },
      '--dry-run',
      '--max-order-bytes',
      '3MiB',
      '--max-cell-bytes',
      '3MiB',
    );
    expect(read.stderr).toContain('1 order read, 1 valid, 0 invalid');
    expectNoOrder();
  });

  it('reads a cell over the cell limit but under the order limit as a problem of its order, as CSV does', async () => {
    const rows = handMadeOrderRow(2).replace(
      /<c r="D2".*?<\/c>/,
      xmlCell.inline('D2', 'r'.repeat(100 * 1024)),
    );
    const result = await importOf({ rows });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${result.input}:Commandes!D2: deliveryAddress.street: is 100 KiB long, over the 64 KiB limit for one value`,
    );
    expectNoOrder();
  });
});
