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
import { UsageError } from '../core/errors.js';
import { planColumns, readColumnMap } from './columns.js';
import { delimiterOption, readCsvLayout, readCsvRows } from './csv.js';
import { groupRows } from './group.js';
import { jsonArrayOrders, ndjsonOrders } from './json.js';
import { type ImportKind, ORDER_IMPORT } from './kind.js';
import { DEFAULT_LIMITS } from './limits.js';
import { detectFormat, openInputFile } from './read.js';
import type { OrderSource, SourceContext, SourceOptions, SourceOrder } from './types.js';

export { ReferenceCatalog } from './references.js';
export { openRejects, writeRejects } from './rejects.js';
export { invalidInputError, prepareOrder, validateImport } from './validate.js';

/** Opens an input (a path, or `-` for stdin) and checks what can be checked before reading orders. */
export async function openOrderSource(
  input: string,
  options: SourceOptions,
  ctx: SourceContext,
): Promise<OrderSource> {
  const format = detectFormat(input, options.format);
  if (format !== 'csv' && (options.mapFile !== undefined || options.map !== undefined)) {
    throw new UsageError(
      '--map renames the columns of a CSV file; it does not apply to JSON or NDJSON input.',
    );
  }
  if (format !== 'csv' && options.delimiter !== undefined) {
    throw new UsageError('--delimiter applies to CSV input only.');
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
