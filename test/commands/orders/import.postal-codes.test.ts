// A postal code is checked against its address's country (postcode-validator's patterns), and a
// code that lost its leading zero in a spreadsheet says so: through the built binary, with a CSV
// export and a workbook whose zip cell holds the number 1000 as Excel stores it. Nothing is sent.
import { writeFileSync } from 'node:fs';
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
  'deliveryAddress.recipient',
  'deliveryAddress.street',
  'deliveryAddress.zipCode',
  'deliveryAddress.city',
  'deliveryAddress.country',
  'item.internalReferenceId',
  'item.orderedQuantity',
];

function row(id: string, zip: string | number, city: string, country: string): (string | number)[] {
  return [id, 301, 'Maison Rousseau', 'Camille Rousseau', '12 rue des Tanneurs', zip, city, country, 401, 6];
}

const LOST_ZERO =
  '"1000" is not a FR postal code, "01000" is: a leading zero looks lost (a spreadsheet stores a code typed as a number without it; format the column as text, or with 00000)';

function importArgs(input: string): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'import', input];
}

const orderPosts = () => sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/orders');

describe('postal codes checked against the country', () => {
  it('a CSV export: a lost leading zero and a code of no FR shape are invalid; other countries pass; nothing sent', async () => {
    const dir = tempDir();
    const input = join(dir, 'export.csv');
    const rows = [
      HEADER,
      row('Z-1', '1000', 'Bourg-en-Bresse', 'FR'),
      row('Z-2', 'ABCDE', 'Paris', 'FR'),
      // Countries the library does not know (AQ) pass; a valid DE code passes.
      row('Z-3', '9999', 'McMurdo', 'AQ'),
      row('Z-4', '10115', 'Berlin', 'DE'),
      row('Z-5', '01000', 'Bourg-en-Bresse', 'FR'),
    ];
    writeFileSync(input, `${rows.map((r) => r.join(',')).join('\n')}\n`);
    const result = await runBin(importArgs(input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`export.csv:2: deliveryAddress.zipCode: ${LOST_ZERO}\n`);
    expect(result.stderr).toContain(
      'export.csv:3: deliveryAddress.zipCode: "ABCDE" is not a FR postal code\n',
    );
    expect(result.stderr).toContain('2 of 5 orders in');
    expect(result.stderr).not.toMatch(/export\.csv:[456]:/);
    expect(orderPosts()).toHaveLength(0);
  });

  it('a workbook whose zip cell holds the number 1000 (no format) names the cell; formatted 00000 it is 01000 and passes', async () => {
    const dir = tempDir();
    const input = join(dir, 'commandes.xlsx');
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Commandes');
    sheet.addRow(HEADER);
    sheet.addRow(row('W-1', 1000, 'Bourg-en-Bresse', 'FR'));
    sheet.addRow(row('W-2', 1000, 'Bourg-en-Bresse', 'FR'));
    sheet.getCell('F3').numFmt = '00000';
    await workbook.xlsx.writeFile(input);

    const result = await runBin(importArgs(input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`Commandes!F2: deliveryAddress\\.zipCode: ${escapeRegExp(LOST_ZERO)}`),
    );
    expect(result.stderr).not.toContain('F3');
    expect(result.stderr).toContain('1 of 2 orders in');
    expect(orderPosts()).toHaveLength(0);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
