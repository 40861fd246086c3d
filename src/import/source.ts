/**
 * The input side of an import, as the submit side uses it:
 *
 *   openOrderSource(input, { format, delimiter, map, mapFile }, ctx) -> OrderSource
 *       input is a path or '-' (stdin, copied to a temp file); every problem in the header or the
 *       --map file is thrown as InputError/UsageError here, before any order is read. `limits`
 *       (default 1 MiB per order, 64 KiB per value) bound what the readers buffer.
 *   source.orders(): AsyncIterable<SourceOrder>   re-reads the file on every call (pass 1, pass 2)
 *   validateImport(source, { references, checkRefs, requireExternalId = true }) -> ImportValidation
 *   invalidInputError(source, validation) -> InputError (exit 2, every problem listed)
 *   prepareOrder(sourceOrder, references) -> { body, problems }   the body to POST
 *   new ReferenceCatalog(() => ctx.api(), ctx.signal)   reference lists, fetched once, when needed
 *   writeRejects(path, source, orders) / openRejects(path, source)   rejects in the input's format
 *   source.close()                                 removes the copy of stdin
 */
import { InputError, UsageError } from '../core/errors.js';
import { excerpt } from '../io/quote.js';
import { type CsvColumn, planColumns, readColumnMap } from './columns.js';
import { type CsvRow, delimiterOption, readCsvLayout, readCsvRows } from './csv.js';
import { groupRows } from './group.js';
import { jsonArrayOrders, ndjsonOrders } from './json.js';
import { type ImportKind, ORDER_IMPORT } from './kind.js';
import { DEFAULT_LIMITS, type InputLimits } from './limits.js';
import { detectFormat, type InputFile, openInputFile } from './read.js';
import type { OrderSource, SourceContext, SourceOptions, SourceOrder, XlsxLayout } from './types.js';

export { ReferenceCatalog } from './references.js';
export { checkRejectsPath, openRejects, writeRejects } from './rejects.js';
export {
  InvalidInputError,
  type InvalidRecord,
  invalidInputError,
  prepareOrder,
  validateImport,
} from './validate.js';

/** Opens an input (a path, or `-` for stdin) and checks what can be checked before reading orders. */
export async function openOrderSource(
  input: string,
  options: SourceOptions,
  ctx: SourceContext,
): Promise<OrderSource> {
  const format = detectFormat(input, options.format);
  const tabular = format === 'csv' || format === 'xlsx';
  if (!tabular && (options.mapFile !== undefined || options.map !== undefined)) {
    throw new UsageError(
      '--map renames the columns of a CSV file or workbook; it does not apply to JSON or NDJSON input.',
    );
  }
  if (!tabular && options.ignoreColumns !== undefined) {
    throw new UsageError(
      '--ignore-columns leaves out columns of a CSV file or workbook; it does not apply to JSON or NDJSON input, whose fields the interface does not show pass through unchanged.',
    );
  }
  if (format !== 'csv' && options.delimiter !== undefined) {
    throw new UsageError('--delimiter applies to CSV input only.');
  }
  if (format !== 'xlsx' && options.sheet !== undefined) {
    throw new UsageError('--sheet applies to Excel workbooks (.xlsx) only.');
  }
  const delimiter = options.delimiter === undefined ? undefined : delimiterOption(options.delimiter);
  const kind = options.kind ?? ORDER_IMPORT;
  const mapFile =
    options.mapFile === undefined ? undefined : await readColumnMap(options.mapFile, ctx.cwd, kind.columns);
  const map = mapFile === undefined ? options.map : { ...options.map, ...mapFile.renames };
  const ignored = [...(options.ignoreColumns ?? []), ...(mapFile?.ignored ?? [])];
  const limits = options.limits ?? DEFAULT_LIMITS;
  const inputFile = await openInputFile(input, ctx);
  const { file, path } = inputFile;
  try {
    if (format === 'csv') {
      const csv = await readCsvLayout(path, file, delimiter);
      const columns = planColumns(csv.header, map, file, kind.columns, ignored);
      const columnName = (index: number) => columns.find((column) => column.index === index)?.path;
      const rows = () => readCsvRows(path, file, csv, { limits, columnName });
      return {
        format,
        csv,
        file,
        path,
        orders: () =>
          groupRows(withoutIgnoredCells(rows(), csv.header, columns), columns, csv.header, file, kind),
        close: inputFile.remove,
        signal: ctx.signal,
        limits,
      };
    }
    if (format === 'xlsx')
      return await openWorkbook(inputFile, { map, ignored }, limits, options.sheet, ctx, kind);
    return {
      format,
      file,
      path,
      orders: () => {
        const records =
          format === 'json' ? jsonArrayOrders(path, file, limits) : ndjsonOrders(path, file, limits);
        return kind === ORDER_IMPORT ? records : keyedBy(kind, records);
      },
      close: inputFile.remove,
      signal: ctx.signal,
      limits,
    };
  } catch (error) {
    await inputFile.remove();
    throw error;
  }
}

/** JSON records of another kind than orders, keyed by its key (the readers key orders). */
async function* keyedBy(kind: ImportKind, records: AsyncIterable<SourceOrder>): AsyncGenerator<SourceOrder> {
  for await (const record of records) {
    record.externalId = kind.keyOf(record.order);
    record.needsProductResolution = false;
    // The readers name what a record must be after orders; this one is another kind.
    for (const problem of record.problems)
      problem.message = problem.message.replace(/^must be an order \(/, `must be a ${kind.one} (`);
    yield record;
  }
}

/**
 * A workbook: its sheet and header found, its columns planned as a CSV file's (a column without
 * a header is left out, as long as its cells are empty), its rows grouped into orders (or the
 * records of `kind`).
 */
async function openWorkbook(
  inputFile: InputFile,
  { map, ignored }: { map: Record<string, string> | undefined; ignored: readonly string[] },
  limits: InputLimits,
  sheet: string | undefined,
  ctx: SourceContext,
  kind: ImportKind,
): Promise<OrderSource> {
  const { file, path } = inputFile;
  const { readXlsxLayout, readXlsxRows, problemLocator, cellReference, rowReference } = await import(
    './xlsx.js'
  );
  const known = new Set(kind.columns.map((column) => column.toLowerCase()));
  const xlsx = await readXlsxLayout(path, file, {
    sheet,
    isKnownColumn: (header) => known.has((map?.[header] ?? header).toLowerCase()),
    describeColumns: kind.columns.join(', '),
    records: kind.many,
  });
  const columns = planWorkbookColumns(
    xlsx,
    { map, ignored },
    file,
    cellReference,
    rowReference,
    kind.columns,
  );
  const byPath = new Map(columns.map((column) => [column.path, column.index]));
  const columnName = (index: number) => columns.find((column) => column.index === index)?.path;
  const cellOf = (index: number, row: number) => cellReference(xlsx.sheet, index, row);
  const rows = () => readXlsxRows(path, file, xlsx, { columnName });
  return {
    format: 'xlsx',
    xlsx,
    file,
    path,
    orders: () =>
      groupRows(withoutIgnoredCells(rows(), xlsx.header, columns, cellOf), columns, xlsx.header, file, kind),
    close: inputFile.remove,
    signal: ctx.signal,
    limits,
    locateCell: problemLocator(xlsx, (field) => byPath.get(field)),
  };
}

/** `planColumns` over the named header cells; its problems placed on the header row's cells. */
function planWorkbookColumns(
  xlsx: XlsxLayout,
  { map, ignored }: { map: Record<string, string> | undefined; ignored: readonly string[] },
  file: string,
  cellReference: (sheet: string, index: number, row: number) => string,
  rowReference: (sheet: string, row: number) => string,
  known: readonly string[],
): CsvColumn[] {
  const named = xlsx.header.flatMap((header, index) => (header.trim() === '' ? [] : [index]));
  try {
    return planColumns(
      named.map((index) => xlsx.header[index]!),
      map,
      file,
      known,
      ignored,
    ).map((column) => ({ ...column, index: named[column.index]! }));
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const problems = error.problems.map((problem) => {
      if (problem.line !== 1) return problem;
      // A note on the whole header (the list of known columns) names no cell.
      if (problem.field === undefined) return { file: problem.file, message: problem.message };
      const index = named.find(
        (i) => problem.field !== undefined && excerpt(xlsx.header[i]!.trim()) === problem.field,
      );
      return {
        ...problem,
        line: xlsx.headerRow,
        cell:
          index === undefined
            ? rowReference(xlsx.sheet, xlsx.headerRow)
            : cellReference(xlsx.sheet, index, xlsx.headerRow),
      };
    });
    const placed = new InputError(error.message, problems);
    placed.hint = error.hint;
    throw placed;
  }
}

/**
 * The rows as the columns read see them, when the header has columns left out on purpose
 * (`--ignore-columns`, `null` in `--map`): a row that holds something only in those columns (a
 * comment, a total) is skipped as an empty row is, and a workbook's error cell there (`#N/A`) is
 * no problem of its order. Without such columns the rows pass as they are.
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
