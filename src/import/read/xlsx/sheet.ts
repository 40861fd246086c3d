/**
 * The rows of a sheet, streamed from its XML with saxes: each row's number and its cells' text as
 * Excel shows it (cells.ts), from column A to its last non-empty cell. Nothing of the sheet
 * is held but the rows of the chunk being read; reading stops at the end of `<sheetData>` (the
 * merged ranges and links that follow are not needed here).
 *
 * A sheet that no spreadsheet writes is refused, naming the row or cell, rather than read in a
 * way of our own: a row or a cell stored twice or out of order (adding an item twice, or a value
 * replacing another), a cell outside its row, a shared string the workbook does not have, bytes
 * that are not UTF-8, and a text or a row over the order limit (which would be held whole).
 */
import type { SaxesTagPlain } from 'saxes';
import type { InputLimits } from '../limits.js';
import { localName, parseXmlEntry, tooLongText, type WorkbookParts, type XmlParser } from './book.js';
import type { CellFormatter, CellText, StoredCell } from './cells.js';
import { columnLetters, damagedWorkbook, type ZipEntry } from './zip.js';

/** One row of a sheet: its number (1-based) and its cells, `''` where a cell is empty. */
export interface SheetRow {
  number: number;
  cells: CellText[];
}

/** What reading a sheet needs: its name (for problems), the workbook's parts, the limits. */
export interface SheetReading {
  name: string;
  parts: WorkbookParts;
  formatter: CellFormatter;
  limits: InputLimits;
}

/** A sheet's name as a reference names it: `Commandes`, or `'Mes commandes'` when it needs quotes. */
export function sheetReference(sheet: string): string {
  return /^[\p{L}_][\p{L}\p{N}_.]*$/u.test(sheet) ? sheet : `'${sheet.replace(/'/g, "''")}'`;
}

/** `Commandes!D4` for 0-based column 3 of row 4. */
export function cellReference(sheet: string, columnIndex: number, row: number): string {
  return `${sheetReference(sheet)}!${columnLetters(columnIndex + 1)}${row}`;
}

/** `Commandes!4:4`: a whole row. */
export function rowReference(sheet: string, row: number): string {
  return `${sheetReference(sheet)}!${row}:${row}`;
}

/**
 * The rows of a sheet's XML entry, in the order the sheet stores them, in batches: the rows of
 * each chunk of XML read (a few hundred), so that a million rows are not a million promises.
 */
export async function* sheetRows(
  path: string,
  file: string,
  entry: ZipEntry,
  sheet: SheetReading,
): AsyncGenerator<SheetRow[]> {
  const reader = new SheetXmlReader(file, entry, sheet);
  const reading = {
    maxRun: sheet.limits.maxOrderBytes,
    tooLong: () => reader.tooLong(),
    notUtf8: (offset: number) => reader.notUtf8(offset),
  };
  for await (const _ of parseXmlEntry(path, file, entry, (parser) => reader.listen(parser), reading)) {
    const rows = reader.take();
    if (rows.length > 0) yield rows;
    if (reader.finished) return;
  }
}

/** Excel's last column, XFD. */
const MAX_COLUMN = 16_384;

/** Where the text of the XML goes: nowhere, or into the current cell's value. */
const IGNORED = 0;
const VALUE = 1;

/**
 * The state of a sheet's XML as saxes reports it: the row and the cell being read. A cell is
 * `<c r="B3" s="1" t="s"><f>…</f><v>…</v></c>`, or `<c t="inlineStr"><is><t>…</t></is></c>`.
 */
class SheetXmlReader {
  finished = false;
  private rows: SheetRow[] = [];
  private inSheetData = false;
  private rowNumber = 0;
  private rowFormat: string | undefined;
  private cells: CellText[] = [];
  private column = 0;
  /** Whether a row, and a cell of it, is open: where a problem of the XML stands. */
  private inRow = false;
  private inCell = false;
  /** Characters of text in the row's cells so far: a row is held whole until it ends. */
  private rowText = 0;
  /** The cell being read, reused from one cell to the next. */
  private readonly cell: StoredCell = {
    type: undefined,
    value: undefined,
    formula: false,
    format: undefined,
  };
  private text = IGNORED;
  /** Depth of phonetic guides (`<rPh>`) in an inline string: their text is not shown. */
  private phonetic = 0;

  private readonly formats: (string | undefined)[];
  private readonly formatter: CellFormatter;
  private readonly limits: InputLimits;
  private readonly sheet: string;

  constructor(
    private readonly file: string,
    private readonly entry: ZipEntry,
    { name, parts, formatter, limits }: SheetReading,
  ) {
    this.formats = parts.formats;
    this.formatter = formatter;
    this.limits = limits;
    this.sheet = name;
  }

  listen(parser: XmlParser): void {
    parser.on('opentag', (tag) => this.open(tag));
    const append = (text: string) => {
      if (this.text !== VALUE || this.phonetic !== 0) return;
      this.cell.value += text;
      // Each run of rich text is within the limit; together they must be too.
      if (this.cell.value!.length > this.limits.maxOrderBytes) this.tooLong();
    };
    parser.on('text', append);
    parser.on('cdata', append);
    parser.on('closetag', (tag) => this.close(tag));
  }

  /** Refuses the workbook for a text over the order limit, where it stands. */
  tooLong(): never {
    throw tooLongText(this.file, this.where(), this.limits);
  }

  /** Refuses the workbook for bytes that are not UTF-8, where they stand. */
  notUtf8(offset: number): never {
    throw damagedWorkbook(
      this.file,
      `${this.where()} holds bytes that are not UTF-8 (at byte ${offset} of ${this.entry.name})`,
    );
  }

  /** The cell, row or part being read. */
  private where(): string {
    if (this.inCell) return this.cellReference(this.column);
    if (this.inRow) return rowReference(this.sheet, this.rowNumber);
    return `its sheet ${sheetReference(this.sheet)} (${this.entry.name})`;
  }

  private cellReference(column: number): string {
    return cellReference(this.sheet, column - 1, this.rowNumber);
  }

  private damaged(what: string): never {
    throw damagedWorkbook(this.file, what);
  }

  /** The rows read since the last call. */
  take(): SheetRow[] {
    const rows = this.rows;
    if (rows.length > 0) this.rows = [];
    return rows;
  }

  private open(tag: SaxesTagPlain): void {
    const name = localName(tag);
    if (!this.inSheetData) {
      if (name === 'sheetData') this.inSheetData = true;
      return;
    }
    switch (name) {
      case 'row':
        this.openRow(tag);
        break;
      case 'c':
        this.openCell(tag);
        break;
      case 'f':
        this.cell.formula = true;
        break;
      case 'v':
        this.cell.value = '';
        this.text = VALUE;
        break;
      case 'is':
        // An inline string: the text of its `<t>` elements.
        this.cell.value = '';
        break;
      case 't':
        if (this.cell.value !== undefined) this.text = VALUE;
        break;
      case 'rPh':
        this.phonetic++;
        break;
    }
  }

  private close(tag: SaxesTagPlain): void {
    if (!this.inSheetData) return;
    switch (localName(tag)) {
      case 'v':
      case 't':
        this.text = IGNORED;
        break;
      case 'rPh':
        this.phonetic--;
        break;
      case 'c':
        this.closeCell();
        break;
      case 'row':
        this.inRow = false;
        this.rows.push({ number: this.rowNumber, cells: this.cells });
        break;
      case 'sheetData':
        this.inSheetData = false;
        this.finished = true;
        break;
    }
  }

  /**
   * `r` is optional: a row without it follows the one before. A row stored twice (read twice, its
   * items sent twice) or before one it follows is refused.
   */
  private openRow(tag: SaxesTagPlain): void {
    const number = Number.parseInt(tag.attributes.r ?? '', 10);
    const previous = this.rowNumber;
    this.rowNumber = number > 0 ? number : previous + 1;
    this.inRow = true;
    if (this.rowNumber <= previous) {
      this.damaged(
        this.rowNumber === previous
          ? `${rowReference(this.sheet, this.rowNumber)} is stored twice in the sheet`
          : `${rowReference(this.sheet, this.rowNumber)} is stored after row ${previous} (rows out of order)`,
      );
    }
    this.rowText = 0;
    // A row's style gives its format to its cells that have none of their own.
    const style = Number.parseInt(tag.attributes.s ?? '', 10);
    this.rowFormat = style >= 0 && style < this.formats.length ? this.formats[style] : undefined;
    this.cells = [];
    this.column = 0;
  }

  /**
   * `r` is optional too: a cell without it follows the one before in its row. A cell stored twice
   * (whose value would replace the other), before one it follows, or outside its row is refused.
   */
  private openCell(tag: SaxesTagPlain): void {
    const { r, s, t } = tag.attributes;
    const column = r === undefined ? 0 : columnOf(r);
    const previous = this.column;
    this.column = column > 0 ? column : previous + 1;
    // Cells are placed in an array: a column past Excel's last (XFD) is a damaged sheet.
    if (this.column > MAX_COLUMN) throw new Error(`a cell beyond column XFD (${r ?? this.column})`);
    this.inCell = true;
    if (this.column <= previous) {
      this.damaged(
        this.column === previous
          ? `${this.cellReference(this.column)} is stored twice in its row`
          : `${this.cellReference(this.column)} is stored after ${columnLetters(previous)}${this.rowNumber} (cells out of order)`,
      );
    }
    const row = r === undefined ? Number.NaN : rowOf(r);
    if (!Number.isNaN(row) && row !== this.rowNumber) {
      this.damaged(`the cell ${sheetReference(this.sheet)}!${r} is stored in row ${this.rowNumber}`);
    }
    // Style 0 (the default) leaves a cell the format of its row, as a cell without a style.
    const style = Number.parseInt(s ?? '', 10);
    const cell = this.cell;
    cell.type = t;
    cell.value = undefined;
    cell.formula = false;
    cell.format = style > 0 && style < this.formats.length ? this.formats[style] : this.rowFormat;
    this.text = IGNORED;
    this.phonetic = 0;
  }

  private closeCell(): void {
    const text = this.formatter.text(this.cell);
    this.text = IGNORED;
    if (text === undefined || text === '') {
      this.inCell = false;
      return;
    }
    if (typeof text !== 'string' && text.damaged)
      this.damaged(`${this.cellReference(this.column)} ${text.error}`);
    this.rowText += typeof text === 'string' ? text.length : 0;
    if (this.rowText > this.limits.maxOrderBytes) this.tooLong();
    this.inCell = false;
    const cells = this.cells;
    while (cells.length < this.column - 1) cells.push('');
    cells[this.column - 1] = text;
  }
}

/** The row of a cell reference: `B3` → 3; NaN when it has none after its letters. */
function rowOf(reference: string): number {
  const digits = /^[A-Za-z]*\$?(\d+)$/.exec(reference.replace(/^\$/, ''))?.[1];
  return digits === undefined ? Number.NaN : Number(digits);
}

/** The column of a cell reference: `B3` → 2, `AB12` → 28; 0 when it has no letters. */
function columnOf(reference: string): number {
  let column = 0;
  for (let i = 0; i < reference.length && column <= MAX_COLUMN; i++) {
    const code = reference.charCodeAt(i) | 0x20;
    if (code < 0x61 || code > 0x7a) break;
    column = column * 26 + (code - 0x60);
  }
  return column;
}
