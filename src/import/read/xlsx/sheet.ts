/**
 * The rows of a sheet, streamed from its XML with saxes: each row's number and its cells' text as
 * Excel shows it (cells.ts), from column A to its last non-empty cell. Nothing of the sheet
 * is held but the rows of the chunk being read; reading stops at the end of `<sheetData>` (the
 * merged ranges and links that follow are not needed here).
 */
import type { SaxesTagPlain } from 'saxes';
import { localName, parseXmlEntry, type WorkbookParts, type XmlParser } from './book.js';
import type { CellFormatter, CellText, StoredCell } from './cells.js';
import type { ZipEntry } from './zip.js';

/** One row of a sheet: its number (1-based) and its cells, `''` where a cell is empty. */
export interface SheetRow {
  number: number;
  cells: CellText[];
}

/**
 * The rows of a sheet's XML entry, in the order the sheet stores them, in batches: the rows of
 * each chunk of XML read (a few hundred), so that a million rows are not a million promises.
 */
export async function* sheetRows(
  path: string,
  file: string,
  entry: ZipEntry,
  parts: WorkbookParts,
  formatter: CellFormatter,
): AsyncGenerator<SheetRow[]> {
  const reader = new SheetXmlReader(parts.formats, formatter);
  for await (const _ of parseXmlEntry(path, file, entry, (parser) => reader.listen(parser))) {
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

  constructor(
    private readonly formats: (string | undefined)[],
    private readonly formatter: CellFormatter,
  ) {}

  listen(parser: XmlParser): void {
    parser.on('opentag', (tag) => this.open(tag));
    const append = (text: string) => {
      if (this.text === VALUE && this.phonetic === 0) this.cell.value += text;
    };
    parser.on('text', append);
    parser.on('cdata', append);
    parser.on('closetag', (tag) => this.close(tag));
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
        this.rows.push({ number: this.rowNumber, cells: this.cells });
        break;
      case 'sheetData':
        this.inSheetData = false;
        this.finished = true;
        break;
    }
  }

  /** `r` is optional: a row without it follows the one before. */
  private openRow(tag: SaxesTagPlain): void {
    const number = Number.parseInt(tag.attributes.r ?? '', 10);
    this.rowNumber = number > 0 ? number : this.rowNumber + 1;
    // A row's style gives its format to its cells that have none of their own.
    const style = Number.parseInt(tag.attributes.s ?? '', 10);
    this.rowFormat = style >= 0 && style < this.formats.length ? this.formats[style] : undefined;
    this.cells = [];
    this.column = 0;
  }

  /** `r` is optional too: a cell without it follows the one before in its row. */
  private openCell(tag: SaxesTagPlain): void {
    const { r, s, t } = tag.attributes;
    const column = r === undefined ? 0 : columnOf(r);
    this.column = column > 0 ? column : this.column + 1;
    // Cells are placed in an array: a column past Excel's last (XFD) is a damaged sheet.
    if (this.column > MAX_COLUMN) throw new Error(`a cell beyond column XFD (${r ?? this.column})`);
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
    if (text === undefined || text === '') return;
    const cells = this.cells;
    while (cells.length < this.column - 1) cells.push('');
    cells[this.column - 1] = text;
  }
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
