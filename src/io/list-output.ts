/**
 * Lists and records in the forms of the contract: a table on a terminal (at most `--limit` rows),
 * tab-separated rows when piped, `--json` (records exactly as the service returned them), `--csv`
 * (the table's rows, RFC 4180). A list whose records the table cannot show is printed as JSON,
 * never dropped. Piped rows, `--csv` and `--json` are written as they are encoded, and never limited.
 */
import type { ListAnswer } from '../api/references.js';
import { UsageError } from '../core/errors.js';
import { csvLine, tsvLine } from './delimited.js';
import { writeJson, writeJsonArray } from './json-output.js';
import { isPlainObject } from './loose-record.js';
import { type Column, deriveColumns, flattenRecord, pickFields, selectColumns } from './record-columns.js';
import { answerToShow } from './service-answer.js';
import type { IOStreams } from './streams.js';

export type ListFormat = 'table' | 'tsv' | 'json' | 'csv';

export interface ListOptions {
  json?: boolean;
  csv?: boolean;
  /** Keys of the columns to show, in order (`--columns a,b,c`). */
  columns?: string[];
  /** Rows of the table on a terminal, 0 (or none given) for all (`--limit`). */
  limit?: number;
  /** The flags that narrow this list (`--search`), named in the note of a limited table. */
  narrowWith?: string;
  /** What the records are, for notes ("packaging references"). */
  what?: string;
  /** The note on stderr for an empty list. */
  emptyNote?: string;
}

/** The format a list is written in, from the flags and whether stdout is a terminal. */
export function listFormat(io: IOStreams, options: ListOptions): ListFormat {
  if (options.json && options.csv) throw new UsageError('Choose one of --json and --csv.');
  if (options.json) return 'json';
  if (options.csv) return 'csv';
  return io.stdoutIsTTY ? 'table' : 'tsv';
}

/** Rows per string written to stdout: bounded memory for any length of list. */
const ROWS_PER_CHUNK = 1000;

/** Writes the records' rows as CSV or TSV lines, a chunk at a time. */
function writeLines<T>(
  io: IOStreams,
  records: T[],
  columns: Column<T>[],
  line: (values: string[]) => string,
) {
  let chunk = '';
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as T;
    chunk += line(columns.map((column) => column.value(record)));
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
    if (format === 'csv') io.out(csvLine(columns.map((c) => c.header)));
    return;
  }
  if (format === 'csv') {
    io.out(csvLine(columns.map((c) => c.header)));
    writeLines(io, records, columns, csvLine);
    return;
  }
  if (format === 'tsv') {
    writeLines(io, records, columns, tsvLine);
    return;
  }
  await writeTable(io, records, columns, options);
}

/** The table on a terminal: the first `--limit` records, fitted to its width, with notes on what was left out. */
async function writeTable<T>(io: IOStreams, records: T[], columns: Column<T>[], options: ListOptions) {
  const limit = options.limit ?? 0;
  const shown = limit > 0 && records.length > limit ? records.slice(0, limit) : records;
  const { renderTable } = await import('./table.js');
  const table = renderTable(
    columns.map((c) => c.header),
    shown.map((record) => columns.map((column) => column.value(record))),
    {
      width: io.columns,
      color: io.colorEnabled,
      align: columns.map((c) => c.align ?? 'left'),
      // Columns chosen with --columns keep their order of importance: the first ones stay longest.
      fits: columns.map((c, i) => ({
        minWidth: c.identifier ? Number.POSITIVE_INFINITY : c.minWidth,
        priority: options.columns ? -i : (c.priority ?? -i),
      })),
    },
  );
  for (const chunk of table.chunks) io.out(chunk);
  const left = columns.filter((_, i) => !table.shown.includes(i)).map((c) => c.key);
  const cut = table.cut.map((i) => columns[i]?.key ?? '');
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
  if (shown.length < records.length) {
    const narrow = options.narrowWith ? `narrow them with ${options.narrowWith}, ` : '';
    await note(
      io,
      `note: ${shown.length} of ${records.length} ${options.what ?? 'rows'} shown, ${records.length - shown.length} left out; ${narrow}show them all with --limit 0, or get every row with --csv, --json or through a pipe (| less).\n`,
    );
  }
}

/** Writes a note on stderr, wrapped on a terminal (the wrapping helper loads only when a note is written). */
async function note(io: IOStreams, text: string): Promise<void> {
  const { writeNote } = await import('./wrap.js');
  writeNote(io, text);
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
 * Writes the records of a list answer in the chosen format (secret-named fields masked). A body
 * that is not a list, or records the table cannot show (not objects), are printed as JSON with a
 * note on stderr; `--json` prints the records as received, and says so when the service wrapped
 * them with other fields.
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
