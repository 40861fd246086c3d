/**
 * The input side of an import, as the sending side uses it:
 *
 *   openInputSource(input, { format, delimiter, map, mapFile, kind }, ctx) -> InputSource
 *       input is a path or '-' (stdin, copied to a temp file); its format is `--format`'s or its
 *       extension's in INPUT_FORMATS (read/formats.ts), whose reader opens it. Every problem in the
 *       header or the --map file is thrown as InputError/UsageError here, before any record is
 *       read. `limits` (default 1 MiB per record, 64 KiB per value) bound what the readers buffer.
 *   source.records(): AsyncIterable<SourceRecord>  re-reads the file on every call (pass 1, pass 2)
 *   validateImport(source, { kind, references, checkRefs, requireKey = true }) -> ImportValidation
 *   invalidInputError(source, validation) -> InputError (exit 2, every problem listed)
 *   prepareRecord(record, references) -> { body, problems }   the body to POST
 *   new ReferenceCatalog(() => ctx.api(), ctx.signal)   reference lists, fetched once, when needed
 *   writeRejects(path, source, records) / openRejects(path, source)   rejects in the input's format
 *   source.close()                                 removes the copy of stdin
 */
import { ORDER_IMPORT } from './kind.js';
import { readColumnMap } from './read/columns.js';
import { checkFormatOptions, detectFormat } from './read/formats.js';
import { openInputFile } from './read/input-file.js';
import { DEFAULT_LIMITS } from './read/limits.js';
import type { InputSource, OrderSource, SourceContext, SourceOptions } from './types.js';

export { ReferenceCatalog } from './check/references.js';
export {
  InvalidInputError,
  type InvalidRecord,
  invalidInputError,
  prepareRecord,
  validateImport,
} from './check/validate.js';
export { checkRejectsPath, openRejects, writeRejects } from './report/rejects.js';

/** Opens an input (a path, or `-` for stdin) and checks what can be checked before reading records. */
export async function openInputSource(
  input: string,
  options: SourceOptions,
  ctx: SourceContext,
): Promise<InputSource> {
  const format = detectFormat(input, options.format);
  checkFormatOptions(format, {
    map: options.mapFile ?? options.map,
    ignoreColumns: options.ignoreColumns,
    delimiter: options.delimiter,
    sheet: options.sheet,
  });
  const kind = options.kind ?? ORDER_IMPORT;
  const mapFile =
    options.mapFile === undefined ? undefined : await readColumnMap(options.mapFile, ctx.cwd, kind.columns);
  const map = mapFile === undefined ? options.map : { ...options.map, ...mapFile.renames };
  const ignored = [...(options.ignoreColumns ?? []), ...(mapFile?.ignored ?? [])];
  const limits = options.limits ?? DEFAULT_LIMITS;
  const inputFile = await openInputFile(input, ctx);
  try {
    const { reader } = await format.load();
    const opened = await reader.open(inputFile, {
      kind,
      limits,
      map,
      ignored,
      delimiter: options.delimiter,
      sheet: options.sheet,
    });
    return {
      ...opened.layout,
      file: inputFile.file,
      path: inputFile.path,
      records: () => opened.records(),
      close: inputFile.remove,
      signal: ctx.signal,
      limits,
      ...(opened.locateCell ? { locateCell: opened.locateCell } : {}),
    };
  } catch (error) {
    await inputFile.remove();
    throw error;
  }
}

/**
 * `openInputSource` under the names the input side had before it was generic (`orders()`), for
 * test/support/import-input.ts until it moves to the new names.
 */
export async function openOrderSource(
  input: string,
  options: SourceOptions,
  ctx: SourceContext,
): Promise<OrderSource> {
  const source = await openInputSource(input, options, ctx);
  return { ...source, orders: () => source.records() };
}
