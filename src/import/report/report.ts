/**
 * The outcome of each order (or record of another `ImportKind`) of an import, in input order: the
 * `--report` file (CSV, NDJSON or JUnit XML), the counts behind the progress bar and the summary,
 * and the `--json` result object.
 */

import { createWriteStream, type WriteStream } from 'node:fs';
import { extname } from 'node:path';
import { type InputProblem, UsageError } from '../../core/errors.js';
import { codeWords } from '../../io/code-words.js';
import { csvField, formulaSafe } from '../../io/delimited.js';
import { escapeControl } from '../../io/quote.js';
import type { RecordOutcome, SourceLocation } from '../types.js';
import { JUnitWriter, type KeyedResult } from './junit.js';
import { OutputWriteError } from './output-error.js';

/**
 * The status of an order in the report: the contract's five, and `not-sent` for an order this run
 * never sent because it stopped first (Ctrl-C, credentials refused, service unreachable): neither
 * refused by the service nor in doubt, it is simply sent by the next run.
 */
export type ReportStatus = RecordOutcome | 'not-sent';

/** What happened to one record; `location` is where it starts in the input. */
export interface RecordResult {
  index: number;
  /** The record's key (an order's `externalId`); undefined when the input lacks it. */
  key: string | undefined;
  status: ReportStatus;
  httpStatus?: number;
  /** The service's id and code of the created order (also for `skipped`, from the ledger, and `exists`). */
  id?: string | number;
  code?: string;
  message?: string;
  location: SourceLocation;
  /** An invalid order's problems, each with its own line and field (for JUnit and CI annotations). */
  problems?: InputProblem[];
  /**
   * `--await validated`: when its `sales_order_validated` notification arrived (null: not within
   * the wait, `validation` says why); absent without --await.
   */
  validatedAt?: string | null;
  validation?: 'validated' | 'timeout' | 'interrupted';
  /** Milliseconds from its creation (by this run) to its validation. */
  validatedAfterMs?: number;
}

export interface ImportCounts {
  total: number;
  created: number;
  failed: number;
  skipped: number;
  invalid: number;
  unknown: number;
  /** Records the service already had (a contact reference answered 409): not failures. */
  exists: number;
  /** Orders this run stopped before sending (interrupt, refused credentials, unreachable). */
  notSent: number;
  /** `--await validated` only: orders created (or there) whose validation arrived, and not. */
  validated?: number;
  notValidated?: number;
}

export function emptyCounts(total: number): ImportCounts {
  return { total, created: 0, failed: 0, skipped: 0, invalid: 0, unknown: 0, exists: 0, notSent: 0 };
}

/**
 * Records this run has an outcome for: what the progress counts. Those it stopped before sending
 * are none, so that the bar stands still after Ctrl-C rather than racing through the rest.
 */
export function doneCount(counts: ImportCounts): number {
  return counts.created + counts.failed + counts.skipped + counts.invalid + counts.unknown + counts.exists;
}

/** Records that are where they should be: created, created before, or already at the service. */
export function settledCount(counts: ImportCounts): number {
  return counts.created + counts.skipped + counts.exists;
}

/** Adds one result to the counts. */
export function countResult(counts: ImportCounts, result: RecordResult): void {
  if (result.status === 'not-sent') counts.notSent++;
  else counts[result.status]++;
}

export type ReportFormat = 'csv' | 'ndjson' | 'junit';

/** The report's format from its extension: `.csv`, `.ndjson`/`.jsonl`, or `.xml` (JUnit). */
export function reportFormatFor(path: string): ReportFormat {
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  if (ext === '.xml') return 'junit';
  throw new UsageError(
    `--report ${path}: name the file .csv, .ndjson or .xml (JUnit), which decides its format.`,
  );
}

export const REPORT_COLUMNS = [
  'externalId',
  'status',
  'httpStatus',
  'id',
  'code',
  'message',
  'line',
] as const;

/** The columns of a report: the key first, named by its field (`externalId` for orders). */
export interface ReportLayout {
  keyField: string;
  reportColumns: readonly string[];
  /** The command, which names a JUnit report's `testsuites`. */
  command: string;
}

const ORDER_REPORT: ReportLayout = {
  keyField: 'externalId',
  reportColumns: REPORT_COLUMNS,
  command: 'orders import',
};

/** One result as a report row, every column present (empty or null when it does not apply). */
export function reportRecord(
  result: RecordResult,
  layout: ReportLayout = ORDER_REPORT,
): Record<string, string | number | null> {
  const values: Record<string, string | number | null> = {
    [layout.keyField]: result.key ?? null,
    status: result.status,
    httpStatus: result.httpStatus ?? null,
    id: result.id ?? null,
    code: result.code ?? null,
    message: result.message ?? null,
    line: result.location.line,
    validatedAt: result.validatedAt ?? null,
  };
  const record: Record<string, string | number | null> = {};
  for (const column of layout.reportColumns) record[column] = values[column] ?? null;
  // --await validated: when each order's validation arrived (null: not within the wait).
  if (result.validation !== undefined) record.validatedAt = result.validatedAt ?? null;
  return record;
}

/** One order's result as the JUnit report and the CI annotations take a keyed record. */
export function keyedResult(result: RecordResult): KeyedResult {
  const ids = [
    result.id !== undefined ? `id ${result.id}` : '',
    result.code !== undefined ? `code ${result.code}` : '',
  ].filter((part) => part !== '');
  return {
    key: result.key,
    status: result.status,
    message: result.message,
    file: result.location.file,
    line: result.location.line,
    endLine: result.location.endLine,
    problems: result.problems,
    output: ids.length > 0 ? ids.join(', ') : undefined,
    notValidated: notValidatedReason(result),
    validatedAt: result.validatedAt ?? undefined,
  };
}

/** Why an awaited order is not validated, in words (undefined: validated, or not awaited). */
export function notValidatedReason(result: RecordResult): string | undefined {
  if (result.validation === 'timeout') return 'not validated within the --await-timeout';
  if (result.validation === 'interrupted') return 'not validated when the wait was interrupted';
  return undefined;
}

/** Streams report lines to a file as results arrive; nothing is kept in memory. */
export class ReportWriter {
  readonly path: string;
  readonly format: ReportFormat;
  private readonly stream: WriteStream | undefined;
  private readonly junit: JUnitWriter | undefined;
  private readonly layout: ReportLayout;
  private error: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    path: string,
    format: ReportFormat,
    output: WriteStream | JUnitWriter,
    layout: ReportLayout,
  ) {
    this.path = path;
    this.format = format;
    this.layout = layout;
    if (output instanceof JUnitWriter) {
      this.junit = output;
      return;
    }
    this.stream = output;
    output.on('error', (error) => {
      this.error = error;
    });
  }

  /** Creates (or replaces) the report file; fails now, before anything is sent, if it cannot. */
  static async open(path: string, layout: ReportLayout = ORDER_REPORT): Promise<ReportWriter> {
    const format = reportFormatFor(path);
    if (format === 'junit') {
      const junit = await JUnitWriter.open(path, {
        name: `ordercli ${layout.command}`,
        keyName: layout.keyField,
      });
      return new ReportWriter(path, format, junit, layout);
    }
    const stream = createWriteStream(path, { flags: 'w' });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', (error) =>
        reject(
          new UsageError(
            `Cannot write the report ${path} (${codeWords((error as NodeJS.ErrnoException).code ?? error.message)}).`,
          ),
        ),
      );
    });
    const writer = new ReportWriter(path, format, stream, layout);
    if (format === 'csv') stream.write(`${layout.reportColumns.map(csvField).join(',')}\r\n`);
    return writer;
  }

  write(result: RecordResult): void {
    if (this.junit) {
      this.junit.write(keyedResult(result));
      return;
    }
    const stream = this.stream as WriteStream;
    const record = reportRecord(result, this.layout);
    if (this.format === 'ndjson') {
      stream.write(`${JSON.stringify(record)}\n`);
      return;
    }
    const line = this.layout.reportColumns
      .map((column) => {
        const value = record[column] ?? null;
        // Opened in a spreadsheet: no formula runs, no escape sequence stays raw (the service's
        // messages are not ours to trust).
        return value === null ? '' : csvField(escapeControl(formulaSafe(String(value))));
      })
      .join(',');
    stream.write(`${line}\r\n`);
  }

  /** Ends the report (a JUnit report gets its counts); safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  private async end(): Promise<void> {
    if (this.junit) return this.junit.close();
    const stream = this.stream as WriteStream;
    await new Promise<void>((resolve) => stream.end(() => resolve()));
    if (this.error) throw new OutputWriteError('the report', this.path, this.error);
  }
}

/**
 * Receives results in completion order and hands them on in input order, so that the report
 * reads like the input; only results ahead of the oldest unfinished order wait here.
 */
export class ResultSequencer {
  private next = 0;
  /**
   * Results ahead of `next`, each at `index % length`: a ring that doubles when one is further
   * ahead than it holds. (A Map that fills and empties at every result allocates a new table
   * each time, in the old generation: a million orders left hundreds of megabytes of garbage.)
   */
  private ahead: (RecordResult | undefined)[] = new Array<RecordResult | undefined>(64).fill(undefined);

  constructor(private readonly emit: (result: RecordResult) => void) {}

  push(result: RecordResult): void {
    if (result.index !== this.next) {
      while (result.index - this.next >= this.ahead.length) this.grow();
      this.ahead[result.index % this.ahead.length] = result;
      return;
    }
    this.emit(result);
    this.next++;
    for (;;) {
      const slot = this.next % this.ahead.length;
      const waiting = this.ahead[slot];
      if (waiting?.index !== this.next) return;
      this.ahead[slot] = undefined;
      this.emit(waiting);
      this.next++;
    }
  }

  private grow(): void {
    const bigger = new Array<RecordResult | undefined>(this.ahead.length * 2).fill(undefined);
    for (const waiting of this.ahead) if (waiting) bigger[waiting.index % bigger.length] = waiting;
    this.ahead = bigger;
  }
}
