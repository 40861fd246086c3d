/**
 * `orders import <path|->`: validate the whole input, then send each order once, journaled, with
 * progress on stderr, a summary, an optional report and rejects file, and `--json` on stdout.
 * The steps live in src/import/; this module only wires them to the command line.
 */
import { resolve } from 'node:path';
import type { RetryEvent } from '../../api/client.js';
import type { Context } from '../../cli/context.js';
import { configDir } from '../../config/profiles.js';
import { CancelledError, CliError, type InputProblem, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import {
  JournalWriteError,
  normalizeBaseUrl,
  OrderJournal,
  OtherBaseUrlError,
} from '../../import/journal.js';
import { journalOfInput } from '../../import/journal-location.js';
import { OrderLedger } from '../../import/ledger.js';
import { inputLimits } from '../../import/limits.js';
import { fmt, ImportProgress, renderSummary } from '../../import/progress.js';
import {
  countResult,
  emptyCounts,
  type ImportCounts,
  type ImportResult,
  type OrderResult,
  ReportWriter,
  ResultSequencer,
  reportFormatFor,
  reportRecord,
} from '../../import/report.js';
import {
  invalidInputError,
  openOrderSource,
  prepareOrder,
  ReferenceCatalog,
  validateImport,
  writeRejects,
} from '../../import/source.js';
import { type SubmitStop, submitOrders } from '../../import/submit.js';
import type {
  ImportValidation,
  InputFormat,
  OrderSource,
  SourceOrder,
  ValidatedOrder as SubmitItem,
} from '../../import/types.js';
import { escapeControl, excerpt } from '../../io/quote.js';
import type { IOStreams } from '../../io/streams.js';
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
/**
 * Items (CSV rows) whose orders the validation pass keeps for the sending pass; a larger input is
 * read twice. About 2 KB each (measured on 50,000 one-item orders: 107 MB more at the peak), so at
 * most some 45 MB. ORDERCLI_IMPORT_KEEP_ITEMS changes it (0: always read twice).
 */
export const DEFAULT_KEEP_ITEMS = 20_000;
/** Orders listed by name on stderr after the summary; the report has them all. */
const LISTED_PROBLEMS = 10;

export async function run(options: ImportOptions, ctx: Context): Promise<void> {
  const concurrency = parseConcurrency(options.concurrency);
  const keep = keepItems(ctx.env);
  const limits = inputLimits(options);
  if (options.report !== undefined) reportFormatFor(options.report);
  if (options.input === '-' && !options.dryRun && options.journal === undefined) {
    throw new UsageError(
      'Importing standard input needs --journal <file>: the journal is what makes a re-run skip the orders already created.',
    );
  }

  const references = new ReferenceCatalog(() => ctx.api(), ctx.signal);
  const source = await openOrderSource(
    options.input,
    {
      format: options.format as InputFormat | undefined,
      delimiter: options.delimiter,
      mapFile: options.map,
      limits,
    },
    ctx,
  );
  try {
    const validation = await validateImport(source, {
      references,
      checkRefs: Boolean(options.checkRefs),
      // Exit 2 lists the first thousand invalid orders; keeping every one of a million would cost
      // gigabytes. --skip-invalid and --rejects need them all.
      maxInvalid: options.skipInvalid || options.rejects !== undefined ? undefined : 1000,
      // A real run keeps the orders it has read for the sending pass, up to a bound: reading and
      // converting the input again cost a third of the import's time on 10,000 orders.
      keepItems: options.dryRun ? 0 : keep,
    });
    if (validation.invalidIndexes.size > 0 && !options.skipInvalid) {
      if (options.rejects !== undefined) {
        await writeRejects(resolve(ctx.cwd, options.rejects), source, validation.invalid);
      }
      throw invalidInputError(source, validation);
    }
    if (options.dryRun) {
      await reportDryRun(ctx, options, source, validation);
      return;
    }
    await importOrders(ctx, options, concurrency, source, validation, references);
  } finally {
    await source.close();
  }
}

function keepItems(env: NodeJS.ProcessEnv): number {
  const value = env.ORDERCLI_IMPORT_KEEP_ITEMS;
  if (value === undefined || value === '') return DEFAULT_KEEP_ITEMS;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new UsageError(
      `ORDERCLI_IMPORT_KEEP_ITEMS must be a whole number (0 or more), not ${JSON.stringify(value)}.`,
    );
  }
  return n;
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

async function reportDryRun(
  ctx: Context,
  options: ImportOptions,
  source: OrderSource,
  validation: ImportValidation,
): Promise<void> {
  const { io } = ctx;
  const valid = validation.total - validation.invalidIndexes.size;
  const settings = await ctx.settings();
  let journalNote: { path: string; created: number; unknown: number } | undefined;
  if (settings.baseUrl !== undefined && (options.input !== '-' || options.journal !== undefined)) {
    const { shown, path } = await journalOfInput(options.input, options.journal, ctx.cwd);
    const { replay } = await OrderJournal.inspect(path, settings.baseUrl, ctx.signal);
    // What a real run would refuse, a dry run refuses too.
    if (replay.otherBaseUrls.length > 0) {
      throw new OtherBaseUrlError(path, normalizeBaseUrl(settings.baseUrl), replay.otherBaseUrls);
    }
    if (replay.lines > 0) journalNote = { path: shown, created: replay.created, unknown: replay.unknown };
  }
  let ledgerNote: { created: number; inDoubt: number } | undefined;
  if (settings.baseUrl !== undefined && validation.externalIds) {
    const ledger = await OrderLedger.open(
      configDir(ctx.env),
      settings.baseUrl,
      { by: 'orders import' },
      { readOnly: true },
    );
    const journal =
      options.input !== '-' || options.journal !== undefined
        ? (await journalOfInput(options.input, options.journal, ctx.cwd)).path
        : undefined;
    await ledger.load(validation.externalIds, { journal, countOnly: true });
    validation.externalIds = undefined;
    ledgerNote = ledger.loadedCounts();
  }
  const lines = [
    `Dry run of ${source.file}: ${fmt(validation.total)} orders read, ${fmt(valid)} valid, ${fmt(validation.invalidIndexes.size)} invalid; nothing was sent.`,
  ];
  if (journalNote) {
    lines.push(
      `The journal ${journalNote.path} records ${fmt(journalNote.created)} orders already created at ${settings.baseUrl} (a real run skips them) and ${fmt(journalNote.unknown)} with an unknown outcome.`,
    );
  }
  if (ledgerNote && (ledgerNote.created > 0 || ledgerNote.inDoubt > 0)) {
    lines.push(
      `The order ledger of ${settings.baseUrl} records ${fmt(ledgerNote.created)} of these orders as created by another command or input (a real run skips them) and ${fmt(ledgerNote.inDoubt)} as in doubt.`,
    );
  }
  io.err(wrapForStderr(io, `${lines.join('\n')}\n`));
  if (ctx.json) {
    ctx.io.out(
      `${JSON.stringify(
        {
          input: source.file,
          dryRun: true,
          counts: { total: validation.total, valid, invalid: validation.invalidIndexes.size },
          journal: journalNote
            ? { path: journalNote.path, created: journalNote.created, unknown: journalNote.unknown }
            : null,
          ledger: ledgerNote ?? null,
          problems: validation.problems,
        },
        null,
        2,
      )}\n`,
    );
  }
}

async function importOrders(
  ctx: Context,
  options: ImportOptions,
  concurrency: number,
  source: OrderSource,
  validation: ImportValidation,
  references: ReferenceCatalog,
): Promise<void> {
  const { io } = ctx;
  const started = performance.now();
  let retries = 0;
  let throttled = 0;
  const onRetry = (event: RetryEvent): void => {
    retries++;
    if (event.reason.startsWith('429')) throttled++;
  };
  const client = await ctx.api({ connections: concurrency, onRetry });
  const location = await journalOfInput(options.input, options.journal, ctx.cwd);
  const { lockWaitFromEnv } = await import('../../io/file-lock.js');
  const journal = await OrderJournal.open(location.path, {
    baseUrl: client.baseUrl,
    input: source.file,
    lockWaitMs: lockWaitFromEnv(ctx.env),
    onLockWait: (message) => io.err(`${message}\n`),
    signal: ctx.signal,
  });
  let journalClosed = false;
  // The ledger of this service, beside the journal: what other commands created is not sent again.
  let ledger: OrderLedger | undefined;
  const closeJournal = async (): Promise<void> => {
    if (journalClosed) return;
    journalClosed = true;
    try {
      await ledger?.close();
    } finally {
      await journal.close();
    }
  };
  ctx.onClose(closeJournal);
  ledger = await OrderLedger.open(configDir(ctx.env), client.baseUrl, {
    by: 'orders import',
    input: options.input === '-' ? '(stdin)' : resolve(ctx.cwd, options.input),
    journal: location.path,
  });
  if (validation.externalIds) await ledger.load(validation.externalIds, { journal: location.path });
  // The ledger keeps the ids only if some are known to it; the validation's hold goes now.
  validation.externalIds = undefined;
  const report =
    options.report !== undefined ? await ReportWriter.open(resolve(ctx.cwd, options.report)) : undefined;
  if (journal.replay.tornTail) {
    writeNote(
      io,
      `note: the last line of ${location.shown} was cut off (the previous run was killed while writing it); it was dropped.\n`,
    );
  }

  const counts = emptyCounts(validation.total);
  const listed: OrderResult[] = [];
  const jsonOrders: ReturnType<typeof reportRecord>[] | undefined = ctx.json ? [] : undefined;
  const rejected: SourceOrder[] = [...validation.invalid];
  const sequencer = new ResultSequencer((result) => {
    report?.write(result);
    jsonOrders?.push(reportRecord(result));
    if (
      result.status !== 'created' &&
      result.status !== 'skipped' &&
      result.status !== 'not-sent' &&
      listed.length < LISTED_PROBLEMS
    ) {
      listed.push(result);
    }
  });
  const onResult = (result: OrderResult, item: SubmitItem): void => {
    countResult(counts, result);
    if (result.status === 'failed') rejected.push(item.source);
    sequencer.push(result);
  };

  const problemsByIndex = new Map<number, InputProblem[]>();
  for (const order of validation.invalid) problemsByIndex.set(order.index, order.problems);
  async function* items(): AsyncGenerator<SubmitItem> {
    if (validation.kept !== undefined) {
      yield* validation.kept;
      return;
    }
    for await (const order of source.orders()) {
      const problems = problemsByIndex.get(order.index);
      if (problems !== undefined) {
        yield { source: order, body: undefined, problems };
        continue;
      }
      // Pass 1 validated this order; only product codes still need resolving (cached lists).
      if (!order.needsProductResolution && order.problems.length === 0) {
        yield { source: order, body: order.order, problems: [] };
        continue;
      }
      const prepared = await prepareOrder(order, references, { limits: source.limits });
      yield prepared.problems.length > 0
        ? { source: order, body: undefined, problems: prepared.problems }
        : { source: order, body: prepared.body, problems: [] };
    }
  }

  const progress = new ImportProgress(io, counts);
  progress.start();
  let outcome: Awaited<ReturnType<typeof submitOrders>>;
  try {
    outcome = await submitOrders(items(), {
      client,
      journal,
      ledger,
      concurrency,
      retryUnknown: Boolean(options.retryUnknown),
      signal: ctx.signal,
      onResult,
    });
  } finally {
    progress.stop();
    await closeJournal();
  }
  await report?.close();
  rejected.sort((a, b) => a.index - b.index);
  if (options.rejects !== undefined) await writeRejects(resolve(ctx.cwd, options.rejects), source, rejected);

  const durationMs = performance.now() - started;
  const stopped = stopLabel(outcome.stopped);
  io.err(
    summaryForStderr(io, {
      counts,
      durationMs,
      input: source.file,
      baseUrl: client.baseUrl,
      journal: location.shown,
      report: options.report,
      rejects: options.rejects,
      stopped,
      sent: outcome.sent,
      sentPerSecond: outcome.sendingMs > 0 ? (outcome.sent * 1000) / outcome.sendingMs : 0,
    }),
  );
  if (retries > 0) {
    writeNote(
      io,
      `  retried  ${fmt(retries)} requests${throttled > 0 ? ` (${fmt(throttled)} after 429 Too Many Requests)` : ''}\n`,
    );
  }
  writeProblemList(ctx, counts, listed, resolveTarget(options, location.shown));

  if (jsonOrders) {
    const result: ImportResult = {
      input: source.file,
      journal: location.shown,
      baseUrl: client.baseUrl,
      dryRun: false,
      stopped: stopped ?? null,
      durationMs: Math.round(durationMs),
      ordersPerSecond: outcome.sendingMs > 0 ? Math.round((outcome.sent * 1000) / outcome.sendingMs) : 0,
      counts,
      orders: jsonOrders,
    };
    io.out(`${JSON.stringify(result, null, 2)}\n`);
  }

  if (outcome.stopped) throw stopError(outcome.stopped, counts, location.shown, outcome.sent);
  if (counts.created + counts.skipped < counts.total) ctx.exitCode = ExitCode.Partial;
}

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

/** The error that gives the exit code of a run that stopped early (130, 3 or 1). */
function stopError(stop: SubmitStop, counts: ImportCounts, journal: string, sent: number): Error {
  const rerun = `the journal ${journal} is saved: run the same command again to send the rest`;
  if (stop.kind === 'interrupted') {
    return new CancelledError(
      `Interrupted: ${fmt(counts.created)} orders created, ${fmt(counts.notSent)} not sent; ${rerun}.`,
    );
  }
  if (stop.kind === 'journal' && stop.error instanceof JournalWriteError) {
    if (sent === 0) return stop.error.beforeSending();
    return new CliError(
      `Cannot write the import journal ${journal} (${stop.error.reason}), so the import stopped: ${fmt(sent)} orders had been sent (${fmt(counts.created)} created, ${fmt(counts.failed)} refused, ${fmt(counts.unknown)} with an unknown outcome), ${fmt(counts.notSent)} were not sent.`,
      ExitCode.Failure,
      [
        'The journal may lack the outcome of the last orders sent: a re-run shows them as unknown (in doubt) and does not send them again until you check them and use --retry-unknown.',
        'Free some space or fix the permissions, then run the same command again.',
      ],
    );
  }
  const error = stop.error ?? new Error('the import stopped');
  if ('hint' in error) {
    (error as { hint: string | undefined }).hint =
      `Nothing more was sent after this (${fmt(counts.notSent)} orders not sent); ${rerun} once it is fixed.`;
  }
  return error;
}

/** What to name in `orders resolve <…>`: the input as typed, or the journal when it is not the default. */
function resolveTarget(options: ImportOptions, journalShown: string): string {
  if (options.journal === undefined && options.input !== '-') return options.input;
  return journalShown;
}

function writeProblemList(ctx: Context, counts: ImportCounts, listed: OrderResult[], target: string): void {
  const problems = counts.failed + counts.unknown + counts.invalid;
  if (listed.length === 0) return;
  const lines = listed.map(
    (result) =>
      `  ${escapeControl(`${result.location.file}:${result.location.line} ${excerpt(result.externalId ?? '(no externalId)')} ${result.status}: ${result.message ?? ''}`)}`,
  );
  if (problems > listed.length) lines.push(`  … and ${fmt(problems - listed.length)} more (see --report)`);
  ctx.io.err(wrapForStderr(ctx.io, `Orders not created:\n${lines.join('\n')}\n`));
  if (counts.unknown > 0) {
    ctx.io.err(
      `${fmt(counts.unknown)} orders have an unknown outcome: they may exist at the service, so they are not sent again. To settle them:\n` +
        `  1. check each at the service (ordercli orders journal ${target} lists them, with their input line);\n` +
        `  2. record what you found: ordercli orders resolve ${target} --created <externalId>[=<id>] … --not-created <externalId> …\n` +
        `     (or --from-events <file> with the notifications an ordercli listen --log <file> received);\n` +
        '  3. run the same import again: it skips the created ones and sends the others.\n' +
        `  (--retry-unknown sends every unknown order again without asking: only when you know none exists.)\n`,
    );
  }
}

/** The summary of a run, wrapped to the terminal (a long input path or base URL). */
function summaryForStderr(io: IOStreams, info: Parameters<typeof renderSummary>[0]): string {
  return wrapForStderr(io, renderSummary(info));
}
