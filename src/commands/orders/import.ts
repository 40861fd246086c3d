/**
 * `orders import <path|->`: the flags, checked, go to the import pipeline (src/import/run-import.ts);
 * this module renders what it returns: progress and the summary on stderr, `--json` on stdout, and
 * in a GitHub Actions job the annotations (stderr) and the job summary (`$GITHUB_STEP_SUMMARY`).
 */
import type { Context } from '../../cli/context.js';
import { InputError, UsageError } from '../../core/errors.js';
import {
  Annotator,
  appendJobSummary,
  inGitHubActions,
  type JobSummary,
  renderJobSummary,
} from '../../import/github-actions.js';
import { inputLimits } from '../../import/limits.js';
import { formatCount, ImportProgress, renderSummary } from '../../import/progress.js';
import { type ImportCounts, keyedResult, reportFormatFor, reportRecord } from '../../import/report.js';
import { type DryRunResult, type ImportResult, runImport } from '../../import/run-import.js';
import type { SubmitStop } from '../../import/submit.js';
import type { InputFormat } from '../../import/types.js';
import { escapeControl, excerpt } from '../../io/quote.js';
import { wrapForStderr, writeNote } from '../../io/wrap.js';

export interface ImportOptions {
  input: string;
  format?: string;
  delimiter?: string;
  map?: string;
  concurrency?: string;
  dryRun?: boolean;
  skipInvalid?: boolean;
  checkRefs?: boolean;
  journal?: string;
  retryUnknown?: boolean;
  report?: string;
  rejects?: string;
  /** `--max-order-bytes`, `--max-cell-bytes`: sizes such as `2MiB` (default 1 MiB and 64 KiB). */
  maxOrderBytes?: string;
  maxCellBytes?: string;
}

export const DEFAULT_CONCURRENCY = 8;
const MAX_CONCURRENCY = 256;

export async function run(options: ImportOptions, ctx: Context): Promise<void> {
  const concurrency = parseConcurrency(options.concurrency);
  const limits = inputLimits(options);
  if (options.report !== undefined) reportFormatFor(options.report);
  if (options.input === '-' && !options.dryRun && options.journal === undefined) {
    throw new UsageError(
      'Importing standard input needs --journal <file>: the journal is what makes a re-run skip the orders already created.',
    );
  }
  const { io } = ctx;
  // Annotations wait until sending ends, so that none is cut into by the progress bar.
  const annotations: string[] = [];
  const annotator = inGitHubActions(ctx.env)
    ? new Annotator({
        input: options.input,
        cwd: ctx.cwd,
        env: ctx.env,
        keyName: 'externalId',
        write: (line) => annotations.push(line),
      })
    : undefined;
  const flushAnnotations = (where: string): void => {
    annotator?.finish(where);
    for (const line of annotations.splice(0)) io.err(line);
  };
  let result: DryRunResult | ImportResult;
  try {
    result = await runImport(
      {
        input: options.input,
        format: options.format as InputFormat | undefined,
        delimiter: options.delimiter,
        mapFile: options.map,
        limits,
        concurrency,
        dryRun: Boolean(options.dryRun),
        skipInvalid: Boolean(options.skipInvalid),
        checkRefs: Boolean(options.checkRefs),
        journal: options.journal,
        retryUnknown: Boolean(options.retryUnknown),
        report: options.report,
        rejects: options.rejects,
        keepOrderResults: ctx.json,
      },
      ctx,
      {
        onLockWait: (message) => io.err(`${message}\n`),
        onNote: (text) => writeNote(io, text),
        onSendingStart: (counts) => {
          const progress = new ImportProgress(io, counts);
          progress.start();
          return () => progress.stop();
        },
        onResult: annotator ? (order) => annotator.result(keyedResult(order)) : undefined,
      },
    );
  } catch (error) {
    if (error instanceof InputError) {
      for (const problem of error.problems) annotator?.problem(problem);
      flushAnnotations('every problem is listed in the log');
      await appendSummary(ctx, {
        ...summaryBase(options),
        // Nothing was sent, so no report was written.
        report: undefined,
        rejects: undefined,
        outcome: error.message,
        problems: error.problems.slice(0, SUMMARY_ROWS),
        problemsTotal: error.problems.length,
      });
    }
    throw error;
  }
  if (result.dryRun) {
    for (const problem of result.problems) annotator?.problem(problem);
    flushAnnotations('every problem is listed in the log');
    renderDryRun(ctx, result);
    await appendSummary(ctx, {
      ...summaryBase(options),
      report: undefined,
      rejects: undefined,
      outcome: 'Dry run: nothing was sent.',
      counts: [
        ['total', result.counts.total],
        ['valid', result.counts.valid],
        ['invalid', result.counts.invalid],
      ],
      problems: result.problems.slice(0, SUMMARY_ROWS),
      problemsTotal: result.problems.length,
    });
    return;
  }
  flushAnnotations(
    options.report !== undefined
      ? `every order is in the report ${options.report}`
      : 'pass --report report.xml to list every order',
  );
  renderImport(ctx, options, result);
  await appendSummary(ctx, importSummary(options, result));
  if (result.failure) throw result.failure;
  ctx.exitCode = result.exitCode;
}

/** Rows of a job summary's lists: the first orders not created, the first problems. */
const SUMMARY_ROWS = 10;

function summaryBase(options: ImportOptions): JobSummary {
  return {
    title: `ordercli orders import ${options.input === '-' ? 'stdin' : options.input}${options.dryRun ? ' --dry-run' : ''}`,
    outcome: '',
    counts: [],
    keyName: 'externalId',
    recordsName: 'orders',
    notCreated: [],
    notCreatedTotal: 0,
    report: options.report,
    rejects: options.rejects,
  };
}

function importSummary(options: ImportOptions, result: ImportResult): JobSummary {
  const { counts } = result;
  const seconds = (result.durationMs / 1000).toFixed(1);
  const stopped = stopLabel(result.stopped);
  const rows: [string, number][] = [
    ['created', counts.created],
    ['already created', counts.skipped],
    ['failed', counts.failed],
    ['unknown', counts.unknown],
    ['invalid', counts.invalid],
  ];
  if (counts.notSent > 0) rows.push(['not sent', counts.notSent]);
  rows.push(['total', counts.total]);
  return {
    ...summaryBase(options),
    title: `ordercli orders import ${result.input}`,
    outcome: `${stopped ? `Stopped (${stopped}) after` : 'Finished in'} ${seconds} s: ${formatCount(result.sent)} orders sent to ${result.baseUrl}.`,
    counts: rows,
    notCreated: result.notCreated.slice(0, SUMMARY_ROWS).map(keyedResult),
    notCreatedTotal: notCreatedCount(counts),
  };
}

/** Appends the job summary when `$GITHUB_STEP_SUMMARY` names a file; a failure is one warning. */
async function appendSummary(ctx: Context, summary: JobSummary): Promise<void> {
  const path = ctx.env.GITHUB_STEP_SUMMARY;
  if (!path) return;
  const markdown = ctx.io.redactor.redact(renderJobSummary(summary));
  const warning = await appendJobSummary(path, markdown);
  if (warning) ctx.io.err(warning);
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

function renderDryRun(ctx: Context, result: DryRunResult): void {
  const { io } = ctx;
  const { counts, journal, ledger, baseUrl } = result;
  const lines = [
    `Dry run of ${result.input}: ${formatCount(counts.total)} orders read, ${formatCount(counts.valid)} valid, ${formatCount(counts.invalid)} invalid; nothing was sent.`,
  ];
  if (journal) {
    lines.push(
      `The journal ${journal.path} records ${formatCount(journal.created)} orders already created at ${baseUrl} (a real run skips them) and ${formatCount(journal.unknown)} with an unknown outcome.`,
    );
  }
  if (ledger && (ledger.created > 0 || ledger.inDoubt > 0)) {
    lines.push(
      `The order ledger of ${baseUrl} records ${formatCount(ledger.created)} of these orders as created by another command or input (a real run skips them) and ${formatCount(ledger.inDoubt)} as in doubt.`,
    );
  }
  io.err(wrapForStderr(io, `${lines.join('\n')}\n`));
  if (ctx.json) {
    const json = {
      input: result.input,
      dryRun: true,
      counts,
      journal: journal ?? null,
      ledger: ledger ?? null,
      problems: result.problems,
    };
    io.out(`${JSON.stringify(json, null, 2)}\n`);
  }
}

function renderImport(ctx: Context, options: ImportOptions, result: ImportResult): void {
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
        report: options.report,
        rejects: options.rejects,
        stopped,
        sent: result.sent,
        sentPerSecond: result.sentPerSecond,
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
  writeNotCreated(ctx, result, resolveTarget(options, result.journal));
  if (ctx.json) {
    const json = {
      input: result.input,
      journal: result.journal,
      baseUrl: result.baseUrl,
      dryRun: false,
      stopped: stopped ?? null,
      durationMs: Math.round(result.durationMs),
      ordersPerSecond: Math.round(result.sentPerSecond),
      counts: result.counts,
      orders: result.orders.map(reportRecord),
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
    case 'journal':
      return 'the journal could not be written';
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
function writeNotCreated(ctx: Context, result: ImportResult, target: string): void {
  const { counts, notCreated } = result;
  if (notCreated.length === 0) return;
  const lines = notCreated.map(
    (order) =>
      `  ${escapeControl(`${order.location.file}:${order.location.line} ${excerpt(order.externalId ?? '(no externalId)')} ${order.status}: ${order.message ?? ''}`)}`,
  );
  const total = notCreatedCount(counts);
  if (total > notCreated.length) {
    lines.push(`  … and ${formatCount(total - notCreated.length)} more (see --report)`);
  }
  ctx.io.err(wrapForStderr(ctx.io, `Orders not created:\n${lines.join('\n')}\n`));
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

function notCreatedCount(counts: ImportCounts): number {
  return counts.failed + counts.unknown + counts.invalid;
}
