/**
 * The shapes passed between the steps of the import pipeline:
 * read -> parse -> map -> group -> validate -> submit (claimed in the ledger) -> report.
 */
import type { InputProblem } from '../core/errors.js';
import type { KeyTable } from '../core/key-table.js';

/** Where one record stands in its input file (1-based lines; a CSV order spans its rows). */
export interface SourceLocation {
  file: string;
  line: number;
  endLine: number;
}

/** One record (an order, a contact reference) as read from the input, before validation. */
export interface SourceRecord {
  /** 0-based position of the record in the input. */
  index: number;
  /** The record's key: an order's `externalId`, a contact reference's `contact.externalReference`. */
  key: string | undefined;
  /** The body as it will be sent (after mapping, grouping and type conversion). */
  body: Record<string, unknown>;
  location: SourceLocation;
  /**
   * The record as written in the input, to write back with `--rejects`: for CSV the raw records
   * (header keys, cell strings) of its rows; for JSON/NDJSON the original value, or its text when
   * it could not be read as an object.
   */
  raw: Record<string, string>[] | unknown;
  /** Problems found while reading (a cell that does not convert, a malformed line). */
  problems: InputProblem[];
  /** Items whose `productCode` must be resolved to an `internalReferenceId` before sending. */
  needsProductResolution: boolean;
  /**
   * Rows only: the line of the row of each item (`body.items[i]` came from line `itemLines[i]`),
   * so that a problem with an item is reported on its row as `item.<field>`.
   */
  itemLines?: number[];
}

/** The name the input side had before it was generic: kept for test/support/import-input.ts. */
export type SourceOrder = SourceRecord;

/**
 * The outcome of one order, as journaled and reported: the contract's five, and `exists` for a
 * record the service already had (a contact reference it answered 409 for), which is no failure.
 */
export type RecordOutcome = 'created' | 'failed' | 'skipped' | 'invalid' | 'unknown' | 'exists';

// ---------------------------------------------------------------------------------------------
// Input side: what the sending side calls (see src/import/source.ts and run-import.ts).
//
//   const references = new ReferenceCatalog(() => ctx.api(), ctx.signal);       // check/references.ts
//   const source = await openInputSource(path, { format, delimiter, mapFile, kind }, ctx); // source.ts
//   try {
//     const validation = await validateImport(source, {                             // pass 1
//       references, checkRefs, maxInvalid: skipInvalid ? undefined : 1000 });  // bound memory at exit 2
//     if (validation.invalid.length > 0 && !skipInvalid) throw invalidInputError(source, validation);
//     for await (const record of source.records()) {                                // pass 2
//       if (validation.invalidIndexes.has(record.index)) continue;                  // report 'invalid'
//       const { body, problems } = await prepareRecord(record, references);        // body to POST
//     }
//     await writeRejects(rejectsPath, source, rejectedRecords);                     // report/rejects.ts
//   } finally { await source.close(); }
// ---------------------------------------------------------------------------------------------

/**
 * How an input is written, so that rejects can be written back alike: its format's name, a
 * tabular input's header, and what only its format reads (a CSV file's delimiter, line ending
 * and byte order mark; a workbook's sheet).
 */
export interface InputLayout {
  /** The name of its format in INPUT_FORMATS (`csv`). */
  format: string;
  /** A tabular input's header cells as written (before `--map`); a column without one is `''`. */
  header?: string[];
  /** What only its format reads; another format's writer ignores it. */
  details?: unknown;
}

export interface SourceOptions {
  /** `--format`: a name or alias of INPUT_FORMATS; from the file's extension when absent. */
  format?: string;
  /** `--delimiter` (CSV); detected from the header when absent. */
  delimiter?: string;
  /** The file's own headers renamed to the contract's dotted paths (`--map`). */
  map?: Record<string, string>;
  /** Largest record and value (`--max-order-bytes`, `--max-cell-bytes`); default 1 MiB and 64 KiB. */
  limits?: import('./read/limits.js').InputLimits;
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

/** An opened input. Re-iterable: each `records()` call reads the file again from its start. */
export interface InputSource extends InputLayout {
  /** The name used in messages and problems: the path as given (control characters escaped), or `stdin`. */
  file: string;
  /** The file actually read (a private copy of stdin for `-`). */
  path: string;
  records(): AsyncIterable<SourceRecord>;
  /** Removes the copy of stdin, if any; safe to call twice. */
  close(): Promise<void>;
  /** The command's signal (Ctrl-C): `validateImport` stops reading when it aborts. */
  signal?: AbortSignal;
  /** The size limits its readers keep to, and that validation checks the records against. */
  limits?: import('./read/limits.js').InputLimits;
  /** For a workbook: the cell (`Commandes!D4`) or row (`Commandes!4:4`) a problem is about. */
  locateCell?(problem: InputProblem): string | undefined;
}

/** The names the input side had before it was generic: kept for test/support/import-input.ts. */
export interface OrderSource extends InputSource {
  orders(): AsyncIterable<SourceRecord>;
}

/** One record made ready to send: the body (product codes resolved), or why it cannot be sent. */
export interface PreparedRecord {
  body: Record<string, unknown>;
  problems: InputProblem[];
}

export interface ValidateImportOptions {
  /** What the input holds (its rules and key); default orders. */
  kind?: import('./kind.js').ImportKind;
  /** Every record needs its key (default true: imports key re-runs on it). */
  requireKey?: boolean;
  /** Reference lists, fetched once: needed to resolve `productCode` and for `checkRefs`. */
  references?: import('./check/references.js').ReferenceCatalog;
  /** `--check-refs`: every `internalReferenceId` must exist in the reference lists and be active. */
  checkRefs?: boolean;
  /**
   * Keep (and list) at most this many invalid records; the others are only counted (`omitted`)
   * and their indexes kept. For a run that will stop at exit 2 anyway, so that a file whose every
   * row has the same mistake does not hold a million records in memory. Default: keep all.
   */
  maxInvalid?: number;
  /** Size limits (default: the source's own, else 1 MiB per order and 64 KiB per value). */
  limits?: import('./read/limits.js').InputLimits;
  /** Each record as it is checked, in input order, with its problems (none for a valid one). */
  onRecord?(record: SourceRecord, problems: InputProblem[]): void;
  /** Counted as records are checked, for the progress display that reads them on its timer. */
  counts?: ReadCounts;
}

/** How far a reading pass has got: updated per record, read by the progress display on its timer. */
export interface ReadCounts {
  /** Records read and checked so far. */
  read: number;
  /** Of those, the invalid ones. */
  invalid: number;
}

/** One record of the input as the sending pass takes it: the body to POST, or why it cannot be sent. */
export interface ValidatedRecord {
  source: SourceRecord;
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
  /** The records with problems (each with its `problems`), in input order (up to `maxInvalid`). */
  invalid: SourceRecord[];
  /** `index` of every invalid order, for the sending pass (all of them, even beyond `maxInvalid`). */
  invalidIndexes: ReadonlySet<number>;
  /** Every problem, in input order, as `file:line: field: message`. */
  problems: InputProblem[];
  /** Invalid records beyond `maxInvalid`: counted in `invalidIndexes`, not kept in `invalid`. */
  omitted: number;
  /** Every key of the input with its first line, for the order ledger's check (dropped once it is done). */
  keys?: KeyTable | undefined;
}
