/**
 * The shapes passed between the steps of the import pipeline:
 * read -> parse -> map -> group -> validate -> submit -> journal -> report.
 */
import type { InputProblem } from '../core/errors.js';
import type { KeyTable } from '../core/key-table.js';

export type InputFormat = 'csv' | 'json' | 'ndjson' | 'xlsx';

/** Where one order stands in its input file (1-based lines; a CSV order spans its rows). */
export interface SourceLocation {
  file: string;
  line: number;
  endLine: number;
}

/** One order as read from the input, before validation. */
export interface SourceOrder {
  /** 0-based position of the order in the input. */
  index: number;
  /** The record's key: an order's `externalId`, a contact reference's `contact.externalReference`. */
  externalId: string | undefined;
  /** The order body as it will be sent (after mapping, grouping and type conversion). */
  order: Record<string, unknown>;
  location: SourceLocation;
  /**
   * The order as written in the input, to write back with `--rejects`: for CSV the raw records
   * (header keys, cell strings) of its rows; for JSON/NDJSON the original value.
   */
  raw: Record<string, string>[] | unknown;
  /** Problems found while reading (a cell that does not convert, a malformed line). */
  problems: InputProblem[];
  /** Items whose `productCode` must be resolved to an `internalReferenceId` before sending. */
  needsProductResolution: boolean;
  /**
   * CSV only: the line of the row of each item (`order.items[i]` came from line `itemLines[i]`), so
   * that a problem with an item is reported on its row as `item.<field>`.
   */
  itemLines?: number[];
}

export interface ReadOptions {
  format?: InputFormat;
  /** CSV delimiter; detected from the header when absent. */
  delimiter?: string;
  /** The file's own headers renamed to the contract's dotted paths (`--map`). */
  map?: Record<string, string>;
  /** Largest order and value (`--max-order-bytes`, `--max-cell-bytes`); default 1 MiB and 64 KiB. */
  limits?: import('./limits.js').InputLimits;
}

/**
 * The outcome of one order, as journaled and reported: the contract's five, and `exists` for a
 * record the service already had (a contact reference it answered 409 for), which is no failure.
 */
export type OrderOutcome = 'created' | 'failed' | 'skipped' | 'invalid' | 'unknown' | 'exists';

// ---------------------------------------------------------------------------------------------
// Input side: what the submit side calls (signatures fixed; see src/import/source.ts).
//
//   const references = new ReferenceCatalog(() => ctx.api(), ctx.signal);    // import/references.ts
//   const source = await openOrderSource(path, { format, delimiter, mapFile }, ctx); // import/source.ts
//   try {
//     const validation = await validateImport(source, {                             // pass 1
//       references, checkRefs, maxInvalid: skipInvalid ? undefined : 1000 });  // bound memory at exit 2
//     if (validation.invalid.length > 0 && !skipInvalid) throw invalidInputError(source, validation);
//     for await (const order of source.orders()) {                                  // pass 2
//       if (validation.invalidIndexes.has(order.index)) continue;                   // report 'invalid'
//       const { body, problems } = await prepareOrder(order, references);          // body to POST
//     }
//     await writeRejects(rejectsPath, source, rejectedOrders);                      // import/rejects.ts
//   } finally { await source.close(); }
// ---------------------------------------------------------------------------------------------

/** How a CSV input is written, so that rejects can be written back in the same dialect. */
export interface CsvLayout {
  /** The file's own header cells, as written (before `--map`). */
  header: string[];
  delimiter: string;
  /** The line ending of the header line. */
  lineEnding: '\r\n' | '\n';
  /** Whether the file starts with a UTF-8 byte order mark (spreadsheets need it back). */
  bom: boolean;
}

/** How an Excel workbook input is laid out: the sheet read and its header. */
export interface XlsxLayout {
  /** The sheet read, and every sheet of the workbook in tab order. */
  sheet: string;
  sheets: string[];
  /** The header cells as Excel shows them (before `--map`); a column without header is `''`. */
  header: string[];
  /** The 1-based row of the header (rows above it, such as a title, are not read). */
  headerRow: number;
  /** The zip entry of the sheet's XML. */
  entry: string;
  /** The sheet's merged ranges: each cell of a range reads as the range's top-left cell. */
  merges: import('./xlsx-zip.js').MergedRange[];
}

/** The format of an input, which rejects are written back in. */
export interface SourceLayout {
  format: InputFormat;
  /** Present when `format` is `csv`. */
  csv?: CsvLayout;
  /** Present when `format` is `xlsx`. */
  xlsx?: XlsxLayout;
}

export interface SourceOptions extends ReadOptions {
  /** A `--map` JSON file (`{"their header": "contact.email"}`), read relative to the cwd. */
  mapFile?: string;
  /** `--ignore-columns`: headers (as written, in any case) whose columns are left out on purpose. */
  ignoreColumns?: readonly string[] | undefined;
  /** What the input holds (its columns and key); default orders. */
  kind?: import('./kind.js').ImportKind;
  /** `--sheet`: the sheet of a workbook to read (default: the first with known columns). */
  sheet?: string;
}

/** What opening an input needs from the command context (`Context` satisfies it). */
export interface SourceContext {
  cwd: string;
  io: { stdin: import('node:stream').Readable };
  signal: AbortSignal;
}

/** An opened input. Re-iterable: each `orders()` call reads the file again from its start. */
export interface OrderSource extends SourceLayout {
  /** The name used in messages and problems: the path as given (control characters escaped), or `stdin`. */
  file: string;
  /** The file actually read (a private copy of stdin for `-`). */
  path: string;
  orders(): AsyncIterable<SourceOrder>;
  /** Removes the copy of stdin, if any; safe to call twice. */
  close(): Promise<void>;
  /** The command's signal (Ctrl-C): `validateImport` stops reading when it aborts. */
  signal?: AbortSignal;
  /** The size limits its readers keep to, and that validation checks the orders against. */
  limits?: import('./limits.js').InputLimits;
  /** For a workbook: the cell (`Commandes!D4`) or row (`Commandes!4:4`) a problem is about. */
  locateCell?(problem: InputProblem): string | undefined;
}

/** One order made ready to send: the body (product codes resolved), or why it cannot be sent. */
export interface PreparedOrder {
  body: Record<string, unknown>;
  problems: InputProblem[];
}

export interface ValidateImportOptions {
  /** What the input holds (its rules and key); default orders. */
  kind?: import('./kind.js').ImportKind;
  /** Every order needs an `externalId` (default true: imports key re-runs on it). */
  requireExternalId?: boolean;
  /** Reference lists, fetched once: needed to resolve `productCode` and for `checkRefs`. */
  references?: import('./references.js').ReferenceCatalog;
  /** `--check-refs`: every `internalReferenceId` must exist in the reference lists and be active. */
  checkRefs?: boolean;
  /**
   * Keep (and list) at most this many invalid orders; the others are only counted (`omitted`)
   * and their indexes kept. For a run that will stop at exit 2 anyway, so that a file whose every
   * row has the same mistake does not hold a million orders in memory. Default: keep all.
   */
  maxInvalid?: number;
  /** Size limits (default: the source's own, else 1 MiB per order and 64 KiB per value). */
  limits?: import('./limits.js').InputLimits;
  /** Each order as it is checked, in input order, with its problems (none for a valid one). */
  onOrder?(order: SourceOrder, problems: InputProblem[]): void;
}

/** One order of the input as the sending pass takes it: the body to POST, or why it cannot be sent. */
export interface ValidatedOrder {
  source: SourceOrder;
  /** The body to POST (product codes resolved); absent when the order is invalid. */
  body: Record<string, unknown> | undefined;
  /** Why the order cannot be sent (empty for a valid order). */
  problems: InputProblem[];
}

/** The outcome of the validation pass over a whole input. */
export interface ImportValidation {
  /** Orders read. */
  total: number;
  /** Orders without a problem. */
  valid: number;
  /** The orders with problems (each with its `problems`), in input order (up to `maxInvalid`). */
  invalid: SourceOrder[];
  /** `index` of every invalid order, for the sending pass (all of them, even beyond `maxInvalid`). */
  invalidIndexes: ReadonlySet<number>;
  /** Every problem, in input order, as `file:line: field: message`. */
  problems: InputProblem[];
  /** Invalid orders beyond `maxInvalid`: counted in `invalidIndexes`, not kept in `invalid`. */
  omitted: number;
  /** Every externalId of the input with its first line, for the order ledger's check (dropped once it is done). */
  externalIds?: KeyTable | undefined;
}
