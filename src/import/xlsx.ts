/**
 * Step 2 for Excel workbooks (.xlsx): the layout (which sheet, which row is the header) and the
 * rows, streamed by exceljs's WorkbookReader, each as the cells' text Excel shows (xlsx-cells.ts)
 * with its row number, so that `planColumns`/`groupRows` make orders of them as of CSV rows.
 * Neither the workbook nor its rows are held: each call reads the file again from its start.
 *
 * - The sheet read is `--sheet`, else the first (in tab order) whose header names a known column.
 * - The header is the first row, among the sheet's first ten non-empty rows, that names a known
 *   column; rows above it (a title) are not read.
 * - A merged range reads as its top-left cell in every cell it covers: an externalId merged over
 *   the rows of an order's items names that order on each of its rows.
 * - Rows whose every cell is empty are skipped. A cell holding an error (#N/A), and a value in a
 *   column without a header, are problems of the row, naming the cell.
 */
import type { InputProblem } from '../core/errors.js';
import { InputError, UsageError } from '../core/errors.js';
import { excerpt, quote } from '../io/quote.js';
import type { CsvRow } from './csv.js';
import type { XlsxLayout } from './types.js';
import { CellFormatter } from './xlsx-cells.js';
import {
  checkZipEntry,
  columnLetters,
  LEADING_PARTS,
  type MergedRange,
  mergedRanges,
  readWorkbookZip,
  type WorkbookSheet,
  workbookSheets,
  workbookStream,
} from './xlsx-zip.js';

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
}

/** How the rows of a sheet are read. */
export interface XlsxReadOptions {
  /** The name of the column at a 0-based index, for problems (its contract path, or its header). */
  columnName?: (index: number) => string | undefined;
}

/** One exceljs row of the streaming reader, as much of it as is read here. */
interface SheetRow {
  number: number;
  eachCell(
    options: { includeEmpty: boolean },
    visit: (cell: { value: unknown; numFmt?: string }, column: number) => void,
  ): void;
}

interface SheetReader extends AsyncIterable<SheetRow> {
  name: string;
}

interface Libraries {
  ExcelJS: typeof import('exceljs');
  formatter: CellFormatter;
}

async function libraries(): Promise<Libraries> {
  const [excel, numfmt] = await Promise.all([import('exceljs'), import('numfmt')]);
  const ExcelJS = (excel as { default?: typeof import('exceljs') }).default ?? excel;
  return { ExcelJS, formatter: new CellFormatter(numfmt) };
}

/** The given sheets of a workbook (zip entries), in that order, each streamed row by row. */
async function* worksheets(
  path: string,
  file: string,
  ExcelJS: typeof import('exceljs'),
  sheetEntries: string[],
): AsyncGenerator<SheetReader> {
  const entries = await readWorkbookZip(path, file);
  const input = workbookStream(path, file, entries, sheetEntries);
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    // A hyperlink's cell holds the text it shows, which is what is read.
    hyperlinks: 'ignore',
    styles: 'cache',
    entries: 'ignore',
  });
  try {
    for await (const sheet of reader as AsyncIterable<unknown>) yield sheet as SheetReader;
  } catch (error) {
    if (error instanceof InputError || error instanceof UsageError) throw error;
    throw new InputError(
      `${file} could not be read as an Excel workbook (${excerpt((error as Error).message ?? String(error), 120)}); nothing was sent.`,
    );
  } finally {
    // A read stopped early (the header found, the sheet read) closes the file.
    input.destroy();
  }
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
  // Every part exceljs will read expands to no more than its declared size (mergedRanges reads
  // a sheet to its end with the same check).
  for (const name of LEADING_PARTS) {
    const entry = entries.get(name);
    if (entry) await checkZipEntry(path, file, entry);
  }
  const merges = new Map<string, MergedRange[]>();
  for (const sheet of wanted)
    merges.set(sheet.name, await mergedRanges(path, file, entries.get(sheet.entry)!));
  const { ExcelJS, formatter } = await libraries();
  const headers = new Map<string, { header: string[]; row: number }>();
  const scanned = wanted.map((sheet) => sheet.entry);
  for await (const sheet of worksheets(path, file, ExcelJS, scanned)) {
    let seen = 0;
    for await (const row of sheet) {
      const cells = rowCells(row, formatter).map((cell) => ('text' in cell ? cell.text : ''));
      if (cells.every((cell) => cell.trim() === '')) continue;
      if (cells.some((cell) => options.isKnownColumn(cell.trim()))) {
        while (cells.length > 0 && cells[cells.length - 1]!.trim() === '') cells.pop();
        headers.set(sheet.name, { header: cells, row: row.number });
        break;
      }
      if (++seen >= HEADER_SEARCH_ROWS) break;
    }
    // The sheets come in tab order: the first with a header is the one read.
    if (headers.size > 0) break;
  }
  const chosen = wanted.find((sheet) => headers.has(sheet.name));
  if (!chosen) {
    const where =
      options.sheet !== undefined
        ? `its sheet ${quote(options.sheet)} has no header row naming a known column in its first ${HEADER_SEARCH_ROWS} rows`
        : `none of its sheets (${names.map((name) => quote(name)).join(', ')}) has a header row naming a known column in its first ${HEADER_SEARCH_ROWS} rows`;
    throw new InputError(
      `${file} has no ${options.records ?? 'orders'} to read: ${where}; nothing was sent.`,
      [{ file, message: `the header row names the columns: ${options.describeColumns}` }],
    );
  }
  const { header, row } = headers.get(chosen.name)!;
  return {
    sheet: chosen.name,
    sheets: names,
    header,
    headerRow: row,
    entry: chosen.entry,
    merges: merges.get(chosen.name)!.filter((range) => range.bottom > row),
  };
}

/** The cells of an exceljs row as text or error, from column A to its last cell. */
function rowCells(row: SheetRow, formatter: CellFormatter): ReturnType<CellFormatter['text']>[] {
  const cells: ReturnType<CellFormatter['text']>[] = [];
  row.eachCell({ includeEmpty: false }, (cell, column) => {
    while (cells.length < column - 1) cells.push({ text: '' });
    cells[column - 1] = formatter.text(cell.value, cell.numFmt);
  });
  return cells;
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
  const { ExcelJS, formatter } = await libraries();
  const width = layout.header.length;
  const merges = new MergeFill(layout.merges);
  const columnName = (index: number) =>
    options.columnName?.(index) ??
    (excerpt(layout.header[index]?.trim() ?? '') || `column ${columnLetters(index + 1)}`);
  for await (const sheet of worksheets(path, file, ExcelJS, [layout.entry])) {
    for await (const row of sheet) {
      if (row.number <= layout.headerRow) continue;
      const read = rowCells(row, formatter);
      const cells: string[] = new Array(width).fill('');
      const problems: InputProblem[] = [];
      read.forEach((cell, index) => {
        if ('error' in cell) {
          problems.push({
            file,
            line: row.number,
            field: columnName(index),
            cell: cellReference(layout.sheet, index, row.number),
            message: `holds ${cell.error.startsWith('#') ? `the error ${cell.error}` : cell.error}, not a value: fix the cell or its formula`,
          });
          return;
        }
        if (cell.text === '') return;
        if (index < width && layout.header[index]!.trim() !== '') cells[index] = cell.text;
        else {
          // A field, so that the row's other cells are still checked (a problem without one
          // means a row that could not be read).
          problems.push({
            file,
            line: row.number,
            field: `column ${columnLetters(index + 1)}`,
            cell: cellReference(layout.sheet, index, row.number),
            message: `${quote(cell.text)} is in a column without a header: name the column in row ${layout.headerRow}, or clear the cell`,
          });
        }
      });
      merges.fill(row.number, cells);
      if (problems.length === 0 && cells.every((cell) => cell === '')) continue;
      yield problems.length > 0
        ? { cells, line: row.number, endLine: row.number, problems }
        : { cells, line: row.number, endLine: row.number };
    }
    return;
  }
  // Never silently read nothing: the sheet was found when the layout was read.
  throw new InputError(
    `${file} could not be read: its sheet ${quote(layout.sheet)} was not found again; nothing was sent.`,
  );
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
