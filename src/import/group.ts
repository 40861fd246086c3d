/**
 * Step 3 for CSV: rows become orders. One row per item; adjacent rows with the same `externalId`
 * form one order, whose order-level cells are those of its first row (later rows leave them
 * empty or repeat them). Cells stay text, except the seed's integer fields, which are converted.
 * Only the rows of the order being built are held in memory.
 */
import type { InputProblem } from '../cli/errors.js';
import { CSV_COLUMNS, type CsvColumn } from './columns.js';
import type { CsvRow } from './csv.js';
import type { SourceOrder } from './types.js';

/** What a cell converts to, or why it does not. */
type Converted = { value: string | number } | { problem: string };

const WHOLE_NUMBER = /^\d+$/;

/** Converts one cell by the kind of its column; an empty cell never reaches here (it means absent). */
export function convertCell(cell: string, column: CsvColumn): Converted {
  if (column.kind === 'text') return { value: cell };
  const trimmed = cell.trim();
  if (WHOLE_NUMBER.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return { value: Number(trimmed) };
  if (column.kind === 'integerOrText') return { value: cell };
  return { problem: `must be a whole number above zero, not ${JSON.stringify(cell)}` };
}

/** Orders built from the rows of a CSV file, in file order. */
export async function* groupRows(
  rows: AsyncIterable<CsvRow>,
  columns: CsvColumn[],
  header: string[],
  file: string,
): AsyncGenerator<SourceOrder> {
  // In the contract's order, so that bodies list their fields the same way whatever the file's order.
  const canonical = [...columns].sort((a, b) => CSV_COLUMNS.indexOf(a.path) - CSV_COLUMNS.indexOf(b.path));
  const shape: RowShape = {
    file,
    header,
    orderColumns: canonical.filter((column) => column.level === 'order'),
    itemColumns: canonical.filter((column) => column.level === 'item'),
  };
  const externalIdColumn = columns.find((column) => column.path === 'externalId');
  let current: OrderInProgress | undefined;
  let index = 0;
  for await (const row of rows) {
    const externalId = externalIdColumn ? nonEmpty(row.cells[externalIdColumn.index]) : undefined;
    if (current === undefined || externalId === undefined || externalId !== current.externalId) {
      if (current) yield current.finish();
      current = new OrderInProgress(index++, externalId, row, shape);
    } else {
      current.addRow(row);
    }
  }
  if (current) yield current.finish();
}

interface RowShape {
  file: string;
  header: string[];
  orderColumns: CsvColumn[];
  itemColumns: CsvColumn[];
}

function nonEmpty(cell: string | undefined): string | undefined {
  return cell === undefined || cell === '' ? undefined : cell;
}

/** The order whose rows are being read. */
class OrderInProgress {
  private readonly order: Record<string, unknown> = {};
  private readonly items: Record<string, unknown>[] = [];
  private readonly itemLines: number[] = [];
  private readonly raw: Record<string, string>[] = [];
  private readonly problems: InputProblem[] = [];
  /** The first row's order-level cells, to compare later rows with. */
  private readonly firstCells: (string | undefined)[];
  private readonly firstLine: number;
  private endLine: number;
  private needsProductResolution = false;

  private readonly file: string;

  constructor(
    private readonly index: number,
    readonly externalId: string | undefined,
    row: CsvRow,
    private readonly shape: RowShape,
  ) {
    this.file = shape.file;
    this.firstLine = row.line;
    this.endLine = row.endLine;
    this.firstCells = shape.orderColumns.map((column) => nonEmpty(row.cells[column.index]));
    shape.orderColumns.forEach((column, i) => {
      const cell = this.firstCells[i];
      if (cell === undefined) return;
      const converted = this.convert(cell, column, row.line);
      if (converted !== undefined) setPath(this.order, column.segments, converted);
    });
    this.addCommon(row);
  }

  /** A later row of the same order: its order-level cells must be empty or equal to the first row's. */
  addRow(row: CsvRow): void {
    this.endLine = row.endLine;
    this.shape.orderColumns.forEach((column, i) => {
      const cell = nonEmpty(row.cells[column.index]);
      const first = this.firstCells[i];
      if (cell === undefined || cell === first) return;
      this.problems.push({
        file: this.file,
        line: row.line,
        field: column.path,
        message:
          first === undefined
            ? `${JSON.stringify(cell)} is given here but the order's first row (line ${this.firstLine}) leaves it empty: put order-level cells on the first row of the order`
            : `${JSON.stringify(cell)} differs from ${JSON.stringify(first)} on line ${this.firstLine}, the order's first row: leave it empty on the other rows of the order, or repeat it exactly`,
      });
    });
    this.addCommon(row);
  }

  /** What every row brings: its shape check, its raw cells and its item. */
  private addCommon(row: CsvRow): void {
    const { header } = this.shape;
    if (row.cells.length !== header.length) {
      this.problems.push({
        file: this.file,
        line: row.line,
        message: `the row has ${row.cells.length} cells but the header has ${header.length}: check the delimiters and quotes of this row`,
      });
    }
    this.addRaw(row);
    this.addItem(row);
  }

  private addRaw(row: CsvRow): void {
    const { header } = this.shape;
    const record: Record<string, string> = {};
    header.forEach((name, i) => {
      record[name] = row.cells[i] ?? '';
    });
    // Cells past the header have no name; keep them so that a reject shows the row as it was.
    for (let i = header.length; i < row.cells.length; i++) record[`#${i + 1}`] = row.cells[i]!;
    this.raw.push(record);
  }

  /** The row's item, unless every item cell is empty (a row that only carries order data). */
  private addItem(row: CsvRow): void {
    const item: Record<string, unknown> = {};
    let present = false;
    for (const column of this.shape.itemColumns) {
      const cell = nonEmpty(row.cells[column.index]);
      if (cell === undefined) continue;
      present = true;
      if (column.path === 'item.productCode' || column.path === 'item.packagingName') this.needsProductResolution = true;
      const converted = this.convert(cell, column, row.line);
      if (converted !== undefined) setPath(item, column.segments, converted);
    }
    if (!present) return;
    this.items.push(item);
    this.itemLines.push(row.line);
  }

  finish(): SourceOrder {
    if (this.items.length > 0) this.order.items = this.items;
    return {
      index: this.index,
      externalId: this.externalId,
      order: this.order,
      location: { file: this.file, line: this.firstLine, endLine: this.endLine },
      raw: this.raw,
      problems: this.problems,
      needsProductResolution: this.needsProductResolution,
      itemLines: this.itemLines,
    };
  }

  private convert(cell: string, column: CsvColumn, line: number): string | number | undefined {
    const field = column.path;
    if (cell.includes('\uFFFD')) {
      this.problems.push({
        file: this.file,
        line,
        field,
        message: 'is not UTF-8 text: save the file as "CSV UTF-8" (or convert it to UTF-8) and import it again',
      });
      return undefined;
    }
    const converted = convertCell(cell, column);
    if ('problem' in converted) {
      this.problems.push({ file: this.file, line, field, message: converted.problem });
      return undefined;
    }
    return converted.value;
  }
}

function setPath(target: Record<string, unknown>, segments: string[], value: unknown): void {
  let node = target;
  for (const segment of segments.slice(0, -1)) {
    const next = node[segment];
    if (typeof next === 'object' && next !== null) node = next as Record<string, unknown>;
    else {
      const created: Record<string, unknown> = {};
      node[segment] = created;
      node = created;
    }
  }
  node[segments[segments.length - 1]!] = value;
}
