/**
 * What the tabular formats (a CSV file, a workbook) share once their rows are read: the columns
 * left out on purpose, and the rows grouped into records by the columns planned from the header.
 */
import type { ImportKind } from '../kind.js';
import type { SourceRecord } from '../types.js';
import type { CsvColumn } from './columns.js';
import type { CsvRow } from './csv-rows.js';
import { groupRows } from './group-rows.js';

/**
 * The records of a tabular input: its rows without the cells of the columns left out, grouped as
 * `kind` groups them (an order's rows are its items). `cellOf` names a workbook's cells.
 */
export function recordsOfRows(
  rows: AsyncIterable<CsvRow>,
  table: { header: string[]; columns: CsvColumn[]; file: string; kind: ImportKind },
  cellOf?: (index: number, row: number) => string,
): AsyncGenerator<SourceRecord> {
  const { header, columns, file, kind } = table;
  return groupRows(withoutIgnoredCells(rows, header, columns, cellOf), columns, header, file, kind);
}

/** The name of the column at a 0-based index of the file: the path it feeds, for problems. */
export function columnNamer(columns: readonly CsvColumn[]): (index: number) => string | undefined {
  return (index) => columns.find((column) => column.index === index)?.path;
}

/**
 * The rows as the columns read see them, when the header has columns left out on purpose
 * (`--ignore-columns`, `null` in `--map`): a row that holds something only in those columns (a
 * comment, a total) is skipped as an empty row is, and a workbook's error cell there (`#N/A`) is
 * no problem of its record. Without such columns the rows pass as they are.
 */
async function* withoutIgnoredCells(
  rows: AsyncIterable<CsvRow>,
  header: string[],
  columns: CsvColumn[],
  cellOf?: (index: number, row: number) => string,
): AsyncGenerator<CsvRow> {
  const read = new Set(columns.map((column) => column.index));
  const left = header.flatMap((cell, index) => (cell.trim() !== '' && !read.has(index) ? [index] : []));
  if (left.length === 0) {
    yield* rows;
    return;
  }
  for await (const row of rows) {
    let problems = row.problems;
    if (problems !== undefined && cellOf !== undefined) {
      const leftCells = new Set(left.map((index) => cellOf(index, row.line)));
      problems = problems.filter((problem) => problem.cell === undefined || !leftCells.has(problem.cell));
    }
    const nothingRead =
      (problems === undefined || problems.length === 0) &&
      row.cells.length === header.length &&
      columns.every((column) => row.cells[column.index] === '');
    if (nothingRead) continue;
    yield problems === row.problems ? row : { ...row, problems: problems?.length ? problems : undefined };
  }
}

/** The rows of a record read from a tabular input, as the file wrote them (header name to cell). */
export function rowsOf(record: SourceRecord): Record<string, string>[] {
  if (!Array.isArray(record.raw)) throw new Error(`record ${record.index} has no rows to write back`);
  return record.raw as Record<string, string>[];
}

/**
 * A row written back under `header`: its cells in the header's order, then the cells past the
 * header (a row too long, named `#n`), so that it reads as it was.
 */
export function cellsUnder(header: readonly string[], row: Record<string, string>): string[] {
  const cells = header.map((name) => row[name] ?? '');
  for (const [key, value] of Object.entries(row))
    if (key.startsWith('#') && !header.includes(key)) cells.push(value);
  return cells;
}
