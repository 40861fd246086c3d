/**
 * Step 2 for Excel workbooks (.xlsx): the layout (which sheet, which row is the header) and the
 * rows, streamed from the sheet's XML (sheet.ts), each as the cells' text Excel shows
 * (cells.ts) with its row number, so that `planColumns`/`groupRows` make orders of them as of
 * CSV rows. Neither the workbook nor its rows are held: each call reads the file again from its
 * start; only the workbook's shared strings are kept while a sheet is read.
 *
 * - The sheet read is `--sheet`, else the first (in tab order) whose header names a known column.
 * - The header is the first row, among the sheet's first ten non-empty rows, that names a known
 *   column; rows above it (a title) are not read.
 * - A merged range reads as its top-left cell in every cell it covers: an externalId merged over
 *   the rows of an order's items names that order on each of its rows.
 * - Rows whose every cell is empty are skipped. A cell holding an error (#N/A), and a value in a
 *   column without a header, are problems of the row, naming the cell.
 */
import type { InputProblem } from '../../../core/errors.js';
import { InputError, UsageError } from '../../../core/errors.js';
import { excerpt, quote } from '../../../io/quote.js';
import type { CsvRow } from '../csv-rows.js';
import { DEFAULT_LIMITS, type InputLimits } from '../limits.js';
import { readWorkbookParts } from './book.js';
import { CellFormatter } from './cells.js';
import { cellReference, rowReference, type SheetRow, sheetRows } from './sheet.js';
import {
  columnLetters,
  type MergedRange,
  mergedRanges,
  readWorkbookZip,
  type WorkbookSheet,
  workbookSheets,
  type ZipEntry,
} from './zip.js';

/** How an Excel workbook input is laid out: the sheet read and its header. */
export interface XlsxLayout {
  /** The sheet read, and every sheet of the workbook in tab order. */
  sheet: string;
  sheets: string[];
  /** The header cells as Excel shows them (before `--map`); a column without header is `''`. */
  header: string[];
  /** The 1-based row of the header (rows above it, such as a title, are not read). */
  headerRow: number;
  /** The zip entry of the sheet's XML. */
  entry: string;
  /** The sheet's merged ranges: each cell of a range reads as the range's top-left cell. */
  merges: MergedRange[];
}

/** Rows looked at, in each sheet, for its header. */
const HEADER_SEARCH_ROWS = 10;

/** How the layout of a workbook is found. */
export interface XlsxLayoutOptions {
  /** `--sheet`: the sheet to read. */
  sheet?: string;
  /** Whether a header cell names a column of the import (after `--map`). */
  isKnownColumn(header: string): boolean;
  /** What the columns are, for the error of a workbook without any (`externalId, contact.email, …`). */
  describeColumns: string;
  /** What the rows hold, for that error (default `orders`). */
  records?: string;
  /** The input's limits: no text of a cell is held past the order limit. */
  limits?: InputLimits;
}

/** How the rows of a sheet are read. */
export interface XlsxReadOptions {
  /** The name of the column at a 0-based index, for problems (its contract path, or its header). */
  columnName?: (index: number) => string | undefined;
  /** The input's limits: no text of a cell is held past the order limit. */
  limits?: InputLimits;
}

/** The workbook's parts the cells refer to, read, and a reader of its sheets' rows with them. */
async function openSheets(
  path: string,
  file: string,
  entries: Map<string, ZipEntry>,
  limits: InputLimits = DEFAULT_LIMITS,
): Promise<(sheet: WorkbookSheet) => AsyncGenerator<SheetRow[]>> {
  const [numfmt, parts] = await Promise.all([
    import('numfmt'),
    readWorkbookParts(path, file, entries, limits),
  ]);
  const formatter = new CellFormatter(numfmt, parts.strings, parts.date1904);
  return (sheet) =>
    sheetRows(path, file, entries.get(sheet.entry)!, { name: sheet.name, parts, formatter, limits });
}

/** Finds the sheet to read and its header row. */
export async function readXlsxLayout(
  path: string,
  file: string,
  options: XlsxLayoutOptions,
): Promise<XlsxLayout> {
  const entries = await readWorkbookZip(path, file);
  const sheets = await workbookSheets(path, file, entries);
  const names = sheets.map((sheet) => sheet.name);
  let wanted: WorkbookSheet[] = sheets;
  if (options.sheet !== undefined) {
    const chosen =
      sheets.find((sheet) => sheet.name === options.sheet) ??
      sheets.find((sheet) => sheet.name.toLowerCase() === options.sheet!.toLowerCase());
    if (!chosen) {
      throw new UsageError(
        `${file} has no sheet named ${quote(options.sheet)}: its sheets are ${names.map((name) => quote(name)).join(', ')}.`,
      );
    }
    wanted = [chosen];
  }
  // Every part read expands to no more than its declared size (readZipEntry checks as it reads).
  const merges = new Map<string, MergedRange[]>();
  for (const sheet of wanted)
    merges.set(sheet.name, await mergedRanges(path, file, entries.get(sheet.entry)!));
  const rowsOf = await openSheets(path, file, entries, options.limits);
  let found: { sheet: WorkbookSheet; header: string[]; row: number } | undefined;
  // The sheets are in tab order: the first with a header is the one read.
  for (const sheet of wanted) {
    const header = await findHeader(rowsOf(sheet), options);
    if (header) {
      found = { sheet, ...header };
      break;
    }
  }
  if (!found) {
    const where =
      options.sheet !== undefined
        ? `its sheet ${quote(options.sheet)} has no header row naming a known column in its first ${HEADER_SEARCH_ROWS} rows`
        : `none of its sheets (${names.map((name) => quote(name)).join(', ')}) has a header row naming a known column in its first ${HEADER_SEARCH_ROWS} rows`;
    throw new InputError(
      `${file} has no ${options.records ?? 'orders'} to read: ${where}; nothing was sent.`,
      [{ file, message: `the header row names the columns: ${options.describeColumns}` }],
    );
  }
  const { sheet, header, row } = found;
  return {
    sheet: sheet.name,
    sheets: names,
    header,
    headerRow: row,
    entry: sheet.entry,
    merges: merges.get(sheet.name)!.filter((range) => range.bottom > row),
  };
}

/** The header among a sheet's first non-empty rows: the first naming a known column. */
async function findHeader(
  batches: AsyncGenerator<SheetRow[]>,
  options: XlsxLayoutOptions,
): Promise<{ header: string[]; row: number } | undefined> {
  let seen = 0;
  // Leaving the loop early stops reading the sheet.
  for await (const rows of batches) {
    for (const row of rows) {
      const cells = row.cells.map((cell) => (typeof cell === 'string' ? cell : ''));
      if (cells.every((cell) => cell.trim() === '')) continue;
      if (cells.some((cell) => options.isKnownColumn(cell.trim()))) {
        while (cells.length > 0 && cells[cells.length - 1]!.trim() === '') cells.pop();
        return { header: cells, row: row.number };
      }
      if (++seen >= HEADER_SEARCH_ROWS) return undefined;
    }
  }
  return undefined;
}

/**
 * The data rows of the layout's sheet (below the header), each with exactly as many cells as the
 * header; empty rows skipped.
 */
export async function* readXlsxRows(
  path: string,
  file: string,
  layout: XlsxLayout,
  options: XlsxReadOptions = {},
): AsyncGenerator<CsvRow> {
  const entries = await readWorkbookZip(path, file);
  if (!entries.has(layout.entry)) {
    // Never silently read nothing: the sheet was found when the layout was read.
    throw new InputError(
      `${file} could not be read: its sheet ${quote(layout.sheet)} was not found again; nothing was sent.`,
    );
  }
  const rowsOf = await openSheets(path, file, entries, options.limits);
  const width = layout.header.length;
  const merges = new MergeFill(layout.merges);
  const columnName = (index: number) =>
    options.columnName?.(index) ??
    (excerpt(layout.header[index]?.trim() ?? '') || `column ${columnLetters(index + 1)}`);
  for await (const rows of rowsOf({ name: layout.sheet, entry: layout.entry })) {
    for (const row of rows) {
      if (row.number <= layout.headerRow) continue;
      const cells: string[] = new Array(width).fill('');
      const problems = placeCells(row, cells, layout, file, columnName);
      merges.fill(row.number, cells);
      if (problems.length === 0 && cells.every((cell) => cell === '')) continue;
      yield problems.length > 0
        ? { cells, line: row.number, endLine: row.number, problems }
        : { cells, line: row.number, endLine: row.number };
    }
  }
}

/**
 * Puts a row's cells under their header in `cells`; an error, or a value under no header, is a
 * problem naming its cell.
 */
function placeCells(
  row: SheetRow,
  cells: string[],
  layout: XlsxLayout,
  file: string,
  columnName: (index: number) => string,
): InputProblem[] {
  const problems: InputProblem[] = [];
  row.cells.forEach((cell, index) => {
    if (cell === '') return;
    const named = index < cells.length && layout.header[index]!.trim() !== '';
    if (typeof cell === 'string' && named) {
      cells[index] = cell;
      return;
    }
    const where = cellReference(layout.sheet, index, row.number);
    if (typeof cell !== 'string') {
      const what = cell.error.startsWith('#') ? `the error ${cell.error}` : cell.error;
      const message = cell.message ?? `holds ${what}, not a value: fix the cell or its formula`;
      problems.push({ file, line: row.number, field: columnName(index), cell: where, message });
    } else {
      // A value without a header still has a field, so that the row's other cells are checked
      // (a problem without one means a row that could not be read).
      const field = `column ${columnLetters(index + 1)}`;
      const message = `${quote(cell)} is in a column without a header: name the column in row ${layout.headerRow}, or clear the cell`;
      problems.push({ file, line: row.number, field, cell: where, message });
    }
  });
  return problems;
}

/**
 * Gives every cell of a merged range the value of its top-left cell, row by row: only the ranges
 * that cover the current row are held.
 */
class MergeFill {
  private readonly pending: MergedRange[];
  private active: { range: MergedRange; value: string }[] = [];

  constructor(ranges: MergedRange[]) {
    this.pending = [...ranges].sort((a, b) => b.top - a.top);
  }

  fill(row: number, cells: string[]): void {
    this.active = this.active.filter((merge) => merge.range.bottom >= row);
    while (this.pending.length > 0 && this.pending[this.pending.length - 1]!.top <= row) {
      const range = this.pending.pop()!;
      if (range.bottom < row) continue;
      // The value sits in the top-left cell; a range whose top row was empty holds nothing.
      this.active.push({ range, value: range.top === row ? (cells[range.left - 1] ?? '') : '' });
    }
    for (const { range, value } of this.active) {
      if (value === '') continue;
      for (let column = range.left; column <= range.right && column <= cells.length; column++) {
        cells[column - 1] = value;
      }
    }
  }
}

/**
 * Where a problem of an order read from `layout` stands: its column's cell, or its row when no
 * column holds its field (`contact`, `items`).
 */
export function problemLocator(
  layout: XlsxLayout,
  columnOfField: (field: string) => number | undefined,
): (problem: InputProblem) => string | undefined {
  return (problem) => {
    if (problem.line === undefined) return undefined;
    const index = problem.field === undefined ? undefined : columnOfField(problem.field);
    return index === undefined
      ? rowReference(layout.sheet, problem.line)
      : cellReference(layout.sheet, index, problem.line);
  };
}
