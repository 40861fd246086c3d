/**
 * Workbooks for the tests, built with exceljs as Excel would save them: a French order sheet
 * (`Commandes`) with a title row, French headers (read through MAP), a zip code stored as a
 * number with the "Code postal" format `00000`, a date, a formula, rich text, a hyperlink and
 * an externalId merged over the rows of an order's items. Also a hand-made zip for the refusals.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';

/** The French headers of the sheet, and what they feed (the `--map` file's content). */
export const MAP: Record<string, string> = {
  'N° commande': 'externalId',
  'Date de commande': 'externalReference',
  Contact: 'contact.internalReferenceId',
  Client: 'customer.name',
  Destinataire: 'deliveryAddress.recipient',
  Adresse: 'deliveryAddress.street',
  'Code postal': 'deliveryAddress.zipCode',
  Ville: 'deliveryAddress.city',
  Pays: 'deliveryAddress.country',
  Article: 'item.internalReferenceId',
  Qté: 'item.orderedQuantity',
};

export const HEADERS = Object.keys(MAP);

/** Excel's "Code postal" special format. */
export const ZIP_FORMAT = '00000';

export type Cell = ExcelJS.CellValue;

/** The rows of the `Commandes` sheet below its header, as built by `frenchOrders`. */
export function frenchOrderRows(): Cell[][] {
  const date = new Date(Date.UTC(2026, 10, 23));
  return [
    // CMD-0001: three items; its N° commande is merged over the three rows (A3:A5).
    [
      'CMD-0001',
      date,
      301,
      'Maison Rousseau',
      'Camille Rousseau',
      '12, rue des Tanneurs',
      1000,
      'Bourg-en-Bresse',
      'FR',
      401,
      { formula: '2*12', result: 24 },
    ],
    [null, null, null, null, null, null, null, null, null, 404, 12],
    [null, null, null, null, null, null, null, null, null, 410, 2],
    [
      'CMD-0002',
      new Date(Date.UTC(2026, 10, 24)),
      302,
      { richText: [{ text: 'Biocoop de ' }, { font: { bold: true }, text: "l'Iroise" }] },
      'Gaëlle Morvan',
      { text: '3 quai de la Douane', hyperlink: 'https://www.openstreetmap.org/' },
      '29200',
      'Brest',
      'FR',
      413,
      4,
    ],
  ];
}

/** The bodies the service must receive for `frenchOrderRows`, field names and types as the interface shows. */
export const FRENCH_BODIES = [
  {
    externalId: 'CMD-0001',
    externalReference: '2026-11-23',
    contact: { internalReferenceId: 301 },
    customer: { name: 'Maison Rousseau' },
    deliveryAddress: {
      recipient: 'Camille Rousseau',
      street: '12, rue des Tanneurs',
      zipCode: '01000',
      city: 'Bourg-en-Bresse',
      country: 'FR',
    },
    items: [
      { internalReferenceId: 401, orderedQuantity: 24 },
      { internalReferenceId: 404, orderedQuantity: 12 },
      { internalReferenceId: 410, orderedQuantity: 2 },
    ],
  },
  {
    externalId: 'CMD-0002',
    externalReference: '2026-11-24',
    contact: { internalReferenceId: 302 },
    customer: { name: "Biocoop de l'Iroise" },
    deliveryAddress: {
      recipient: 'Gaëlle Morvan',
      street: '3 quai de la Douane',
      zipCode: '29200',
      city: 'Brest',
      country: 'FR',
    },
    items: [{ internalReferenceId: 413, orderedQuantity: 4 }],
  },
];

export interface FrenchWorkbookOptions {
  /** Rows below the header (default `frenchOrderRows()`). */
  rows?: Cell[][];
  /** Merge `N° commande` over the rows of CMD-0001 (default true). */
  merge?: boolean;
  /** A first sheet without orders (default true: the reader must pass over it). */
  notesSheet?: boolean;
  sheetName?: string;
}

/** Writes the French order workbook to `dir/name`; returns its path. */
export async function writeFrenchOrders(
  dir: string,
  name = 'commandes.xlsx',
  options: FrenchWorkbookOptions = {},
): Promise<string> {
  const workbook = new ExcelJS.Workbook();
  if (options.notesSheet ?? true) {
    const notes = workbook.addWorksheet('Notes');
    notes.addRow(['Commandes à passer avant jeudi midi.']);
    notes.addRow(['Contact : Émilie, poste 214']);
  }
  const sheet = workbook.addWorksheet(options.sheetName ?? 'Commandes');
  sheet.addRow(['Commandes de la semaine 48']);
  sheet.mergeCells('A1:F1');
  sheet.addRow(HEADERS);
  for (const row of options.rows ?? frenchOrderRows()) sheet.addRow(row);
  sheet.getColumn(2).numFmt = 'dd/mm/yyyy';
  sheet.getColumn(7).numFmt = ZIP_FORMAT;
  // The header row keeps the General format.
  sheet.getCell('B2').numFmt = 'General';
  sheet.getCell('G2').numFmt = 'General';
  if (options.merge ?? true) sheet.mergeCells('A3:A5');
  const path = join(dir, name);
  await workbook.xlsx.writeFile(path);
  return path;
}

/** Writes the `--map` file of the French headers; returns its path. */
export function writeMap(dir: string): string {
  const path = join(dir, 'colonnes.json');
  writeFileSync(path, JSON.stringify(MAP));
  return path;
}

/** Reads a workbook's first sheet back as rows of values (exceljs, the whole file: tests only). */
export async function readSheet(path: string): Promise<{ name: string; rows: unknown[][] }> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(path);
  const sheet = workbook.worksheets[0]!;
  const rows: unknown[][] = [];
  sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  return { name: sheet.name, rows };
}

/** A zip file of the given entries (stored deflated), for workbooks that must be refused. */
export function writeZip(
  path: string,
  entries: Record<string, Buffer | string>,
  /** Sizes the directory declares instead of the true ones (a lying zip). */
  declared: Record<string, number> = {},
): void {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(entries)) {
    const data = Buffer.from(content);
    const packed = deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(declared[name] ?? data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(entries).length, 8);
  end.writeUInt16LE(Object.keys(entries).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  writeFileSync(path, Buffer.concat([...locals, directory, end]));
}
