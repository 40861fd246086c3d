/**
 * Step 3 for CSV: rows become orders. One row per item; adjacent rows with the same `externalId`
 * form one order, whose order-level cells are those of its first row (later rows leave them
 * empty or repeat them). Cells stay text, except the seed's integer fields, which are converted.
 * Only the rows of the order being built are held in memory.
 */
import type { InputProblem } from '../../core/errors.js';
import { quote } from '../../io/quote.js';
import type { SourceRecord } from '../types.js';
import { CSV_COLUMNS, type CsvColumn } from './columns.js';
import type { CsvRow } from './csv-rows.js';

/** What a cell converts to, or why it does not. */
type Converted = { value: string | number } | { problem: string };

const WHOLE_NUMBER = /^\d+$/;

/** Converts one cell by the kind of its column; an empty cell never reaches here (it means absent). */
export function convertCell(cell: string, column: Pick<CsvColumn, 'kind'>): Converted {
  if (column.kind === 'text') return { value: cell };
  const trimmed = cell.trim();
  if (WHOLE_NUMBER.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return { value: Number(trimmed) };
  if (column.kind === 'integerOrText') return { value: cell };
  return { problem: `must be a whole number above zero, not ${quote(cell)}` };
}

/** A column with where its value goes: `parent.key` of the order or the item (`parent` absent at top level). */
interface Target extends CsvColumn {
  parent: string | undefined;
  key: string;
  namesProduct: boolean;
}

interface RowShape {
  file: string;
  header: string[];
  orderTargets: Target[];
  itemTargets: Target[];
}

/** How rows become records: by default an order's (adjacent rows with one `externalId`). */
export interface RowGrouping {
  /** The column whose cell keys a record. */
  keyField: string;
  /** Adjacent rows with the same key form one record; else every row is a record of its own. */
  groupsRows: boolean;
  /** The contract's columns in the order bodies list their fields. */
  columns: readonly string[];
}

const ORDER_ROWS: RowGrouping = { keyField: 'externalId', groupsRows: true, columns: CSV_COLUMNS };

/** Orders (or the records of `grouping`) built from the rows of a CSV file, in file order. */
export async function* groupRows(
  rows: AsyncIterable<CsvRow>,
  columns: CsvColumn[],
  header: string[],
  file: string,
  grouping: RowGrouping = ORDER_ROWS,
): AsyncGenerator<SourceRecord> {
  // In the contract's order, so that bodies list their fields the same way whatever the file's order.
  const targets = [...columns]
    .sort((a, b) => grouping.columns.indexOf(a.path) - grouping.columns.indexOf(b.path))
    .map(
      (column): Target => ({
        ...column,
        parent: column.segments.length > 1 ? column.segments[0] : undefined,
        key: column.segments[column.segments.length - 1]!,
        namesProduct: column.path === 'item.productCode' || column.path === 'item.packagingName',
      }),
    );
  const shape: RowShape = {
    file,
    header,
    orderTargets: targets.filter((target) => target.level === 'order'),
    itemTargets: targets.filter((target) => target.level === 'item'),
  };
  const externalIdIndex = columns.find((column) => column.path === grouping.keyField)?.index;
  let current: OrderInProgress | undefined;
  let index = 0;
  try {
    for await (const row of rows) {
      const externalId = externalIdIndex === undefined ? undefined : nonEmpty(row.cells[externalIdIndex]);
      if (
        current === undefined ||
        !grouping.groupsRows ||
        externalId === undefined ||
        externalId !== current.externalId
      ) {
        if (current) yield current.finish();
        current = new OrderInProgress(index++, externalId, row, shape);
      } else {
        current.addRow(row);
      }
    }
  } catch (error) {
    // A syntax error ends the file: the order read before it is still checked and reported.
    if (current) yield current.finish();
    throw error;
  }
  if (current) yield current.finish();
}

function nonEmpty(cell: string | undefined): string | undefined {
  return cell === undefined || cell === '' ? undefined : cell;
}

/** The order whose rows are being read. */
class OrderInProgress {
  private readonly order: Record<string, unknown> = {};
  private readonly items: Record<string, unknown>[] = [];
  private readonly itemLines: number[] = [];
  /** The cells of each row, kept to write the order back as it was (`--rejects`). */
  private readonly rows: string[][] = [];
  private readonly problems: InputProblem[] = [];
  private readonly firstRow: CsvRow;
  private endLine: number;
  private needsProductResolution = false;

  constructor(
    private readonly index: number,
    readonly externalId: string | undefined,
    row: CsvRow,
    private readonly shape: RowShape,
  ) {
    this.firstRow = row;
    this.endLine = row.endLine;
    for (const target of shape.orderTargets) {
      const cell = nonEmpty(row.cells[target.index]);
      if (cell !== undefined) this.set(this.order, target, cell, row.line);
    }
    this.addCommon(row);
  }

  /** A later row of the same order: its order-level cells must be empty or equal to the first row's. */
  addRow(row: CsvRow): void {
    this.endLine = row.endLine;
    const firstLine = this.firstRow.line;
    for (const target of this.shape.orderTargets) {
      const cell = nonEmpty(row.cells[target.index]);
      const first = nonEmpty(this.firstRow.cells[target.index]);
      if (cell === undefined || cell === first) continue;
      this.problems.push({
        file: this.shape.file,
        line: row.line,
        field: target.path,
        message:
          first === undefined
            ? `${quote(cell)} is given here but the order's first row (line ${firstLine}) leaves it empty: put order-level cells on the first row of the order`
            : `${quote(cell)} differs from ${quote(first)} on line ${firstLine}, the order's first row: leave it empty on the other rows of the order, or repeat it exactly`,
      });
    }
    this.addCommon(row);
  }

  finish(): SourceRecord {
    if (this.items.length > 0) this.order.items = this.items;
    return new RowsRecord(
      this.index,
      this.externalId,
      this.order,
      { file: this.shape.file, line: this.firstRow.line, endLine: this.endLine },
      this.problems,
      this.needsProductResolution,
      this.itemLines,
      this.shape.header,
      this.rows,
    );
  }

  /** What every row brings: its shape check, its cells and its item. */
  private addCommon(row: CsvRow): void {
    const { header } = this.shape;
    if (row.cells.length !== header.length) {
      this.problems.push({
        file: this.shape.file,
        line: row.line,
        message: `the row has ${row.cells.length} cells but the header has ${header.length}: check the delimiters and quotes of this row`,
      });
    }
    if (row.problems) this.problems.push(...row.problems);
    this.rows.push(row.cells);
    this.addItem(row);
  }

  /** The row's item, unless every item cell is empty (a row that only carries order data). */
  private addItem(row: CsvRow): void {
    let item: Record<string, unknown> | undefined;
    for (const target of this.shape.itemTargets) {
      const cell = nonEmpty(row.cells[target.index]);
      if (cell === undefined) continue;
      item ??= {};
      if (target.namesProduct) this.needsProductResolution = true;
      this.set(item, target, cell, row.line);
    }
    if (item === undefined) return;
    this.items.push(item);
    this.itemLines.push(row.line);
  }

  /** Converts a cell and sets it at its place, or records why it does not convert. */
  private set(object: Record<string, unknown>, target: Target, cell: string, line: number): void {
    // The reader has refused a file that is not UTF-8 (src/import/read/encoding.ts).
    const converted = convertCell(cell, target);
    if ('problem' in converted) {
      this.problems.push({ file: this.shape.file, line, field: target.path, message: converted.problem });
      return;
    }
    let node = object;
    if (target.parent !== undefined) {
      node = (object[target.parent] as Record<string, unknown> | undefined) ?? {};
      object[target.parent] = node;
    }
    node[target.key] = converted.value;
  }
}

/**
 * A record read from rows (CSV, a workbook). Its `raw` records are built when asked for (rejects, invalid orders):
 * most orders never need them. A class keeps that cheap: a getter in an object literal gives
 * every order its own hidden class, which made V8's heap grow by 50 MB per 100,000 orders.
 */
class RowsRecord implements SourceRecord {
  constructor(
    readonly index: number,
    readonly key: string | undefined,
    readonly body: Record<string, unknown>,
    readonly location: SourceRecord['location'],
    public problems: InputProblem[],
    readonly needsProductResolution: boolean,
    readonly itemLines: number[],
    private readonly header: string[],
    private readonly rows: string[][],
  ) {}

  get raw(): Record<string, string>[] {
    return this.rows.map((cells) => rawRecord(this.header, cells));
  }
}

/** A row as the file wrote it: header name to cell; cells past the header are named `#n`. */
function rawRecord(header: string[], cells: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i < header.length; i++) record[header[i]!] = cells[i] ?? '';
  for (let i = header.length; i < cells.length; i++) record[`#${i + 1}`] = cells[i]!;
  return record;
}
