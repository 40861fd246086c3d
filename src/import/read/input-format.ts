/**
 * What an input format is to the pipeline: one module per format (csv.ts, json.ts, ndjson.ts,
 * xlsx.ts) exports its `reader` (a `FormatReader`), and its entry in `INPUT_FORMATS` (formats.ts)
 * says what is known of it without loading it. Detection by extension or `--format`, the messages
 * that name the formats, `--format`'s help and shell completion, and docs/ENGINEERING.md
 * ("Adding an input format") all read that one list; start-up (help, completion) loads no reader.
 */
import type { InputProblem } from '../../core/errors.js';
import type { ImportKind } from '../kind.js';
import type { InputLayout, SourceRecord } from '../types.js';
import type { InputFile } from './input-file.js';
import type { InputLimits } from './limits.js';

/** One input format as INPUT_FORMATS registers it: how a file in it is told, and where its reader is. */
export interface InputFormat {
  /** Its `--format` value, offered by completion and named in messages (`csv`). */
  name: string;
  /** Other `--format` values that name it (`tsv` for csv). */
  aliases: readonly string[];
  /** What a message calls an input in it, in the plural (`CSV input`). */
  described: string;
  /**
   * The extensions that tell it, lower case with their dot, as messages suggest them; the first is
   * what a rejects file in it is named (`.csv`).
   */
  extensions: readonly string[];
  /** Extensions read as this format that messages do not suggest (`.xlsm`, a workbook with macros). */
  otherExtensions?: readonly string[];
  /** Extensions that look like it but are refused, with what the file is and what to do instead. */
  refusedExtensions?: Readonly<Record<string, string>>;
  /**
   * Its records are rows under a header (a CSV file, a workbook): `--map` and `--ignore-columns`
   * apply, and its rejects may be written as another tabular format (`--rejects rejects.xlsx`).
   */
  tabular?: { noun: string };
  /** Options only it reads, each with the flag that sets it (`{ delimiter: '--delimiter' }`). */
  ownOptions?: Readonly<Partial<Record<FormatOption, string>>>;
  /** Its module, loaded only when an input in it is opened or rejects are written in it. */
  load(): Promise<{ reader: FormatReader }>;
}

/** How a format's module reads an input and writes rejects: what its `reader` export implements. */
export interface FormatReader {
  /**
   * Opens a file in this format: reads and checks what comes before its records (a header, a
   * sheet), and throws an InputError or a UsageError for what is wrong there, before any record.
   */
  open(file: InputFile, options: OpenOptions): Promise<OpenedInput>;
  /** Creates (or replaces) a rejects file at `path` for the records of an input of `layout`. */
  openRejects(path: string, layout: InputLayout): Promise<RejectsWriter>;
}

/** The options of `SourceOptions` that only some formats read. */
export type FormatOption = 'delimiter' | 'sheet';

/** What a format needs to open an input. */
export interface OpenOptions {
  /** What the records are: their columns, their key, and the words messages use for them. */
  kind: ImportKind;
  /** How large a record and a value may be: readers stop buffering there. */
  limits: InputLimits;
  /** Tabular formats: the file's own headers renamed to the kind's columns (`--map`). */
  map?: Record<string, string> | undefined;
  /** Tabular formats: headers whose columns are left out on purpose (`--ignore-columns`, `null` in `--map`). */
  ignored: readonly string[];
  /** `--delimiter` (CSV), checked; detected from the header when absent. */
  delimiter?: string | undefined;
  /** `--sheet` (workbooks): the sheet to read. */
  sheet?: string | undefined;
}

/** A file opened in its format. */
export interface OpenedInput {
  /** How the file is written, so that rejects can be written back alike. */
  layout: InputLayout;
  /**
   * The records, in file order, each with where it stands. It must be callable any number of
   * times, each call reading the file again from its start: an import reads every record to
   * validate the whole input, then reads them again to send them, so that an input of a million
   * records is never held in memory.
   */
  records(): AsyncIterable<SourceRecord>;
  /** Where a problem stands in the input's own terms (a workbook's cell, `Commandes!D4`). */
  locateCell?(problem: InputProblem): string | undefined;
}

/** Writes rejected records one at a time, as the import meets them. */
export interface RejectsWriter {
  add(record: SourceRecord): Promise<void>;
  /** Finishes the file; resolves to the number of records written. */
  close(): Promise<number>;
}
