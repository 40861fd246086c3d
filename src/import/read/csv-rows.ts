/**
 * Step 2 for CSV: the dialect (delimiter from the header line, BOM, line ending) and the rows,
 * streamed by csv-parse, each with the lines it spans in the file. Line numbers are counted from
 * the bytes themselves: csv-parse's own line count is wrong for CRLF line breaks inside quotes.
 */
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import type { CsvError } from 'csv-parse';
import { InputError, UsageError } from '../../core/errors.js';
import { excerpt, quote } from '../../io/quote.js';
import { readBytes } from './input-file.js';
import { DEFAULT_LIMITS, formatSize, type InputLimits } from './limits.js';

/** One CSV record and where it stands (1-based lines; a quoted line break makes it span several). */
export interface CsvRow {
  cells: string[];
  line: number;
  endLine: number;
  /** Problems found in the row's cells by its reader (a workbook's error cell); none for CSV. */
  problems?: import('../../core/errors.js').InputProblem[];
}

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

const CANDIDATE_DELIMITERS = [';', '\t', ','] as const;
/** Longest header line read to detect the dialect. */
const MAX_HEADER_BYTES = 1024 * 1024;

/** The delimiter named by `--delimiter`: one character, or `tab` / `\t`. */
export function delimiterOption(value: string): string {
  if (value === 'tab' || value === '\\t' || value === '\t') return '\t';
  if ([...value].length !== 1 || value === '"' || value === '\r' || value === '\n') {
    throw new UsageError(`--delimiter takes one character such as , ; or tab, not ${quote(value)}.`);
  }
  return value;
}

/** The delimiter that occurs most often outside quotes in a header line (`,` when none does). */
export function detectDelimiter(headerLine: string): string {
  const counts = new Map<string, number>(CANDIDATE_DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of headerLine) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  let bestCount = 0;
  for (const [delimiter, count] of counts) {
    if (count > bestCount) {
      best = delimiter;
      bestCount = count;
    }
  }
  return best;
}

/** Reads the header of a CSV file and decides its dialect. */
export async function readCsvLayout(path: string, file: string, delimiter?: string): Promise<CsvLayout> {
  const head = await readHead(path, file);
  if (head.length >= MAX_HEADER_BYTES && !head.includes(0x0a)) {
    throw new InputError(
      `The first line of ${file} is longer than ${formatSize(MAX_HEADER_BYTES)}, too long to be the header of a CSV file of orders; nothing was sent.`,
      [
        {
          file,
          line: 1,
          message: `the first line must name the columns (externalId, contact.internalReferenceId, ...) and end within ${formatSize(MAX_HEADER_BYTES)}: is this the right file?`,
        },
      ],
    );
  }
  const bom = head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
  const text = head.subarray(bom ? 3 : 0).toString('utf8');
  const headerText = text.slice(0, endOfFirstRecord(text));
  if (headerText.trim() === '') {
    throw new InputError(`${file} has no header line; nothing was sent.`, [
      {
        file,
        line: 1,
        message: 'the first line must name the columns (externalId, contact.internalReferenceId, ...)',
      },
    ]);
  }
  const firstLine = headerText.split('\n')[0]!;
  const layout: CsvLayout = {
    header: [],
    delimiter: delimiter ?? detectDelimiter(firstLine),
    lineEnding: headerText.endsWith('\r\n') ? '\r\n' : '\n',
    bom,
  };
  // Only the header is parsed here: a syntax error further down is reported when the rows are read.
  const { parse } = await import('csv-parse/sync');
  const { CsvError } = await import('csv-parse');
  try {
    const [header] = parse(headerText, {
      delimiter: layout.delimiter,
      relax_column_count: true,
    }) as string[][];
    layout.header = header ?? [];
  } catch (error) {
    if (error instanceof CsvError) throw csvSyntaxError(error, file, 0, 1);
    throw error;
  }
  return layout;
}

/** Where the first record of a CSV text ends (after its line break), quoted line breaks included. */
function endOfFirstRecord(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') quoted = !quoted;
    else if (char === '\n' && !quoted) return i + 1;
  }
  return text.length;
}

/** How the rows of a CSV file are read. */
export interface CsvReadOptions {
  /** A row larger than `maxOrderBytes` stops the read, before it is held in memory. */
  limits?: InputLimits;
  /** The name of the column at an index, for problems (its contract path, or its header). */
  columnName?: (index: number) => string | undefined;
}

/** The data rows of a CSV file (the header skipped). */
export function readCsvRows(
  path: string,
  file: string,
  layout: CsvLayout,
  options: CsvReadOptions = {},
): AsyncGenerator<CsvRow> {
  return readCsvRecords(path, file, layout.delimiter, true, options);
}

async function* readCsvRecords(
  path: string,
  file: string,
  delimiter: string,
  skipHeader = false,
  options: CsvReadOptions = {},
): AsyncGenerator<CsvRow> {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const { Parser, CsvError } = await import('csv-parse');
  const PositionedParser = positionedParser(Parser);
  const lines = new LineTracker();
  const parser = new PositionedParser({
    bom: true,
    delimiter,
    skip_empty_lines: true,
    // Spreadsheets leave rows of empty cells (`;;;;`) below the data.
    skip_records_with_empty_values: true,
    // A row with the wrong number of cells is reported as a problem of its order, with the other
    // problems, instead of stopping the whole read at the first one.
    relax_column_count: true,
    // A cell of 50 MiB is refused after its first megabyte instead of being held whole.
    max_record_size: limits.maxOrderBytes,
  });
  const bytes = readBytes(path, file, 'csv');
  // A read that fails (an encoding the file is not in) fails the parser, which the loop below throws.
  pipeline(bytes, lines.tap(), parser, () => undefined);
  let lastEndLine = 0;
  let skip = skipHeader;
  try {
    for await (const record of parser as AsyncIterable<ParsedRecord>) {
      if ('error' in record) {
        const { error } = record;
        const errorLine = lines.lineEndingAt(record.bytes);
        if (error instanceof CsvError && error.code === 'CSV_MAX_RECORD_SIZE') {
          throw rowTooLarge(error, file, Math.max(errorLine, lastEndLine + 1), record.finishedCells, {
            limits,
            columnName: options.columnName,
          });
        }
        throw error instanceof CsvError ? csvSyntaxError(error, file, lastEndLine, errorLine) : error;
      }
      const endLine = lines.lineEndingAt(record.bytes);
      lastEndLine = endLine;
      if (skip) {
        skip = false;
        continue;
      }
      let embedded = 0;
      for (const cell of record.cells) embedded += countNewlines(cell);
      yield { cells: record.cells, line: endLine - embedded, endLine };
    }
  } finally {
    bytes.destroy();
    parser.destroy();
  }
}

/** csv-parse's Parser, whose records carry the byte count at their end (see below). */
function positionedParser(Parser: typeof import('csv-parse').Parser) {
  /**
   * Tags each record with the parser's byte count when it is pushed (the end of the record).
   * csv-parse's own `info: true` would do it too, but builds a dozen-field object per record,
   * which costs a third more time and memory on a million rows. A syntax error is queued after
   * the records parsed before it, instead of failing the stream at once and dropping them.
   */
  return class PositionedParser extends Parser {
    override push(record: unknown, encoding?: BufferEncoding): boolean {
      return super.push(record === null ? null : { cells: record, bytes: this.info.bytes }, encoding);
    }

    override _transform(chunk: Buffer, encoding: BufferEncoding, callback: TransformCallback): void {
      super._transform(chunk, encoding, (error?: Error | null) => callback(this.queue(error)));
    }

    override _flush(callback: TransformCallback): void {
      super._flush((error?: Error | null) => callback(this.queue(error)));
    }

    private queue(error: Error | null | undefined): null {
      if (error) {
        // csv-parse's state, for a row too large: how much of it its finished cells hold.
        const state = (this as unknown as { state?: { record_length?: number } }).state;
        super.push({ error, bytes: this.info.bytes, finishedCells: state?.record_length ?? 0 });
        super.push(null);
      }
      return null;
    }
  };
}

type ParsedRecord =
  | { cells: string[]; bytes: number }
  | { error: Error; bytes: number; finishedCells: number };

/**
 * A row larger than an order may be stops the read where csv-parse stopped buffering it: the
 * cell it stopped in is too large when the row's earlier cells leave it more than a cell's limit.
 */
function rowTooLarge(
  error: CsvError,
  file: string,
  line: number,
  finishedCells: number,
  options: { limits: InputLimits; columnName?: (index: number) => string | undefined },
): InputError {
  const { limits } = options;
  const index = typeof error.column === 'number' ? error.column : undefined;
  const field = index === undefined ? undefined : (options.columnName?.(index) ?? `column ${index + 1}`);
  const cellTooLarge = limits.maxOrderBytes - finishedCells > limits.maxCellBytes;
  const problem = cellTooLarge
    ? {
        file,
        line,
        field,
        message: `is larger than ${formatSize(limits.maxOrderBytes)}, over the ${formatSize(limits.maxCellBytes)} limit for one cell: shorten it, or raise the limits with --max-cell-bytes and --max-order-bytes`,
      }
    : {
        file,
        line,
        message: `the row is larger than ${formatSize(limits.maxOrderBytes)}, the largest order ordercli sends: split the order, or raise the limit with --max-order-bytes`,
      };
  return new InputError(
    `${file} has a ${cellTooLarge ? 'cell' : 'row'} too large to send on line ${line}; nothing was sent.`,
    [problem],
  );
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/**
 * A CSV syntax error stops the read: after it, rows and lines can no longer be trusted. `errorLine`
 * is where the parser stood; an unclosed quote is reported where its row starts.
 */
function csvSyntaxError(
  error: CsvError,
  file: string,
  lastEndLine: number,
  errorLine = lastEndLine + 1,
): InputError {
  const rowStart = lastEndLine + 1;
  let line = Math.max(errorLine, rowStart);
  let message: string;
  // csv-parse names this one without its CSV_ prefix.
  switch (error.code as string) {
    case 'CSV_QUOTE_NOT_CLOSED':
      line = rowStart;
      message = 'a quoted cell that starts in this row is never closed (a " is missing)';
      break;
    case 'CSV_INVALID_CLOSING_QUOTE':
      message =
        'a quoted cell goes on after its closing quote: write a quote inside a quoted cell as two quotes ("")';
      break;
    case 'INVALID_OPENING_QUOTE':
      message =
        'a quote inside a cell that is not quoted: put the whole cell in quotes and double the quote ("")';
      break;
    default:
      message = excerpt(error.message.replace(/\s+at line \d+.*$/, ''), 200);
  }
  return new InputError(`${file} is not valid CSV from line ${line} on; nothing was sent.`, [
    { file, line, message },
  ]);
}

/** Readers of a non-existent file fail before this point (input-file.ts); this only guards the header. */
async function readHead(path: string, file: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of readBytes(path, file, 'csv')) {
    const buffer = chunk as Buffer;
    chunks.push(buffer);
    length += buffer.length;
    if (buffer.includes(0x0a) || length >= MAX_HEADER_BYTES) break;
  }
  return Buffer.concat(chunks);
}

/**
 * Turns byte offsets into line numbers. It sees every chunk before the parser does, and keeps
 * only the chunks the parser has not finished with.
 */
class LineTracker {
  private readonly chunks: Buffer[] = [];
  /** Byte offset of `chunks[0]` in the file. */
  private chunksStart = 0;
  /** Bytes counted so far, and the newlines among them. */
  private counted = 0;
  private newlines = 0;
  private lastByte = -1;

  tap(): Transform {
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) => {
        this.chunks.push(chunk);
        callback(null, chunk);
      },
    });
  }

  /** The 1-based line of the last byte before `offset` (the end of a record). */
  lineEndingAt(offset: number): number {
    while (this.counted < offset) {
      const chunk = this.chunks[0];
      if (chunk === undefined) break;
      const from = this.counted - this.chunksStart;
      const to = Math.min(chunk.length, offset - this.chunksStart);
      for (let i = chunk.indexOf(0x0a, from); i !== -1 && i < to; i = chunk.indexOf(0x0a, i + 1))
        this.newlines++;
      if (to > from) this.lastByte = chunk[to - 1]!;
      this.counted = this.chunksStart + to;
      if (to === chunk.length) {
        this.chunksStart += chunk.length;
        this.chunks.shift();
      }
    }
    return this.newlines + (this.lastByte === 0x0a ? 0 : 1);
  }
}
