/**
 * Result output in the forms of the contract: a table on a TTY, tab-separated rows when piped,
 * `--json` (records exactly as the service returned them), `--csv` (the table's rows, RFC 4180).
 */
import type { IOStreams } from './streams.js';

/** One column of a list: its key (for `--columns`), header and how to render a record. */
export interface Column<T = unknown> {
  key: string;
  header: string;
  value: (record: T) => string;
}

export type ListFormat = 'table' | 'tsv' | 'json' | 'csv';

export interface ListOptions {
  json?: boolean;
  csv?: boolean;
  /** Keys of the columns to show, in order (`--columns a,b,c`). */
  columns?: string[];
}

/** Writes any value as JSON on stdout: indented, one trailing newline. */
export function writeJson(io: IOStreams, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** The format a list is written in, from the flags and whether stdout is a terminal. */
export function listFormat(io: IOStreams, options: ListOptions): ListFormat {
  if (options.json) return 'json';
  if (options.csv) return 'csv';
  return io.stdoutIsTTY ? 'table' : 'tsv';
}

/** Picks the columns named by `--columns`, or all of them. */
export function selectColumns<T>(columns: Column<T>[], keys: string[] | undefined): Column<T>[] {
  if (!keys || keys.length === 0) return columns;
  return keys.map((key) => {
    const column = columns.find((c) => c.key === key || c.header.toLowerCase() === key.toLowerCase());
    if (!column) {
      throw new ColumnError(`Unknown column "${key}": choose among ${columns.map((c) => c.key).join(', ')}.`);
    }
    return column;
  });
}

export class ColumnError extends Error {}

/** CSV field quoting per RFC 4180. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Tab-separated output must stay one row per line. */
function tsvField(value: string): string {
  return value.replace(/[\t\r\n]+/g, ' ');
}

/**
 * Writes a list of records. Records are rendered through the columns; with `--json` they are
 * written exactly as received. An empty list writes a note on stderr.
 */
export async function writeList<T>(
  io: IOStreams,
  records: T[],
  allColumns: Column<T>[],
  options: ListOptions & { emptyNote?: string } = {},
): Promise<void> {
  const format = listFormat(io, options);
  if (format === 'json') {
    writeJson(io, records);
    return;
  }
  const columns = selectColumns(allColumns, options.columns);
  if (records.length === 0) {
    io.err(`${options.emptyNote ?? 'No records.'}\n`);
    if (format === 'csv') io.out(`${columns.map((c) => csvField(c.header)).join(',')}\r\n`);
    return;
  }
  const rows = records.map((record) => columns.map((column) => column.value(record)));
  if (format === 'csv') {
    const lines = [columns.map((c) => csvField(c.header)), ...rows.map((row) => row.map(csvField))];
    io.out(`${lines.map((line) => line.join(',')).join('\r\n')}\r\n`);
    return;
  }
  if (format === 'tsv') {
    io.out(`${rows.map((row) => row.map(tsvField).join('\t')).join('\n')}\n`);
    return;
  }
  const { renderTable } = await import('./table.js');
  io.out(renderTable(columns.map((c) => c.header), rows, io.columns, io.colorEnabled));
}
