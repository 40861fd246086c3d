/**
 * An import command of any kind (`orders import`, `refs contacts import`): its flags, checked, go
 * to the import pipeline (src/import/run-import.ts) with the command's `ImportKind`; this module
 * renders what it returns: progress and the summary on stderr, `--json` on stdout, CI output.
 */
import type { Context } from '../../command-support/context.js';
import { parseDuration } from '../../config/duration.js';
import { CliError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { InvalidInputError } from '../../import/check/validate.js';
import { type ImportKind, ORDER_IMPORT } from '../../import/kind.js';
import { formatChoices } from '../../import/read/formats.js';
import { inputLimits } from '../../import/read/limits.js';
import {
  ImportProgress,
  type ProgressOptions,
  ReadingProgress,
  renderSummary,
} from '../../import/report/progress.js';
import { emptyCounts, type ImportCounts, reportFormatFor, reportRecord } from '../../import/report/report.js';
import { type DryRunResult, type ImportResult, runImport } from '../../import/run-import.js';
import type { SubmitStop } from '../../import/send/submit.js';
import { formatCount } from '../../io/numbers.js';
import { escapeControl, excerpt } from '../../io/quote.js';
import { wrapForStderr, writeNote } from '../../io/wrap.js';
import type { ImportFlags } from '../orders/index.js';
import { awaitProgress, awaitRequest } from './await.js';
import type { AwaitFlags } from './await-options.js';
import { ImportCiOutput, type StepOutcome } from './import-ci.js';

/**
 * An import command's flags and its input, typed by the declarations of `orders import`. Those of
 * `refs contacts import` are a subset of them (no --check-refs, no size limits), so its `run()`
 * passes them as they are, and a flag declared differently by the two breaks the compile.
 */
export type ImportOptions = ImportFlags & { input: string };

export const DEFAULT_CONCURRENCY = 8;
const MAX_CONCURRENCY = 256;

/** What an import command of another kind says in its own words, after the summary. */
export interface ImportAdvice {
  /** How to settle the records whose outcome is unknown (replaces the orders' advice). */
  unknown(count: number): string;
  /** A note after the records not created (the ids of those created, say); undefined for none. */
  afterSummary?(result: ImportResult, options: ImportOptions): string | undefined;
}

/** An import of any kind (orders, contact references): the pipeline run, its result rendered. */
export async function runImportCommand(
  options: ImportOptions,
  ctx: Context,
  kind: ImportKind,
  advice?: ImportAdvice,
): Promise<void> {
  // Checked before anything else: a wrong flag is exit 2 before the step outputs' run begins.
  const parsed = { concurrency: parseConcurrency(options.concurrency), limits: inputLimits(options) };
  if (options.report !== undefined) reportFormatFor(options.report);
  checkStdinOptions(options, kind);
  if ((options as AwaitFlags).await !== undefined && options.dryRun) {
    throw new UsageError(
      '--await waits for the orders a run creates, and a dry run creates none: drop --dry-run or --await.',
    );
  }
  if (options.offline && !options.dryRun) {
    throw new UsageError(
      '--offline goes with --dry-run: a run that sends needs the ledger and the service; add --dry-run, or drop --offline.',
    );
  }
  const ci = new ImportCiOutput(ctx, options, {
    command: `ordercli ${kind.command}`,
    keyName: kind.keyField,
    recordName: kind.one,
    recordsName: kind.many,
  });
  let end: StepOutcome & { failure?: Error | undefined };
  try {
    end = await runImportAndRender(options, parsed, ctx, kind, ci, advice);
  } catch (error) {
    const exitCode = exitCodeOf(error, ctx);
    const invalid = error instanceof InvalidInputError ? error.counts : undefined;
    const counts = invalid && { ...emptyCounts(invalid.total), invalid: invalid.invalid };
    // Nothing of an invalid input is sent: its valid records are the ones not sent.
    if (counts) counts.notSent = invalid!.total - invalid!.invalid;
    const report = error instanceof InvalidInputError ? error.report : undefined;
    await ci.stepOutputs({ counts, exitCode, report });
    throw error;
  }
  await ci.stepOutputs(end);
  if (end.failure) throw end.failure;
  ctx.exitCode = end.exitCode;
}

/** Runs the pipeline and renders its end; what the step outputs say of it. */
async function runImportAndRender(
  options: ImportOptions,
  { concurrency, limits }: { concurrency: number; limits: ReturnType<typeof inputLimits> },
  ctx: Context,
  kind: ImportKind,
  ci: ImportCiOutput,
  advice: ImportAdvice | undefined,
): Promise<StepOutcome & { failure?: Error | undefined }> {
  const { io } = ctx;
  const progress = progressOptions(ctx, kind);
  const awaiting = await awaitRequest(options as AwaitFlags, ctx, options.input);
  let sendingCounts: Readonly<ImportCounts> | undefined;
  const result = await runImport(
    {
      kind,
      input: options.input,
      format: options.format,
      sheet: options.sheet,
      delimiter: options.delimiter,
      mapFile: options.map,
      ignoreColumns: parseIgnoreColumns(options.ignoreColumns),
      limits,
      concurrency,
      dryRun: Boolean(options.dryRun),
      offline: Boolean(options.offline),
      ...(awaiting ? { await: awaiting } : {}),
      skipInvalid: Boolean(options.skipInvalid),
      checkRefs: Boolean(options.checkRefs),
      journal: options.journal,
      retryUnknown: Boolean(options.retryUnknown),
      allowNewLedger: Boolean(options.force),
      report: options.report,
      rejects: options.rejects,
      keepRecordResults: ctx.json,
    },
    ctx,
    {
      onNote: (text) => writeNote(io, text),
      onReadingStart: (counts) => {
        const reading = new ReadingProgress(io, counts, progress);
        reading.start();
        return () => {
          reading.stop();
          // The lines of a log keep their period from one phase to the next.
          progress.lastLineAt = reading.lastLineAt;
        };
      },
      onSendingStart: (counts) => {
        sendingCounts = counts;
        const sending = new ImportProgress(io, counts, progress);
        sending.start();
        return () => sending.stop();
      },
      onAwaitStart: (waiter) => awaitProgress(io, waiter, sendingCounts ?? emptyCounts(0), progress),
      onResult: ci.onResult,
    },
  ).catch(async (error: unknown) => {
    await ci.failed(error);
    throw error;
  });
  if (result.dryRun) {
    ci.dryRunAnnotations(result);
    renderDryRun(ctx, result, kind);
    await ci.dryRunSummary(result);
    const { total, invalid } = result.counts;
    const counts = { ...emptyCounts(total), invalid, notSent: total - invalid };
    return { counts, exitCode: ExitCode.Ok };
  }
  ci.importAnnotations();
  renderImport(ctx, options, result, kind, advice);
  await ci.importSummary(result, stopLabel(result.stopped));
  const report = result.written.report ? options.report : undefined;
  const { counts, failure } = result;
  return { counts, exitCode: failure ? exitCodeOf(failure, ctx) : result.exitCode, report, failure };
}

/** The exit code main() gives an error (src/cli/main.ts). */
function exitCodeOf(error: unknown, ctx: Context): number {
  if (error instanceof CliError) return error.exitCode;
  return ctx.signal.aborted ? ExitCode.Interrupted : ExitCode.Failure;
}

/**
 * For tests only, not in the contract: the period of the progress lines printed when stderr is
 * not a terminal (a duration such as `200ms`; default 5 s), so that a test sees them without
 * waiting for seconds.
 */
const PROGRESS_INTERVAL_VARIABLE = 'ORDERCLI_PROGRESS_INTERVAL';

/** How an import's progress is shown, for each of its phases (reading, sending). */
function progressOptions(ctx: Context, kind: ImportKind): ProgressOptions {
  const interval = ctx.env[PROGRESS_INTERVAL_VARIABLE];
  const options: ProgressOptions = { noun: kind.many, signal: ctx.signal };
  if (interval)
    options.lineIntervalMs = parseDuration(interval, { name: PROGRESS_INTERVAL_VARIABLE, minMs: 10 });
  return options;
}

/**
 * Standard input has no name to tell its format or to name its history in the ledger: every option it
 * needs that is missing is named in one message, so that one fix is enough.
 */
function checkStdinOptions(options: ImportOptions, kind: ImportKind): void {
  if (options.input !== '-') return;
  const missing: string[] = [];
  if (options.format === undefined) {
    missing.push(`--format ${formatChoices()} (standard input has no file name to tell its format)`);
  }
  if (!options.dryRun && options.journal === undefined) {
    missing.push(
      `--journal <name> (the name of its history in the order ledger, which orders journal and orders resolve take)`,
    );
  }
  if (missing.length === 0) return;
  const flags = [
    options.format === undefined ? '--format ndjson' : '',
    !options.dryRun && options.journal === undefined ? `--journal ${kind.ledger}-from-stdin` : '',
  ].filter((flag) => flag !== '');
  const error = new UsageError(`Importing standard input needs ${missing.join(' and ')}.`);
  error.hint = `for example: cat <file> | ordercli ${kind.command} - ${flags.join(' ')}`;
  throw error;
}

/** `--ignore-columns Date,Colis --ignore-columns Commentaire`: the headers named, in one list. */
function parseIgnoreColumns(values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const names = values
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) {
    throw new UsageError(
      `--ignore-columns takes the headers of the columns to leave out, as the file writes them, separated by commas (--ignore-columns Date,Colis), not ${JSON.stringify(values.join(','))}.`,
    );
  }
  return names;
}

function parseConcurrency(value: string | undefined): number {
  if (value === undefined) return DEFAULT_CONCURRENCY;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) {
    throw new UsageError(
      `--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, not ${JSON.stringify(value)}.`,
    );
  }
  return n;
}

function renderDryRun(ctx: Context, result: DryRunResult, kind: ImportKind): void {
  const { io } = ctx;
  const { counts, ledger, baseUrl } = result;
  const lines = [
    `Dry run of ${escapeControl(result.input)}: ${formatCount(counts.total)} ${counts.total === 1 ? kind.one : kind.many} read, ${formatCount(counts.valid)} valid, ${formatCount(counts.invalid)} invalid; nothing was sent.`,
  ];
  if (ledger && (ledger.created > 0 || ledger.inDoubt > 0)) {
    lines.push(
      `The order ledger of ${baseUrl} records ${formatCount(ledger.created)} of these ${kind.many} as created (a real run skips them) and ${formatCount(ledger.inDoubt)} as in doubt or being sent (a real run does not send them).`,
    );
  }
  io.err(wrapForStderr(io, `${lines.join('\n')}\n`));
  if (ctx.json) {
    const json = {
      input: result.input,
      dryRun: true,
      counts,
      ledger: ledger ?? null,
      problems: result.problems,
    };
    io.out(`${JSON.stringify(json, null, 2)}\n`);
  }
}

function renderImport(
  ctx: Context,
  options: ImportOptions,
  result: ImportResult,
  kind: ImportKind,
  advice: ImportAdvice | undefined,
): void {
  const { io } = ctx;
  const stopped = stopLabel(result.stopped);
  io.err(
    wrapForStderr(
      io,
      renderSummary({
        counts: result.counts,
        durationMs: result.durationMs,
        input: result.input,
        baseUrl: result.baseUrl,
        journal: result.journal,
        report: result.written.report ? options.report : undefined,
        rejects: result.written.rejects ? options.rejects : undefined,
        stopped,
        sent: result.sent,
        sentPerSecond: result.sentPerSecond,
        noun: kind,
      }),
    ),
  );
  if (result.retries > 0) {
    const throttled =
      result.throttledRetries > 0
        ? ` (${formatCount(result.throttledRetries)} after 429 Too Many Requests)`
        : '';
    writeNote(io, `  retried  ${formatCount(result.retries)} requests${throttled}\n`);
  }
  writeNotCreated(
    ctx,
    result,
    { target: resolveTarget(options, result.journal), report: options.report },
    kind,
    advice,
  );
  const note = ctx.json ? undefined : advice?.afterSummary?.(result, options);
  if (note !== undefined) writeNote(io, note);
  if (result.awaitNote !== undefined) writeNote(io, `note: ${result.awaitNote}\n`);
  if (ctx.json) {
    const json = {
      input: result.input,
      journal: result.journal,
      baseUrl: result.baseUrl,
      dryRun: false,
      stopped: stopped ?? null,
      durationMs: Math.round(result.durationMs),
      [kind === ORDER_IMPORT ? 'ordersPerSecond' : 'recordsPerSecond']: Math.round(result.sentPerSecond),
      counts: result.counts,
      [kind === ORDER_IMPORT ? 'orders' : 'records']: result.records.map((record) =>
        reportRecord(record, kind),
      ),
    };
    io.out(`${JSON.stringify(json, null, 2)}\n`);
  }
}

/** Why a run stopped, as the summary and `--json` say it. */
function stopLabel(stop: SubmitStop | undefined): string | undefined {
  if (!stop) return undefined;
  switch (stop.kind) {
    case 'interrupted':
      return 'interrupted';
    case 'credentials':
      return 'the service refused the credentials';
    case 'unreachable':
      return 'the service could not be reached';
    case 'ledger':
      return 'the order ledger could not be written';
    case 'error':
      return 'unexpected error';
  }
}

/** What to name in `orders resolve <…>`: the input as typed, or the journal when it is not the default. */
function resolveTarget(options: ImportOptions, journalShown: string): string {
  if (options.journal === undefined && options.input !== '-') return options.input;
  return journalShown;
}

/** The first orders not created, by name, and how to settle those whose outcome is unknown. */
function writeNotCreated(
  ctx: Context,
  result: ImportResult,
  { target, report }: { target: string; report: string | undefined },
  kind: ImportKind,
  advice: ImportAdvice | undefined,
): void {
  const { counts, notCreated } = result;
  if (notCreated.length === 0) return;
  const lines = notCreated.map(
    (order) =>
      `  ${escapeControl(`${order.location.file}:${order.location.line} ${excerpt(order.key ?? `(no ${kind.keyField})`)} ${order.status}: ${order.message ?? ''}`)}`,
  );
  const total = notCreatedCount(counts);
  if (total > notCreated.length) {
    lines.push(
      `  … and ${formatCount(total - notCreated.length)} more${whereTheRestAre(counts, target, report)}`,
    );
  }
  const heading = `${kind.many[0]!.toUpperCase()}${kind.many.slice(1)} not created`;
  ctx.io.err(wrapForStderr(ctx.io, `${heading}:\n${lines.join('\n')}\n`));
  if (counts.unknown > 0 && advice) {
    ctx.io.err(advice.unknown(counts.unknown));
    return;
  }
  if (counts.unknown > 0) {
    ctx.io.err(
      `${formatCount(counts.unknown)} orders have an unknown outcome: they may exist at the service, so they are not sent again. To settle them:\n` +
        `  1. check each at the service (ordercli orders journal ${target} lists them, with their input line);\n` +
        `  2. record what you found: ordercli orders resolve ${target} --created <externalId>[=<id>] … --not-created <externalId> …\n` +
        `     (or --from-events <file> with the notifications an ordercli listen --log <file> received);\n` +
        '  3. run the same import again: it skips the created ones and sends the others.\n' +
        `  (--retry-unknown sends every unknown order again without asking: only when you know none exists.)\n`,
    );
  }
}

/**
 * Where the records left out of the list are: the report when there is one; else the journal
 * lists those in doubt, and a report of the next run lists every one (the created are skipped).
 */
function whereTheRestAre(counts: ImportCounts, target: string, report: string | undefined): string {
  if (report !== undefined) return ` (see the report ${escapeControl(report)})`;
  const unknown =
    counts.unknown > 0
      ? `ordercli orders journal ${escapeControl(target)} lists those whose outcome is unknown; `
      : '';
  return `: ${unknown}for a line each, run the same import again with --report report.csv (it skips those created and sends the failed ones again)`;
}

function notCreatedCount(counts: ImportCounts): number {
  return counts.failed + counts.unknown + counts.invalid;
}
