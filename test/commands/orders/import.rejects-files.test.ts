// `--rejects` through the built binary: a workbook's rejects keep the values read (a quantity of
// 0, a formula's result), a dry run writes what a real run would reject, and a run that rejects
// nothing leaves no rejects file (an earlier run's included), so a script can test for it.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
const HEADER = [
  'externalId',
  'contact.internalReferenceId',
  'customer.name',
  'deliveryAddress.zipCode',
  'deliveryAddress.country',
  'item.internalReferenceId',
  'item.orderedQuantity',
];

async function workbook(dir: string, rows: ExcelJS.CellValue[][]): Promise<string> {
  const file = join(dir, 'commandes.xlsx');
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('Commandes');
  sheet.addRow(HEADER);
  for (const row of rows) sheet.addRow(row);
  await book.xlsx.writeFile(file);
  return file;
}

async function rowsOf(file: string): Promise<unknown[][]> {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(file);
  const rows: unknown[][] = [];
  book.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  return rows;
}

const args = (input: string, ...more: string[]) => [
  '--base-url',
  sandbox.url,
  '--token',
  sandbox.tokens.partner,
  'orders',
  'import',
  input,
  ...more,
];

describe('orders import --rejects', () => {
  it("keeps a quantity of 0 and a formula's result in a workbook's rejects, also on a dry run", async () => {
    const dir = tempDir();
    const input = await workbook(dir, [
      ['R-1', 301, 'Maison Rousseau', '01000', 'FR', 401, 0],
      ['R-2', 301, 'Maison Rousseau', '01000', 'FR', 401, { formula: '0*12', result: 0 }],
      ['R-3', 301, 'Maison Rousseau', '01000', 'FR', 401, 6],
    ]);
    const rejects = join(dir, 'rejets.xlsx');
    const dry = await runBin(args(input, '--dry-run', '--skip-invalid', '--rejects', rejects));
    expect(dry.code, dry.stderr).toBe(0);
    expect(await rowsOf(rejects)).toEqual([
      HEADER,
      ['R-1', 301, 'Maison Rousseau', '01000', 'FR', 401, 0],
      ['R-2', 301, 'Maison Rousseau', '01000', 'FR', 401, 0],
    ]);
    const real = await runBin(args(input, '--skip-invalid', '--rejects', rejects));
    expect(real.code, real.stderr).toBe(4);
    expect((await rowsOf(rejects)).map((row) => row[0])).toEqual(['externalId', 'R-1', 'R-2']);
  });

  it('leaves no rejects file when nothing was rejected, an earlier one included', async () => {
    const dir = tempDir();
    const input = await workbook(dir, [['OK-1', 301, 'Maison Rousseau', '01000', 'FR', 401, 2]]);
    const rejects = join(dir, 'rejets.xlsx');
    writeFileSync(rejects, 'the rejects of an earlier run');
    const result = await runBin(args(input, '--rejects', rejects));
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(rejects)).toBe(false);
    const devNull = await runBin(args(input, '--rejects', '/dev/null'));
    expect(devNull.code, devNull.stderr).toBe(0);
    expect(existsSync('/dev/null')).toBe(true);
  });
});
