/**
 * Result output in the forms of the contract: a table on a TTY, tab-separated rows when piped,
 * `--json` (records exactly as the service returned them), `--csv` (the table's rows, RFC 4180).
 * A list whose records the table cannot show is printed as JSON, never dropped.
 */

import type { Command } from 'commander';
import type { ListAnswer } from '../api/references.js';
import { UsageError } from '../core/errors.js';
import { escapeControl } from './quote.js';
import { answerToShow } from './service-answer.js';
import type { IOStreams } from './streams.js';

/** One column of a list: its key (for `--columns`), header and how to render a record. */
export interface Column<T = unknown> {
  key: string;
  header: string;
  value: (record: T) => string;
  align?: 'left' | 'right';
  /** Shown only when named in `--columns`. */
  optional?: boolean;
  /** On a narrow terminal: the narrowest width worth showing, and which columns go first (lowest priority). */
  minWidth?: number;
  priority?: number;
  /**
   * An identifier (an id, a code, a reference): never cut with `…`, since a cut one cannot be
   * copied into an order; on a narrow terminal other columns shrink or are left out instead.
   */
  identifier?: boolean;
  /** The record's fields this column shows, as dotted paths: what `--json --columns` keeps (default: the key). */
  paths?: string[];
}

export type ListFormat = 'table' | 'tsv' | 'json' | 'csv';

export interface ListOptions {
  json?: boolean;
  csv?: boolean;
  /** Keys of the columns to show, in order (`--columns a,b,c`). */
  columns?: string[];
  /** What the records are, for notes ("packaging references"). */
  what?: string;
  /** The note on stderr for an empty list. */
  emptyNote?: string;
}

/** The flags `withListOptions` declares, as commander parses them (`--json` is global). */
export interface ListFlags {
  csv?: boolean;
  columns?: string[];
}

/** The output options of a list command: its list flags and the global `--json`. */
export function listOptions(flags: ListFlags, json: boolean): ListOptions {
  return { json, csv: flags.csv, columns: flags.columns };
}

/**
 * The list flags every list command takes (`--json` is global). `keys` names the columns in the
 * help; lists of undocumented records take their columns from the records' own keys.
 */
export function withListOptions(
  command: Command,
  keys = "the records' own keys, as in the table header",
): Command {
  return command
    .option('--csv', 'write the rows as CSV (RFC 4180) instead of a table')
    .option(
      '--columns <keys>',
      `comma-separated columns for the table, TSV and CSV, in this order: ${keys}`,
      splitColumns,
    );
}

function splitColumns(value: string): string[] {
  return value
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}

/** Writes any value as JSON on stdout: indented, one trailing newline. */
export function writeJson(io: IOStreams, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2) ?? 'null'}\n`);
}

const JSON_RECORDS_PER_CHUNK = 500;

/**
 * Writes an array as `JSON.stringify(records, null, 2)` would, a few hundred records at a time, so
 * that a list of 50,000 records never exists as one huge string.
 */
export function writeJsonArray(io: IOStreams, records: readonly unknown[]): void {
  if (records.length === 0) {
    io.out('[]\n');
    return;
  }
  let chunk = '[\n';
  for (let i = 0; i < records.length; i++) {
    // JSON strings never hold a raw newline, so re-indenting by lines is exact.
    const text = (JSON.stringify(records[i], null, 2) ?? 'null').replace(/\n/g, '\n  ');
    chunk += `  ${text}${i < records.length - 1 ? ',' : ''}\n`;
    if ((i + 1) % JSON_RECORDS_PER_CHUNK === 0) {
      io.out(chunk);
      chunk = '';
    }
  }
  io.out(`${chunk}]\n`);
}

/** The format a list is written in, from the flags and whether stdout is a terminal. */
export function listFormat(io: IOStreams, options: ListOptions): ListFormat {
  if (options.json && options.csv) throw new UsageError('Choose one of --json and --csv.');
  if (options.json) return 'json';
  if (options.csv) return 'csv';
  return io.stdoutIsTTY ? 'table' : 'tsv';
}

/** Picks the columns named by `--columns` (by key or header, any case), or the default ones. */
export function selectColumns<T>(columns: Column<T>[], keys: string[] | undefined): Column<T>[] {
  if (!keys || keys.length === 0) return columns.filter((column) => !column.optional);
  return keys.map((key) => {
    const wanted = key.toLowerCase();
    const column =
      columns.find((c) => c.key === key) ??
      columns.find((c) => c.key.toLowerCase() === wanted || c.header.toLowerCase() === wanted);
    if (!column) {
      throw new UsageError(
        `Unknown column "${key}" in --columns: choose among ${columns.map((c) => c.key).join(', ')}.`,
      );
    }
    return column;
  });
}

/** CSV field quoting per RFC 4180. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Tab-separated output stays one row per line: control characters (tabs, escapes) are escaped. */
function tsvField(value: string): string {
  return escapeControl(value);
}

const ROWS_PER_CHUNK = 1000;

function writeRows(io: IOStreams, rows: string[][], encode: (row: string[]) => string, eol: string): void {
  let chunk = '';
  for (let i = 0; i < rows.length; i++) {
    chunk += encode(rows[i] ?? []) + eol;
    if ((i + 1) % ROWS_PER_CHUNK === 0) {
      io.out(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') io.out(chunk);
}

/**
 * Writes a list of records. Records are rendered through the columns; with `--json` they are
 * written exactly as received. An empty list writes a note on stderr.
 */
export async function writeList<T>(
  io: IOStreams,
  records: T[],
  allColumns: Column<T>[],
  options: ListOptions = {},
): Promise<void> {
  const format = listFormat(io, options);
  if (format === 'json') {
    // Columns of no list (a list of unknown shape with no records) leave nothing to pick from.
    const chosen =
      options.columns && options.columns.length > 0 && allColumns.length > 0
        ? selectColumns(allColumns, options.columns)
        : undefined;
    writeJsonArray(io, chosen ? records.map((record) => pickFields(record, chosen)) : records);
    if (records.length === 0) io.err(`${emptyNote(options)}\n`);
    return;
  }
  const columns = selectColumns(allColumns, options.columns);
  if (records.length === 0) {
    io.err(`${emptyNote(options)}\n`);
    if (format === 'csv') io.out(`${columns.map((c) => csvField(c.header)).join(',')}\r\n`);
    return;
  }
  const rows = records.map((record) => columns.map((column) => column.value(record)));
  if (format === 'csv') {
    io.out(`${columns.map((c) => csvField(c.header)).join(',')}\r\n`);
    writeRows(io, rows, (row) => row.map(csvField).join(','), '\r\n');
    return;
  }
  if (format === 'tsv') {
    writeRows(io, rows, (row) => row.map(tsvField).join('\t'), '\n');
    return;
  }
  const { layoutGrid, measureGrid, renderGridChunks } = await import('./table.js');
  const grid = measureGrid(
    columns.map((c) => c.header),
    rows,
  );
  // Columns chosen with --columns keep their order of importance: the first ones stay longest.
  const fits = columns.map((c, i) => ({
    minWidth: c.identifier ? Number.POSITIVE_INFINITY : c.minWidth,
    priority: options.columns ? -i : (c.priority ?? -i),
  }));
  const layout = layoutGrid(grid, io.columns, fits);
  const align = columns.map((c) => c.align ?? 'left');
  for (const chunk of renderGridChunks(grid, layout, { width: io.columns, color: io.colorEnabled, align })) {
    io.out(chunk);
  }
  const left = columns.filter((_, i) => !layout.shown.includes(i)).map((c) => c.key);
  const widest = columns.map(() => 0);
  for (let j = 0; j < grid.widths.length; j++) {
    const i = j % columns.length;
    if ((grid.widths[j] ?? 0) > (widest[i] ?? 0)) widest[i] = grid.widths[j] ?? 0;
  }
  const cut = layout.shown
    .filter((i, k) => (layout.widths[k] ?? 0) < (widest[i] ?? 0))
    .map((i) => columns[i]?.key ?? '');
  const fitted = [
    ...(left.length > 0 ? [`${left.join(', ')} left out`] : []),
    ...(cut.length > 0 ? [`long values of ${cut.join(', ')} cut short with …`] : []),
  ];
  if (fitted.length > 0) {
    await note(
      io,
      `note: ${fitted.join(' and ')} to fit ${io.columns} columns; pick columns with --columns, or use --csv or --json for whole values.\n`,
    );
  }
}

/** Writes a note on stderr, wrapped on a terminal (the wrapping helper loads only when a note is written). */
async function note(io: IOStreams, text: string): Promise<void> {
  const { writeNote } = await import('./wrap.js');
  writeNote(io, text);
}

/**
 * The fields of a record that the chosen columns show (`--json --columns`), nested as in the
 * record: `packaging.product.code` keeps `{"packaging": {"product": {"code": …}}}`. Fields the
 * record lacks stay absent; a record that is not an object is kept whole.
 */
export function pickFields(record: unknown, columns: Column<never>[]): unknown {
  if (!isPlainObject(record)) return record;
  const out: Record<string, unknown> = {};
  for (const column of columns) {
    for (const path of column.paths ?? [column.key]) copyPath(record, out, path.split('.'));
  }
  return out;
}

function copyPath(from: Record<string, unknown>, to: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(from, head)) return;
  const value = from[head];
  if (rest.length === 0) {
    to[head] = value;
    return;
  }
  if (!isPlainObject(value)) return;
  const inner = isPlainObject(to[head]) ? (to[head] as Record<string, unknown>) : {};
  copyPath(value, inner, rest);
  if (Object.keys(inner).length > 0) to[head] = inner;
}

function emptyNote(options: ListOptions): string {
  return options.emptyNote ?? `No ${options.what ?? 'records'}.`;
}

/** How a kind of record is shown: its own columns when a record has the expected shape. */
export interface RecordListSpec<T> {
  /** Plural noun for notes: "packaging references". */
  what: string;
  /** The columns of the expected shape. */
  columns: Column<T>[];
  /** Whether a record has the expected shape; otherwise columns are derived from the records' keys. */
  expected?: (record: Record<string, unknown>) => boolean;
  /** Keys to put first (in this order) when columns are derived. */
  preferredKeys?: string[];
}

/** How a list or record command's user sees the secret fields it masks. */
const SHOW_WITH_API = 'ordercli api GET <path> --show-secrets';

/**
 * Writes the records of a list answer in the chosen format (secret-named fields masked). A body that is not a list, or records
 * the table cannot show (not objects), are printed as JSON with a note on stderr; `--json` prints
 * the records as received, and says so when the service wrapped them with other fields.
 */
export async function writeListAnswer<T>(
  io: IOStreams,
  answer: ListAnswer,
  spec: RecordListSpec<T>,
  options: ListOptions & { filter?: (records: unknown[]) => unknown[] } = {},
): Promise<void> {
  const format = listFormat(io, options);
  const listOptions = { what: spec.what, ...options };
  if (answer.records === undefined) {
    await note(
      io,
      `note: the service answered the ${spec.what} in a shape that is not a list; it is printed as JSON.\n`,
    );
    writeJson(io, answerToShow(io, answer.body, { showWith: SHOW_WITH_API }));
    return;
  }
  if (answer.wrapper !== undefined && answer.otherKeys.length > 0 && format === 'json') {
    await note(
      io,
      `note: the service wrapped the records in "${answer.wrapper}" beside ${answer.otherKeys.map((k) => `"${k}"`).join(', ')}; --json prints the records only (ordercli api GET shows the whole answer).\n`,
    );
  }
  const filtered = options.filter ? options.filter(answer.records) : answer.records;
  const records = answerToShow(io, filtered, { showWith: SHOW_WITH_API });
  if (format === 'json') {
    const picking = options.columns !== undefined && options.columns.length > 0;
    if (picking && !records.every(isPlainObject)) {
      await note(
        io,
        `note: the ${spec.what} are not records: --columns does not apply, they are printed whole.\n`,
      );
      writeJsonArray(io, records);
      return;
    }
    // An empty list still checks the names in --columns against the known columns.
    const columns = picking ? columnsOf(records as Record<string, unknown>[], spec) : [];
    await writeList(io, records, columns as Column<unknown>[], listOptions);
    return;
  }
  if (!records.every(isPlainObject)) {
    await note(io, `note: the ${spec.what} are not records a table can show; they are printed as JSON.\n`);
    writeJsonArray(io, records);
    return;
  }
  const objects = records as Record<string, unknown>[];
  if (hasExpectedShape(objects, spec)) {
    await writeList(io, objects as T[], spec.columns, listOptions);
    return;
  }
  const derived = deriveColumns(objects, spec.preferredKeys ?? []);
  if (derived.length === 0) {
    await note(io, `note: the ${spec.what} have no fields a table can show; they are printed as JSON.\n`);
    writeJsonArray(io, records);
    return;
  }
  await writeList(io, objects, derived, listOptions);
}

function hasExpectedShape<T>(objects: Record<string, unknown>[], spec: RecordListSpec<T>): boolean {
  return objects.length === 0 || (spec.expected !== undefined && objects.every(spec.expected));
}

/** The columns a list of records is shown with: the spec's for the expected shape, else from their keys. */
function columnsOf<T>(objects: Record<string, unknown>[], spec: RecordListSpec<T>): Column<never>[] {
  return hasExpectedShape(objects, spec)
    ? (spec.columns as Column<never>[])
    : (deriveColumns(objects, spec.preferredKeys ?? []) as Column<never>[]);
}

/** Writes one record: a field/value table on a TTY, `field<TAB>value` lines when piped, `--json` as received. */
export async function writeRecord(
  io: IOStreams,
  record: unknown,
  options: { json?: boolean } = {},
): Promise<void> {
  record = answerToShow(io, record, { showWith: SHOW_WITH_API });
  if (options.json || !isPlainObject(record)) {
    writeJson(io, record);
    return;
  }
  const fields = Object.entries(flattenRecord(record, { expandArrays: true })).map(([field, value]) => ({
    field,
    value,
  }));
  await writeList(io, fields, [
    { key: 'field', header: 'FIELD', value: (r) => r.field },
    { key: 'value', header: 'VALUE', value: (r) => r.value },
  ]);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a plain object, else an empty one: for reading records leniently. */
export function asRecord(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

/** Depth of nesting flattened into dotted paths (`packaging.product.taxes[0].rate` is 5). */
const FLATTEN_DEPTH = 5;

export interface FlattenOptions {
  /** Give each element of an array of objects its own fields (`taxes[0].rate`), as a details view does. */
  expandArrays?: boolean;
}

/**
 * A record as `dotted.path → text`: nested objects become dotted paths, arrays one cell each
 * (scalars joined, objects by their name or label, else as JSON), null and missing an empty cell.
 */
export function flattenRecord(
  record: Record<string, unknown>,
  options: FlattenOptions = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (value: unknown, path: string, depth: number): void => {
    if (isPlainObject(value) && depth <= FLATTEN_DEPTH && Object.keys(value).length > 0) {
      for (const [key, inner] of Object.entries(value))
        visit(inner, path === '' ? key : `${path}.${key}`, depth + 1);
    } else if (
      options.expandArrays &&
      Array.isArray(value) &&
      value.some(isPlainObject) &&
      depth <= FLATTEN_DEPTH
    ) {
      for (const [index, item] of value.entries()) visit(item, `${path}[${index}]`, depth + 1);
    } else {
      out[path] = cellText(value);
    }
  };
  for (const [key, value] of Object.entries(record)) visit(value, key, 1);
  return out;
}

/** The text of one value in a cell. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  // Tables say yes and no, as people do; --json keeps the service's true and false.
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) {
    return value
      .map((item) => {
        if (isPlainObject(item)) {
          const name = item.name ?? item.label;
          return typeof name === 'string' ? name : JSON.stringify(item);
        }
        return cellText(item);
      })
      .join(', ');
  }
  return JSON.stringify(value) ?? '';
}

/** Columns named after the records' own (flattened) keys: `id` and the preferred keys first, then as met. */
export function deriveColumns(
  records: Record<string, unknown>[],
  preferredKeys: string[] = [],
): Column<Record<string, unknown>>[] {
  const seen = new Set<string>();
  const flat = new WeakMap<object, Record<string, string>>();
  const flatOf = (record: Record<string, unknown>) => {
    let f = flat.get(record);
    if (!f) {
      f = flattenRecord(record);
      flat.set(record, f);
    }
    return f;
  };
  for (const record of records) for (const key of Object.keys(flatOf(record))) seen.add(key);
  const first = ['id', ...preferredKeys].filter((key, i, all) => seen.has(key) && all.indexOf(key) === i);
  const keys = [...first, ...[...seen].filter((key) => !first.includes(key))];
  return keys.map((key) => ({
    key,
    header: readableHeader(key),
    value: (record: Record<string, unknown>) => flatOf(record)[key] ?? '',
    align: key === 'id' ? ('right' as const) : ('left' as const),
    // On a narrow terminal the last keys are left out rather than squeezed to a few letters.
    minWidth: 10,
    identifier: isIdentifierKey(key),
  }));
}

/** A header as the reference tables write them: `unit_factor`, `customer.firstName` → `UNIT FACTOR`, `CUSTOMER FIRST NAME`. */
export function readableHeader(key: string): string {
  return key
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[._\-\s]+/g, ' ')
    .trim()
    .toUpperCase();
}

/** Keys whose values are identifiers (never cut in a table): `id`, `customerId`, `product_code`, `ean`, `externalReference`. */
function isIdentifierKey(key: string): boolean {
  const last = key.split('.').at(-1) ?? key;
  return /^(id|ean|gtin|sku|code|reference|ref)$|(Id|_id|Code|_code|Reference|_reference)$/.test(last);
}
