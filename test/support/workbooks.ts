/**
 * Workbooks for the tests, built with exceljs as Excel would save them: a French order sheet
 * (`Commandes`) with a title row, French headers (read through MAP), a zip code stored as a
 * number with the "Code postal" format `00000`, a date, a formula, rich text, a hyperlink and
 * an externalId merged over the rows of an order's items. Also a hand-made zip for the refusals.
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
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

/**
 * Text given in pieces, where `{ char, count }` is `count` times one ASCII character: a part of
 * gigabytes described in a few bytes (see `writeZip`).
 */
export type Pieces = (string | Buffer | { char: string; count: number })[];

/**
 * A raw deflate stream written bit by bit with the fixed Huffman codes: literals, and a run of
 * one byte as copies of 258 bytes at distance 1 (13 bits each, so a run expands about 159 times:
 * under the ratio a zip bomb is refused at). Every 8 copies end on a byte boundary of the same
 * state, so long runs are written by repeating those 13 bytes.
 */
class FixedDeflate {
  private readonly chunks: Buffer[] = [];
  private pending: number[] = [];
  private bits = 0;
  private count = 0;
  /** The bytes it inflates to. */
  size = 0;

  constructor() {
    this.write(1, 1); // the last block
    this.write(1, 2); // fixed Huffman codes
  }

  private write(value: number, n: number): void {
    this.bits |= value << this.count;
    this.count += n;
    while (this.count >= 8) {
      this.pending.push(this.bits & 0xff);
      this.bits >>>= 8;
      this.count -= 8;
    }
  }

  /** A Huffman code, its most significant bit first. */
  private code(code: number, n: number): void {
    let reversed = 0;
    for (let i = 0; i < n; i++) reversed |= ((code >> i) & 1) << (n - 1 - i);
    this.write(reversed, n);
  }

  private flush(): void {
    this.chunks.push(Buffer.from(this.pending));
    this.pending = [];
  }

  private literal(byte: number): void {
    if (byte < 144) this.code(0x30 + byte, 8);
    else this.code(0x190 + byte - 144, 9);
    this.size++;
  }

  private copy(): void {
    this.code(0xc5, 8); // length 258: symbol 285
    this.write(0, 5); // distance 1: code 0
    this.size += 258;
  }

  add(piece: Pieces[number]): void {
    if (typeof piece === 'string' || Buffer.isBuffer(piece)) {
      for (const byte of Buffer.from(piece)) this.literal(byte);
      return;
    }
    const byte = piece.char.charCodeAt(0);
    this.literal(byte);
    let copies = Math.floor((piece.count - 1) / 258);
    // Two rounds of 8 copies by hand; from then on each round writes the same 13 bytes.
    for (let round = 0; round < 2 && copies >= 8; round++, copies -= 8) {
      this.flush();
      for (let i = 0; i < 8; i++) this.copy();
    }
    if (copies >= 8) {
      const round = Buffer.from(this.pending.slice(-13));
      const rounds = Math.floor(copies / 8);
      this.flush();
      this.chunks.push(Buffer.alloc(rounds * 13, round));
      this.size += rounds * 8 * 258;
      copies -= rounds * 8;
    }
    for (; copies > 0; copies--) this.copy();
    for (let left = (piece.count - 1) % 258; left > 0; left--) this.literal(byte);
  }

  end(): Buffer {
    this.code(0, 7); // end of block
    if (this.count > 0) this.write(0, 8 - this.count);
    this.flush();
    return Buffer.concat(this.chunks);
  }
}

/**
 * A zip file of the given parts (deflated), for workbooks that must be refused. A part given in
 * pieces is deflated by `FixedDeflate`: a workbook whose parts expand to gigabytes, each about 150
 * times, written in a moment without its text ever being held.
 */
export function writeZip(
  path: string,
  parts: Record<string, string | Buffer | Pieces>,
  /** Sizes the directory declares instead of the true ones (a lying zip). */
  declared: Record<string, number> = {},
): void {
  const fd = openSync(path, 'w');
  try {
    const centrals: Buffer[] = [];
    let offset = 0;
    for (const [name, content] of Object.entries(parts)) {
      let data: Buffer;
      let size: number;
      if (Array.isArray(content)) {
        const deflate = new FixedDeflate();
        for (const piece of content) deflate.add(piece);
        data = deflate.end();
        size = deflate.size;
      } else {
        data = deflateRawSync(Buffer.from(content));
        size = Buffer.byteLength(content);
      }
      const nameBytes = Buffer.from(name);
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(8, 8);
      local.writeUInt32LE(data.length, 18);
      local.writeUInt32LE(size, 22);
      local.writeUInt16LE(nameBytes.length, 26);
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE(20, 4);
      central.writeUInt16LE(20, 6);
      central.writeUInt16LE(8, 10);
      central.writeUInt32LE(data.length, 20);
      central.writeUInt32LE(declared[name] ?? size, 24);
      central.writeUInt16LE(nameBytes.length, 28);
      central.writeUInt32LE(offset, 42);
      writeSync(fd, Buffer.concat([local, nameBytes, data]));
      centrals.push(central, nameBytes);
      offset += 30 + nameBytes.length + data.length;
    }
    const directory = Buffer.concat(centrals);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(centrals.length / 2, 8);
    end.writeUInt16LE(centrals.length / 2, 10);
    end.writeUInt32LE(directory.length, 12);
    end.writeUInt32LE(offset, 16);
    writeSync(fd, Buffer.concat([directory, end]));
  } finally {
    closeSync(fd);
  }
}

const SPREADSHEET_NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const RELATIONSHIPS_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** The contract columns of a hand-made order sheet, A to F. */
export const HAND_MADE_HEADER = [
  'externalId',
  'contact.internalReferenceId',
  'customer.name',
  'deliveryAddress.street',
  'item.internalReferenceId',
  'item.orderedQuantity',
];

/** A cell of a hand-made sheet: a shared string (`s`), a number, or an inline string. */
export const xmlCell = {
  shared: (ref: string, index: number | string) => `<c r="${ref}" t="s"><v>${index}</v></c>`,
  number: (ref: string, value: number) => `<c r="${ref}"><v>${value}</v></c>`,
  inline: (ref: string, text: string) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`,
};

/** The shared strings of `handMadeOrderRow`: externalId, customer and street of order 1. */
export const HAND_MADE_STRINGS = ['SO-1', 'Maison Rousseau', '12 rue des Halles'];

/** Row `row` of a valid order (SO-1, contact 301, item 401 × 1), its strings shared as Excel writes them. */
export function handMadeOrderRow(row: number, cells: string[] = []): string {
  return `<row r="${row}">${[
    xmlCell.shared(`A${row}`, 0),
    xmlCell.number(`B${row}`, 301),
    xmlCell.shared(`C${row}`, 1),
    xmlCell.shared(`D${row}`, 2),
    xmlCell.number(`E${row}`, 401),
    xmlCell.number(`F${row}`, 1),
    ...cells,
  ].join('')}</row>`;
}

export interface HandMadeWorkbook {
  /** The rows of the `Commandes` sheet below its header (row 1), as XML. */
  rows: string | Pieces;
  /** The `<si>` texts (default HAND_MADE_STRINGS), or the whole part in pieces. */
  strings?: (string | Buffer)[] | Pieces;
  /** Sheets before `Commandes` in tab order, each with the same header and the rows given. */
  before?: Record<string, string | Pieces>;
  /** Parts left out of the zip. */
  without?: string[];
}

/**
 * A workbook written by hand, part by part, as a tool other than Excel might: one sheet of
 * orders (`Commandes`, the contract's columns in row 1) whose XML the test gives, and its shared
 * strings. Returns its path.
 */
export function writeHandMadeWorkbook(dir: string, book: HandMadeWorkbook, name = 'orders.xlsx'): string {
  const names = [...Object.keys(book.before ?? {}), 'Commandes'];
  const header = `<row r="1">${HAND_MADE_HEADER.map((column, i) => xmlCell.inline(`${String.fromCharCode(65 + i)}1`, column)).join('')}</row>`;
  const sheetXml = (rows: string | Pieces): Pieces => [
    `<?xml version="1.0" encoding="UTF-8"?><worksheet ${SPREADSHEET_NS}><sheetData>${header}`,
    ...(typeof rows === 'string' ? [rows] : rows),
    '</sheetData></worksheet>',
  ];
  const strings = book.strings ?? HAND_MADE_STRINGS;
  const parts: Record<string, string | Buffer | Pieces> = {
    'xl/workbook.xml': `<workbook ${SPREADSHEET_NS} xmlns:r="${RELATIONSHIPS_NS}"><sheets>${names.map((sheet, i) => `<sheet name="${sheet}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${names.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${RELATIONSHIPS_NS}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('')}</Relationships>`,
    'xl/sharedStrings.xml': strings.some((piece) => typeof piece === 'object' && !Buffer.isBuffer(piece))
      ? (strings as Pieces)
      : Buffer.concat([
          Buffer.from(`<sst ${SPREADSHEET_NS}>`),
          ...(strings as (string | Buffer)[]).flatMap((text) => [
            Buffer.from('<si><t>'),
            Buffer.from(text),
            Buffer.from('</t></si>'),
          ]),
          Buffer.from('</sst>'),
        ]),
  };
  Object.values(book.before ?? {}).forEach((rows, i) => {
    parts[`xl/worksheets/sheet${i + 1}.xml`] = sheetXml(rows);
  });
  parts[`xl/worksheets/sheet${names.length}.xml`] = sheetXml(book.rows);
  for (const part of book.without ?? []) delete parts[part];
  const path = join(dir, name);
  writeZip(path, parts);
  return path;
}
