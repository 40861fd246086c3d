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
import { delimiterOption, readCsvLayout, readCsvRows } from './csv.js';
import { groupRows } from './group.js';
import { jsonArrayOrders, ndjsonOrders } from './json.js';
import { type ImportKind, ORDER_IMPORT } from './kind.js';
import { DEFAULT_LIMITS, type InputLimits } from './limits.js';
import { detectFormat, type InputFile, openInputFile } from './read.js';
import type { OrderSource, SourceContext, SourceOptions, SourceOrder, XlsxLayout } from './types.js';

export { ReferenceCatalog } from './references.js';
export { checkRejectsPath, openRejects, writeRejects } from './rejects.js';
export { invalidInputError, prepareOrder, validateImport } from './validate.js';

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
  if (format !== 'csv' && options.delimiter !== undefined) {
    throw new UsageError('--delimiter applies to CSV input only.');
  }
  if (format !== 'xlsx' && options.sheet !== undefined) {
    throw new UsageError('--sheet applies to Excel workbooks (.xlsx) only.');
  }
  const delimiter = options.delimiter === undefined ? undefined : delimiterOption(options.delimiter);
  const kind = options.kind ?? ORDER_IMPORT;
  const map =
    options.mapFile === undefined
      ? options.map
      : { ...options.map, ...(await readColumnMap(options.mapFile, ctx.cwd, kind.columns)) };
  const limits = options.limits ?? DEFAULT_LIMITS;
  const inputFile = await openInputFile(input, ctx);
  const { file, path } = inputFile;
  try {
    if (format === 'csv') {
      const csv = await readCsvLayout(path, file, delimiter);
      const columns = planColumns(csv.header, map, file, kind.columns);
      const columnName = (index: number) => columns.find((column) => column.index === index)?.path;
      return {
        format,
        csv,
        file,
        path,
        orders: () =>
          groupRows(readCsvRows(path, file, csv, { limits, columnName }), columns, csv.header, file, kind),
        close: inputFile.remove,
        signal: ctx.signal,
        limits,
      };
    }
    if (format === 'xlsx') return await openWorkbook(inputFile, map, limits, options.sheet, ctx, kind);
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
  map: Record<string, string> | undefined,
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
  const columns = planWorkbookColumns(xlsx, map, file, cellReference, rowReference, kind.columns);
  const byPath = new Map(columns.map((column) => [column.path, column.index]));
  const columnName = (index: number) => columns.find((column) => column.index === index)?.path;
  return {
    format: 'xlsx',
    xlsx,
    file,
    path,
    orders: () => groupRows(readXlsxRows(path, file, xlsx, { columnName }), columns, xlsx.header, file, kind),
    close: inputFile.remove,
    signal: ctx.signal,
    limits,
    locateCell: problemLocator(xlsx, (field) => byPath.get(field)),
  };
}

/** `planColumns` over the named header cells; its problems placed on the header row's cells. */
function planWorkbookColumns(
  xlsx: XlsxLayout,
  map: Record<string, string> | undefined,
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
    throw new InputError(error.message, problems);
  }
}
