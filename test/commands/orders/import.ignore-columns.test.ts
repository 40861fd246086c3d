// Columns an import does not need, left out on purpose (`--ignore-columns`, `null` in `--map`),
// through the built binary against the sandbox: CSV and an Excel workbook built with exceljs, for
// `orders import` and `refs contacts import`. The strict default stays: an unknown header that is
// not left out still stops the file, a typo with the closest known name.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { postsTo } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

/** An ERP export: the contract's columns and three it does not need (Date, Colis, Commentaire). */
const ERP_HEADER = [
  'externalId',
  'Date',
  'contact.internalReferenceId',
  'customer.name',
  'item.internalReferenceId',
  'item.orderedQuantity',
  'Colis',
  'Commentaire',
];
const ERP_ROWS = [
  'ERP-1,2026-11-23,301,Épicerie Dupont,401,2,1,livrer le matin',
  'ERP-1,2026-11-23,,,402,1,1,',
  // A row of the export with nothing in the columns read (a total): skipped as an empty row.
  ',,,,,,2,total',
  'ERP-2,2026-11-24,302,Café du port,403,3,1,"sonner deux fois, porte B"',
];

function cli(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, ...args];
}

function writeCsv(dir: string, name: string, header: string[], rows: string[]): string {
  writeFileSync(join(dir, name), `${[header.join(','), ...rows].join('\n')}\n`);
  return name;
}

function postedOrders(): Record<string, unknown>[] {
  return sandbox.requests
    .filter((request) => request.method === 'POST' && request.path === '/api/v1/orders')
    .map((request) => request.body as Record<string, unknown>);
}

describe('orders import: columns left out on purpose', () => {
  it('by default an unknown column stops the file; the hint names --ignore-columns and null in --map', async () => {
    const dir = tempDir();
    const input = writeCsv(dir, 'erp.csv', ERP_HEADER, ERP_ROWS);
    const result = await runBin(cli('orders', 'import', input), { cwd: dir });
    expect(result.code).toBe(2);
    expect(postsTo(sandbox)).toBe(0);
    expect(result.stderr).toContain(
      'error: erp.csv has 3 columns ordercli does not know ("Date", "Colis", "Commentaire"): rename them to the contract\'s column names, or map them with --map <file.json>; nothing was sent.',
    );
    expect(result.stderr).toContain(
      'hint: if the import does not need these columns, leave them out on purpose: --ignore-columns Date,Colis,Commentaire, or map them to null in the --map file ({"Date": null, "Colis": null, "Commentaire": null})',
    );
  });

  it('--ignore-columns leaves them out: the orders are sent without them, and a row with nothing read is skipped', async () => {
    const dir = tempDir();
    const input = writeCsv(dir, 'erp.csv', ERP_HEADER, ERP_ROWS);
    // Any case; the flag may be repeated.
    const result = await runBin(
      cli('orders', 'import', input, '--ignore-columns', 'date,Colis', '--ignore-columns', 'COMMENTAIRE'),
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    const posted = postedOrders();
    expect(posted.map((order) => order.externalId)).toEqual(['ERP-1', 'ERP-2']);
    expect(posted[0]).toEqual({
      externalId: 'ERP-1',
      contact: { internalReferenceId: 301 },
      customer: { name: 'Épicerie Dupont' },
      items: [
        { internalReferenceId: 401, orderedQuantity: 2 },
        { internalReferenceId: 402, orderedQuantity: 1 },
      ],
    });
  });

  it('a typo in a header is still caught, with the closest known name, whatever is left out', async () => {
    const dir = tempDir();
    const header = ERP_HEADER.map((name) => (name === 'customer.name' ? 'customer.nmae' : name));
    const input = writeCsv(dir, 'erp.csv', header, ERP_ROWS);
    const result = await runBin(
      cli('orders', 'import', input, '--ignore-columns', 'Date,Colis,Commentaire', '--dry-run'),
      { cwd: dir },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: erp.csv has a column ordercli does not know ("customer.nmae")');
    expect(result.stderr).toContain(
      'erp.csv:1: customer.nmae: is not a column ordercli knows (did you mean customer.name?)',
    );
    // A likely typo is not offered to be left out by name.
    expect(result.stderr).not.toContain('--ignore-columns customer.nmae');
  });

  it('a header mapped to null in --map is left out; --rejects keeps those columns, as the file had them', async () => {
    const dir = tempDir();
    const rows = [...ERP_ROWS, 'ERP-3,2026-11-25,,Bar,404,1,1,sans contact'];
    const input = writeCsv(dir, 'erp.csv', ERP_HEADER, rows);
    writeFileSync(join(dir, 'erp.map.json'), JSON.stringify({ Date: null, Colis: null, Commentaire: null }));
    const result = await runBin(
      cli('orders', 'import', input, '--map', 'erp.map.json', '--skip-invalid', '--rejects', 'rejects.csv'),
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(4);
    expect(postedOrders().map((order) => order.externalId)).toEqual(['ERP-1', 'ERP-2']);
    expect(readFileSync(join(dir, 'rejects.csv'), 'utf8')).toBe(
      `${ERP_HEADER.join(',')}\nERP-3,2026-11-25,,Bar,404,1,1,sans contact\n`,
    );
  });

  it('an Excel workbook: the same flag, and an error cell in a column left out is no problem', async () => {
    const dir = tempDir();
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Commandes');
    sheet.addRow([
      'externalId',
      'Date',
      'contact.internalReferenceId',
      'customer.name',
      'item.internalReferenceId',
      'item.orderedQuantity',
      'Commentaire',
    ]);
    sheet.addRow([
      'XL-1',
      new Date(Date.UTC(2026, 10, 23)),
      301,
      'Maison Rousseau',
      401,
      2,
      { formula: 'NA()', result: { error: '#N/A' } },
    ]);
    sheet.addRow(['XL-2', new Date(Date.UTC(2026, 10, 24)), 302, 'Biocoop', 402, 1, 'à l’accueil']);
    sheet.getColumn(2).numFmt = 'dd/mm/yyyy';
    await workbook.xlsx.writeFile(join(dir, 'commandes.xlsx'));

    const strict = await runBin(cli('orders', 'import', 'commandes.xlsx', '--dry-run'), { cwd: dir });
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('commandes.xlsx:Commandes!B1: Date: is not a column ordercli knows');
    expect(strict.stderr).toContain(
      'hint: if the import does not need these columns, leave them out on purpose: --ignore-columns Date,Commentaire, or map them to null in the --map file ({"Date": null, "Commentaire": null})',
    );

    const result = await runBin(
      cli('orders', 'import', 'commandes.xlsx', '--ignore-columns', 'Date,Commentaire'),
      {
        cwd: dir,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(postedOrders()).toEqual([
      expect.objectContaining({
        externalId: 'XL-1',
        items: [{ internalReferenceId: 401, orderedQuantity: 2 }],
      }),
      expect.objectContaining({
        externalId: 'XL-2',
        items: [{ internalReferenceId: 402, orderedQuantity: 1 }],
      }),
    ]);
    expect(JSON.stringify(postedOrders())).not.toContain('2026-11-23');
  });

  it('applies to CSV and workbooks only, and needs a header name', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'orders.json'), '[]\n');
    const json = await runBin(cli('orders', 'import', 'orders.json', '--ignore-columns', 'Date'), {
      cwd: dir,
    });
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('error: --ignore-columns leaves out columns of a CSV file or workbook;');
    const input = writeCsv(dir, 'erp.csv', ERP_HEADER, ERP_ROWS);
    const empty = await runBin(cli('orders', 'import', input, '--ignore-columns', ' , '), { cwd: dir });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('error: --ignore-columns takes the headers of the columns to leave out');
  });
});

describe('refs contacts import: columns left out on purpose', () => {
  it('shares the column planning: the hint, then --ignore-columns', async () => {
    const dir = tempDir();
    const header =
      'contact.externalReference,contact.firstName,contact.lastName,contact.email,customer.name,Service';
    writeFileSync(
      join(dir, 'contacts.csv'),
      `${header}\nCRM-1,Léa,Martin,lea.martin@example.com,Épicerie Dupont,Achats\n`,
    );
    const strict = await runBin(cli('refs', 'contacts', 'import', 'contacts.csv', '--dry-run'), { cwd: dir });
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain(
      'hint: if the import does not need this column, leave it out on purpose: --ignore-columns Service, or map it to null in the --map file ({"Service": null})',
    );
    const result = await runBin(
      cli('refs', 'contacts', 'import', 'contacts.csv', '--ignore-columns', 'Service'),
      {
        cwd: dir,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const posted = sandbox.requests.filter(
      (request) => request.method === 'POST' && request.path === '/api/v1/contact_references',
    );
    expect(posted.map((request) => request.body)).toEqual([
      {
        contact: {
          externalReference: 'CRM-1',
          firstName: 'Léa',
          lastName: 'Martin',
          email: 'lea.martin@example.com',
        },
        customer: { name: 'Épicerie Dupont' },
      },
    ]);
  });
});
