/**
 * The import pipeline, `orders import` (and `refs contacts import`, through its `ImportKind`)
 * without its command line: validate the whole input, check the order ledger, send the valid
 * records concurrently (each claimed in the ledger first), write the report and the rejects, and
 * return what happened as a typed result. It never writes to the terminal: notes and progress go
 * through `ImportHooks`, and the command renders the result.
 */

import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import pLimit from 'p-limit';
import { type ApiClient, pathFor, type RetryEvent } from '../api/client.js';
import { ApiError, AuthError } from '../api/errors.js';
import { PATHS } from '../api/references.js';
import { knownConfigPath } from '../config/profiles.js';
import { CancelledError, CliError, type InputProblem, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { formatCount } from '../io/numbers.js';
import { checkOutputFile, ensureOutputFolder } from '../io/output-folder.js';
import { ledgerPlaceOf, localLedgerRoot, openLedger, probeLedger } from '../ledger/open.js';
import type { RecordSource } from '../ledger/record.js';
import type { LedgerStore } from '../ledger/store.js';
import type { Receiving } from './await-receiver.js';
import { ValidationWaiter } from './await-validation.js';
import { inputIdentity, legacyJournalPath } from './input-identity.js';
import { type ImportKind, ORDER_IMPORT } from './kind.js';
import type { InputLimits } from './read/limits.js';
import { OutputWriteError } from './report/output-error.js';
import { type NamedPath, refuseOverwrites } from './report/output-paths.js';
import {
  countResult,
  doneCount,
  emptyCounts,
  type ImportCounts,
  type RecordResult,
  ReportWriter,
  ResultSequencer,
  settledCount,
} from './report/report.js';
import { problemsMessage, type SubmitStop, submitRecords } from './send/submit.js';
import {
  checkRejectsPath,
  type InvalidRecord,
  invalidInputError,
  openInputSource,
  prepareRecord,
  ReferenceCatalog,
  validateImport,
  writeRejects,
} from './source.js';
import type { ImportValidation, InputSource, ReadCounts, SourceRecord, ValidatedRecord } from './types.js';

/** What to import and how: the command's flags, checked and parsed. */
export interface ImportRequest {
  /** What the input holds and where it goes (default orders). */
  kind?: ImportKind;
  /** A path, or `-` for standard input (which needs `journal`). */
  input: string;
  /** `--format`: a name or alias of INPUT_FORMATS (read/formats.ts). */
  format?: string;
  /** `--sheet`: the sheet of a workbook to read. */
  sheet?: string;
  delimiter?: string;
  /** A `--map` JSON file, relative to the cwd. */
  mapFile?: string;
  /** `--ignore-columns`: headers whose columns are left out on purpose (CSV, workbooks). */
  ignoreColumns?: readonly string[] | undefined;
  limits: InputLimits;
  /** Requests in flight at most. */
  concurrency: number;
  /** Validate (and look at the ledger), send nothing. */
  dryRun: boolean;
  /** With `dryRun`: the input alone, without the ledger or the service. */
  offline?: boolean;
  /** `--await validated`: each created order waits for its validation (await-validation.ts). */
  await?: AwaitRequest;
  skipInvalid: boolean;
  checkRefs: boolean;
  /** `--journal` as typed: the name of the input's history in the ledger (input-identity.ts). */
  journal?: string;
  retryUnknown: boolean;
  /** `--force`: send with a ledger that has no record of this service though the default one has. */
  allowNewLedger?: boolean;
  /** `--report` and `--rejects` as typed, relative to the cwd. */
  report?: string;
  rejects?: string;
  /** Keep every order's result in `ImportResult.orders` (for `--json`: memory grows with the input). */
  keepRecordResults: boolean;
  /** How many orders not created `ImportResult.notCreated` lists (default 10). */
  notCreatedListed?: number;
}

/** What the pipeline takes from the command's context (a command's `Context` is one). */
export interface ImportEnvironment {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C: validation stops, sending starts nothing new and waits for what is in flight. */
  signal: AbortSignal;
  io: { stdin: Readable };
  settings(): Promise<{ baseUrl?: string | undefined; ledger?: string | undefined }>;
  api(overrides?: { connections?: number; onRetry?: (event: RetryEvent) => void }): Promise<ApiClient>;
  /** Runs `fn` when the command ends, however it ends (the ledger is closed even on an error). */
  onClose(fn: () => Promise<void> | void): void;
}

/** Where the pipeline tells its caller what the user should see while it runs. */
export interface ImportHooks {
  /** A note before sending starts (a journal of an earlier release was folded into the ledger). */
  onNote?(text: string): void;
  /** Validation starts; `counts` change as records are read. Returns what to call once it ends. */
  onReadingStart?(counts: Readonly<ReadCounts>): () => void;
  /** Sending starts; `counts` change as orders finish. Returns what to call once sending ends. */
  onSendingStart?(counts: Readonly<ImportCounts>): () => void;
  /** `--await validated`: the wait for validations starts. Returns what to call once it ends. */
  onAwaitStart?(waiter: ValidationWaiter): () => void;
  /** Each order's result, in input order, as it is settled (CI annotations). */
  onResult?(result: RecordResult): void;
}

/** What a dry run found. */
export interface DryRunResult {
  dryRun: true;
  /** The input as named in problems: the path as given, or `stdin`. */
  input: string;
  baseUrl: string | undefined;
  counts: { total: number; valid: number; invalid: number };
  /** The invalid records with their problems, in input order (for the CI annotations). */
  invalid: readonly InvalidRecord[];
  /** Orders of this input that the order ledger records (absent without a base URL). */
  ledger: { created: number; inDoubt: number } | undefined;
  problems: InputProblem[];
}

/** What an import did. */
export interface ImportResult {
  dryRun: false;
  input: string;
  baseUrl: string;
  /** The input's name in the ledger (input-identity.ts): `orders journal <it>` shows its history. */
  journal: string;
  counts: ImportCounts;
  /** Every record's result in input order, when `keepRecordResults` was asked; else empty. */
  records: RecordResult[];
  /** The first orders not created (failed, unknown, invalid), in input order. */
  notCreated: RecordResult[];
  /** Why sending stopped before the end of the input, if it did. */
  stopped: SubmitStop | undefined;
  /** Requests sent, and their rate from the first request to the last answer. */
  sent: number;
  sentPerSecond: number;
  durationMs: number;
  /** Requests sent again, and how many of those after a 429. */
  retries: number;
  throttledRetries: number;
  /** The error that gives the exit code of a run that stopped early (130, 3 or 1). */
  failure: Error | undefined;
  /**
   * The exit code when there is no `failure`: 0, 4 when some orders were not created, else 5 when
   * some were not validated in time (`--await validated`).
   */
  exitCode: typeof ExitCode.Ok | typeof ExitCode.Partial | typeof ExitCode.Unconfirmed;
  /** `--await validated`: what stays subscribed at the service, to say at the end. */
  awaitNote?: string | undefined;
  /** Which outputs asked for were written (the summary and the step outputs name only those). */
  written: WrittenOutputs;
}

/** `--await validated`, as the command gives it: the wait, and how notifications are received. */
export interface AwaitRequest {
  timeoutMs: number;
  /** Starts receiving into the waiter; resolves once ready (subscribed, or the log read). */
  receive(waiter: ValidationWaiter): Promise<Receiving>;
}

export interface WrittenOutputs {
  report: boolean;
  rejects: boolean;
}

const NOT_CREATED_LISTED = 10;
/** After Ctrl-C, how long the records left are read to be listed `not-sent` (Ctrl-C ends within 2 s). */
const REST_LISTED_MS = 1_000;

/** Runs an import (or a dry run); invalid input without `skipInvalid` throws an InputError (exit 2). */
export async function runImport(
  request: ImportRequest,
  environment: ImportEnvironment,
  hooks: ImportHooks = {},
): Promise<DryRunResult | ImportResult> {
  const kind = request.kind ?? ORDER_IMPORT;
  const references = new ReferenceCatalog(() => environment.api(), environment.signal);
  const source = await openInputSource(
    request.input,
    {
      format: request.format,
      sheet: request.sheet,
      delimiter: request.delimiter,
      mapFile: request.mapFile,
      ignoreColumns: request.ignoreColumns,
      limits: request.limits,
      kind,
    },
    environment,
  );
  try {
    await refuseOverwritingWhatIsKept(request, environment, source);
    // A dry run that will check the service says at once when there is none to check.
    const service =
      request.dryRun && !request.offline ? await environment.api().catch(withOfflineHint) : undefined;
    // A fresh CI runner has no `out/`: the folders of the outputs are created before anything else.
    for (const [option, path] of [
      ['--report', request.report],
      ['--rejects', request.rejects],
    ] as const)
      if (path !== undefined)
        await ensureOutputFolder(path, environment.cwd, `${option} ${path}`, 'nothing was sent');
    if (request.rejects !== undefined)
      await checkRejectsPath(resolve(environment.cwd, request.rejects), request.rejects);
    const readAtFirst = await fileVersion(source.path);
    const validation = await validateInput(source, request, references, hooks);
    if (validation.invalidIndexes.size > 0 && !request.skipInvalid) {
      const invalid = invalidInputError(source, validation, kind);
      if (request.report !== undefined) {
        // CI shows the report's failures: the invalid orders must be there (and no earlier run's).
        const unwritten = await writeInvalidInputReport(request.report, request, environment, source, {
          validation,
          references,
          readAtFirst,
        });
        if (unwritten !== undefined) invalid.details.push(unwritten);
        else invalid.report = request.report;
      }
      if (request.rejects !== undefined) {
        // The problems stay the error (exit 2, nothing sent); a rejects file that could not be
        // written is said below them.
        await writeRejects(resolve(environment.cwd, request.rejects), source, validation.invalid).catch(
          (error: unknown) => {
            if (!(error instanceof OutputWriteError)) throw error;
            invalid.details.push(
              `The rejects file ${request.rejects} could not be written: ${error.reason}.`,
            );
          },
        );
      }
      throw invalid;
    }
    if (request.dryRun) {
      // A dry run with --skip-invalid leaves in the rejects what a real run would reject first.
      if (request.rejects !== undefined)
        await writeRejects(resolve(environment.cwd, request.rejects), source, validation.invalid);
      return await dryRun(request, environment, source, validation, service);
    }
    // The sending pass reads the file again: what it sends must be what was validated.
    if ((await fileVersion(source.path)) !== readAtFirst) {
      throw new UsageError(
        `The input ${source.file} changed while it was being validated (its size or modification time differ), so nothing was sent; run the import again once the file is complete.`,
      );
    }
    return await sendRecords(request, environment, hooks, source, validation, references);
  } finally {
    await source.close();
  }
}

/**
 * What a dry run checks of what the real run needs, sending no order, each failure the error the
 * real run would give: the service's token (one authenticated GET any token may make), the
 * ledger (probeLedger: writable, or PostgreSQL's login, tables and a claim rolled back) and the
 * report's file (the rejects' is checked before validation, as in every run).
 */
async function checkWhatTheRunNeeds(
  request: ImportRequest,
  environment: ImportEnvironment,
  client: ApiClient,
): Promise<{ baseUrl: string }> {
  const kind = request.kind ?? ORDER_IMPORT;
  // A refused token (exit 3) or an unreachable service (exit 1) fails as the real run would; any
  // other answer (a service without this list) says nothing against the token.
  await client.get(PATHS.webhooksAvailable, { signal: environment.signal }).catch((error: unknown) => {
    if (error instanceof AuthError || !(error instanceof ApiError)) throw error;
  });
  await probeLedger(await ledgerPlaceOf(environment), {
    baseUrl: client.baseUrl,
    kind: kind.ledger,
    source: { by: kind.command },
    signal: environment.signal,
    allowNewLedger: request.allowNewLedger,
  });
  const { report } = request;
  if (report !== undefined)
    await checkOutputFile(report, environment.cwd, `the report ${report}`, 'nothing was sent');
  return { baseUrl: client.baseUrl };
}

/** The validation pass (the first reading of the input), its progress shown through the hooks. */
async function validateInput(
  source: InputSource,
  request: ImportRequest,
  references: ReferenceCatalog,
  hooks: ImportHooks,
): Promise<ImportValidation> {
  const counts: ReadCounts = { read: 0, invalid: 0 };
  const readingEnded = hooks.onReadingStart?.(counts);
  try {
    return await validateImport(source, {
      kind: request.kind ?? ORDER_IMPORT,
      references,
      checkRefs: request.checkRefs,
      // Exit 2 lists the first thousand invalid orders; keeping every one of a million would cost
      // gigabytes. --skip-invalid and --rejects need them all.
      maxInvalid: request.skipInvalid || request.rejects !== undefined ? undefined : 1000,
      counts,
    });
  } finally {
    readingEnded?.();
  }
}

/** A dry run that cannot reach a service: `--offline` checks the file alone. */
function withOfflineHint(error: unknown): never {
  if (error instanceof UsageError)
    error.hint ??= 'add --offline to check the input alone, without the service or the ledger.';
  throw error;
}

async function dryRun(
  request: ImportRequest,
  environment: ImportEnvironment,
  source: InputSource,
  validation: ImportValidation,
  service: ApiClient | undefined,
): Promise<DryRunResult> {
  const kind = request.kind ?? ORDER_IMPORT;
  // Offline (no service client): the input alone.
  const { baseUrl } = service
    ? await checkWhatTheRunNeeds(request, environment, service)
    : { baseUrl: undefined };
  let ledger: DryRunResult['ledger'];
  // Offline there is no service to compare with.
  const store =
    baseUrl === undefined
      ? undefined
      : await openLedger(await ledgerPlaceOf(environment), {
          baseUrl,
          kind: kind.ledger,
          source: { by: kind.command },
          readOnly: true,
          signal: environment.signal,
        });
  try {
    if (store && validation.keys) {
      await store.prefetch(validation.keys);
      ledger = store.prefetchedCounts();
      validation.keys = undefined;
    }
  } finally {
    await store?.close();
  }
  const invalid = validation.invalidIndexes.size;
  return {
    dryRun: true,
    input: source.file,
    baseUrl,
    counts: { total: validation.total, valid: validation.total - invalid, invalid },
    invalid: validation.invalid,
    ledger,
    problems: validation.problems,
  };
}

async function sendRecords(
  request: ImportRequest,
  environment: ImportEnvironment,
  hooks: ImportHooks,
  source: InputSource,
  validation: ImportValidation,
  references: ReferenceCatalog,
): Promise<ImportResult> {
  const kind = request.kind ?? ORDER_IMPORT;
  const started = performance.now();
  const retried = retryCounter();
  const client = await environment.api({ connections: request.concurrency, onRetry: retried.onRetry });
  const identity = inputIdentity(request.input, request.journal, environment.cwd);
  const stores = await openImportLedger(request, environment, hooks, validation, client.baseUrl, identity);
  const report = await openReport(request, environment);
  const waiting =
    request.await &&
    (await startWaiting(request.await, stores, client, request.concurrency, environment.signal));
  const results = collectResults(request, hooks, validation, report, waiting);

  const rest: { from?: { index: number; line: number } } = {};
  const sendingEnded = hooks.onSendingStart?.(results.counts);
  let outcome: Awaited<ReturnType<typeof submitRecords>> | undefined;
  let awaitNote: string | undefined;
  try {
    const reading = readAgainForSending(source, validation, references, kind, {
      // Without a report or --json listing every record, the records after an interrupt need not
      // be read to be counted: Ctrl-C then ends the run at once, whatever is left of the input.
      // With them, the records left are read for REST_LISTED_MS more, then named in one line.
      until: environment.signal,
      listedForMs: request.report === undefined && !request.keepRecordResults ? 0 : REST_LISTED_MS,
      rest,
    });
    outcome = await submitRecords(reading, {
      kind,
      client,
      ledger: stores.ledger,
      input: stores.input,
      concurrency: request.concurrency,
      retryUnknown: request.retryUnknown,
      signal: environment.signal,
      onResult: results.onResult,
    });
  } finally {
    sendingEnded?.();
    // Sending that failed (it threw) waits for nothing: its error is what the run reports.
    const waitUntil = outcome === undefined ? AbortSignal.abort() : environment.signal;
    if (waiting) awaitNote = await waitForValidations(waiting, results, waitUntil, hooks);
    await stores.close();
  }
  if (rest.from) results.restNotRead(rest.from, results.counts.total - rest.from.index, source.file, kind);
  const outputs = await writeOutputs(request, environment, source, report, results.rejected);
  const { sent } = outcome;
  // Ctrl-C while waiting for validations stops the run as one while sending would.
  const stopped: SubmitStop | undefined =
    outcome.stopped ?? (waiting && environment.signal.aborted ? { kind: 'interrupted' } : undefined);
  const { counts } = results;
  // The records the sending pass did not read after an interrupt: not sent either.
  counts.notSent = counts.total - doneCount(counts);
  return {
    dryRun: false,
    input: source.file,
    baseUrl: client.baseUrl,
    journal: identity,
    counts,
    records: results.records,
    notCreated: results.notCreated,
    stopped,
    sent,
    sentPerSecond: outcome.sendingMs > 0 ? (sent * 1000) / outcome.sendingMs : 0,
    durationMs: performance.now() - started,
    ...retried.counts,
    failure: stopped ? stopError(stopped, counts, kind) : outputs.failure,
    written: outputs.written,
    exitCode: exitCodeOf(counts),
    awaitNote,
  };
}

/** Requests sent again, and how many of those after a 429. */
function retryCounter() {
  const counts = { retries: 0, throttledRetries: 0 };
  const onRetry = (event: RetryEvent): void => {
    counts.retries++;
    if (event.reason.startsWith('429')) counts.throttledRetries++;
  };
  return { counts, onRetry };
}

/** 4 when some records were not created, else 5 when some were not validated in time, else 0. */
function exitCodeOf(counts: ImportCounts): ImportResult['exitCode'] {
  if (settledCount(counts) < counts.total) return ExitCode.Partial;
  return (counts.notValidated ?? 0) > 0 ? ExitCode.Unconfirmed : ExitCode.Ok;
}

/** The `--report` writer, opened (created) before anything is sent; closed however the run ends. */
async function openReport(request: ImportRequest, environment: ImportEnvironment) {
  if (request.report === undefined) return undefined;
  const kind = request.kind ?? ORDER_IMPORT;
  const report = await ReportWriter.open(
    resolve(environment.cwd, request.report),
    // --await validated: a column of when each order's validation arrived.
    request.await ? { ...kind, reportColumns: [...kind.reportColumns, 'validatedAt'] } : kind,
  );
  // Ended however the run ends, so that a JUnit report stays well-formed after an early stop.
  environment.onClose(() => report.close().catch(() => undefined));
  return report;
}

/** `--await validated`: the waiter (recording each validation in the ledger), receiving before sending. */
async function startWaiting(
  request: AwaitRequest,
  stores: { ledger: LedgerStore; close(): Promise<void> },
  client: ApiClient,
  concurrency: number,
  signal: AbortSignal,
) {
  const { ledger } = stores;
  const waiter = new ValidationWaiter(request.timeoutMs, (key, at) => ledger.validated(key, at));
  const receiving = await request.receive(waiter).catch(async (error: unknown) => {
    await stores.close();
    throw error;
  });
  // Created by an earlier run, an order's notification came then: the service's representation may say.
  const checkAtService = atServiceCheck(client, waiter, concurrency, signal);
  return { waiter, receiving, checkAtService };
}

/**
 * After sending: waits until every awaited order is validated or past its time (Ctrl-C ends the
 * wait, the rest not validated), then gives the held results their validation, in input order.
 */
async function waitForValidations(
  { waiter, receiving }: { waiter: ValidationWaiter; receiving: Receiving },
  results: ReturnType<typeof collectResults>,
  signal: AbortSignal,
  hooks: ImportHooks,
): Promise<string | undefined> {
  const ended = hooks.onAwaitStart?.(waiter);
  await waiter.wait(signal);
  ended?.();
  const note = await receiving.close().catch(() => undefined);
  results.releaseHeld();
  return note;
}

/**
 * Opens the ledger of this service (which decides what is sent: each order is claimed there
 * before it leaves, with the input's identity and line), reads ahead what it knows of the input's
 * ids, and folds in a journal an earlier release left beside the input. Closed when the command ends.
 */
async function openImportLedger(
  request: ImportRequest,
  environment: ImportEnvironment,
  hooks: ImportHooks,
  validation: ImportValidation,
  baseUrl: string,
  identity: string,
): Promise<{ ledger: LedgerStore; input: string; close: () => Promise<void> }> {
  const kind = request.kind ?? ORDER_IMPORT;
  // The input's path, and the history's name when --journal gives one: either finds its records.
  const source: RecordSource = {
    by: kind.command,
    input: inputIdentity(request.input, undefined, environment.cwd),
  };
  if (request.journal !== undefined) source.journal = identity;
  const ledger = await openLedger(await ledgerPlaceOf(environment), {
    baseUrl,
    kind: kind.ledger,
    source,
    allowNewLedger: request.allowNewLedger,
    signal: environment.signal,
  });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await ledger.close();
  };
  environment.onClose(close);
  if (validation.keys) await ledger.prefetch(validation.keys);
  // The validation's hold on the ids goes now: the ledger keeps what it knows of them.
  validation.keys = undefined;
  const legacy = legacyJournalPath(request.input, request.journal, environment.cwd);
  if (legacy !== undefined) {
    const { foldJournal } = await import('../ledger/upgrade.js');
    const folded = await foldJournal(ledger, legacy, source, environment.signal);
    if (folded) hooks.onNote?.(foldedNote(folded, kind));
  }
  return { ledger, input: source.input!, close };
}

function foldedNote(folded: { path: string; adopted: number; renamed: boolean }, kind: ImportKind): string {
  const what = `${formatCount(folded.adopted)} ${folded.adopted === 1 ? kind.one : kind.many} it knew of and the ledger did not`;
  return folded.renamed
    ? `note: ${folded.path}, the journal of an earlier ordercli, was folded into the order ledger (${what}) and renamed ${folded.path}.folded; the ledger is the only record now.\n`
    : `note: ${folded.path}, the journal of an earlier ordercli, was folded into the order ledger for this service (${what}); it is kept, as it also holds orders of other services.\n`;
}

/** Where each order's result goes: the counts, the report and hooks in input order, the lists kept. */
function collectResults(
  request: ImportRequest,
  hooks: ImportHooks,
  validation: ImportValidation,
  report: ReportWriter | undefined,
  awaiting?: { waiter: ValidationWaiter; checkAtService(result: RecordResult): void },
) {
  const waiter = awaiting?.waiter;
  const counts = emptyCounts(validation.total);
  if (waiter) Object.assign(counts, { validated: 0, notValidated: 0 });
  const records: RecordResult[] = [];
  const notCreated: RecordResult[] = [];
  const notCreatedListed = request.notCreatedListed ?? NOT_CREATED_LISTED;
  const rejected: SourceRecord[] = [...validation.invalid];
  const emit = (result: RecordResult): void => {
    report?.write(result);
    hooks.onResult?.(result);
    if (request.keepRecordResults) records.push(result);
    if (isNotCreated(result) && notCreated.length < notCreatedListed) notCreated.push(result);
  };
  // With --await, the results wait for their validation (in input order, as they are reported).
  const held: RecordResult[] = [];
  const inInputOrder = new ResultSequencer(waiter ? (result) => held.push(result) : emit);
  const onResult = (result: RecordResult, item: ValidatedRecord): void => {
    countResult(counts, result);
    if (result.status === 'failed') rejected.push(item.source);
    if (waiter && isAwaited(result)) {
      if (result.validatedAt) counts.validated!++;
      else {
        waiter.expect({ key: result.key!, code: result.code, id: result.id, since: performance.now() });
        if (result.status === 'skipped') awaiting!.checkAtService(result);
      }
    }
    inInputOrder.push(result);
  };
  /** The records an interrupt left unread, named in one line of the report and --json. */
  const restNotRead = (
    from: { index: number; line: number },
    count: number,
    file: string,
    kind: ImportKind,
  ): void => {
    const message = `and ${formatCount(count)} more ${count === 1 ? kind.one : kind.many} from line ${from.line} on: not read after the interrupt, not sent; the next run sends them`;
    emit({
      index: from.index,
      key: undefined,
      status: 'not-sent',
      message,
      location: { file, line: from.line, endLine: from.line },
    });
  };
  const releaseHeld = (): void => {
    if (!waiter) return;
    counts.validated! += waiter.counts.validated;
    counts.notValidated = waiter.counts.notValidated;
    for (const result of held.splice(0)) emit(withValidation(result, waiter));
  };
  return { counts, records, notCreated, rejected, onResult, releaseHeld, restNotRead };
}

/**
 * Asks the service for an order created by an earlier run (`GET /api/v1/orders/{id}`, a few at a
 * time): a representation that says it is validated (`validated: true`, or `status: "validated"`:
 * docs/assumptions.md) validates it now. Any other answer, or none, leaves it to its notification.
 */
function atServiceCheck(
  client: ApiClient,
  waiter: ValidationWaiter,
  concurrency: number,
  signal: AbortSignal,
) {
  const limit = pLimit(concurrency);
  return (result: RecordResult): void => {
    if (result.id === undefined) return;
    const path = pathFor('/api/v1/orders/{id}', { id: result.id });
    void limit(async () => {
      const answer = await client.get<Record<string, unknown>>(path, { signal }).catch(() => undefined);
      const body = answer?.body;
      if (!body || typeof body !== 'object') return;
      const validated = body.validated === true || String(body.status).toLowerCase() === 'validated';
      const at = typeof body.validatedAt === 'string' ? body.validatedAt : new Date().toISOString();
      if (validated) waiter.notify({ id: result.id, code: result.code, externalId: result.key }, at);
    });
  };
}

/** An order `--await validated` waits for: created now, or created before (found in the ledger). */
function isAwaited(result: RecordResult): boolean {
  if (result.key === undefined) return false;
  return (
    result.status === 'created' ||
    (result.status === 'skipped' && (result.code !== undefined || result.id !== undefined))
  );
}

/** A held result with what its wait gave. */
function withValidation(result: RecordResult, waiter: ValidationWaiter): RecordResult {
  if (!isAwaited(result)) return result;
  if (result.validatedAt) return { ...result, validation: 'validated' };
  const outcome = waiter.outcome(result.key!);
  if (outcome?.validated)
    return {
      ...result,
      validatedAt: outcome.validatedAt,
      validation: 'validated',
      validatedAfterMs: outcome.afterMs,
    };
  return { ...result, validatedAt: null, validation: outcome?.reason ?? 'interrupted' };
}

/**
 * Ends the report and writes the rejects. Sending is over and in the ledger: a file that cannot be
 * written fails the run (exit 1) after its summary, rather than hiding what was sent.
 */
async function writeOutputs(
  request: ImportRequest,
  environment: ImportEnvironment,
  source: InputSource,
  report: ReportWriter | undefined,
  rejected: SourceRecord[],
): Promise<{ failure: CliError | undefined; written: WrittenOutputs }> {
  const unwritten: string[] = [];
  const noteUnwritten = (error: unknown): false => {
    if (!(error instanceof OutputWriteError)) throw error;
    unwritten.push(error.named);
    return false;
  };
  const written: WrittenOutputs = { report: false, rejects: false };
  if (report) written.report = await report.close().then(() => true, noteUnwritten);
  rejected.sort((a, b) => a.index - b.index);
  if (request.rejects !== undefined) {
    // No rejected record: no file (one left by the path check or an earlier run is removed).
    const path = resolve(environment.cwd, request.rejects);
    written.rejects = await writeRejects(path, source, rejected).then((count) => count > 0, noteUnwritten);
  }
  if (unwritten.length === 0) return { failure: undefined, written };
  const failure = new CliError(
    `The import ran to its end, but ${unwritten.join(' and ')} could not be written.`,
    ExitCode.Failure,
    [
      'Every outcome is in the order ledger: run the same import again with files that can be written; created orders are skipped, failed ones sent again.',
    ],
  );
  return { failure, written };
}

/**
 * The report of an input refused for its invalid orders (exit 2): every order in input order,
 * `invalid` with its problems, or `not-sent` (nothing of an invalid input is sent). The input is
 * checked again as it is written, so that memory stays flat whatever its size (the validation
 * kept the first thousand invalid orders only). Returns what to say below the problems when the
 * report could not be written; the problems stay the error.
 */
async function writeInvalidInputReport(
  path: string,
  request: ImportRequest,
  environment: ImportEnvironment,
  source: InputSource,
  {
    validation,
    references,
    readAtFirst,
  }: { validation: ImportValidation; references: ReferenceCatalog; readAtFirst: string },
): Promise<string | undefined> {
  const kind = request.kind ?? ORDER_IMPORT;
  if ((await fileVersion(source.path)) !== readAtFirst) {
    return `The report ${path} was not written: the input changed while it was being read.`;
  }
  let report: ReportWriter;
  try {
    report = await ReportWriter.open(resolve(environment.cwd, path), kind);
  } catch (error) {
    // Cannot be created (a missing folder), or a JUnit report that is not a regular file.
    if (!(error instanceof UsageError)) throw error;
    return error.message;
  }
  const invalid = validation.invalidIndexes.size;
  const notSent = `not sent: ${formatCount(invalid)} ${invalid === 1 ? `${kind.one} of the input is` : `${kind.many} of the input are`} invalid, so none was sent; the next run sends it once ${invalid === 1 ? 'that one is' : 'they are'} fixed (or with --skip-invalid)`;
  let unwritten: string | undefined;
  try {
    await validateImport(source, {
      kind,
      references,
      checkRefs: request.checkRefs,
      maxInvalid: 0,
      onRecord: (order, problems) => report.write(refusedInputResult(order, problems, notSent)),
    });
  } finally {
    await report.close().catch((error: unknown) => {
      if (!(error instanceof OutputWriteError)) throw error;
      unwritten = `The report ${path} could not be written: ${error.reason}.`;
    });
  }
  return unwritten;
}

/** An order of an input refused at exit 2, as its report line: built whole, as `resultOf` does. */
function refusedInputResult(order: SourceRecord, problems: InputProblem[], notSent: string): RecordResult {
  const invalid = problems.length > 0;
  return {
    index: order.index,
    key: order.key,
    location: order.location,
    status: invalid ? 'invalid' : 'not-sent',
    httpStatus: undefined,
    id: undefined,
    code: undefined,
    message: invalid ? problemsMessage(problems, order.location.line) : notSent,
    problems: invalid ? problems : undefined,
  };
}

/** `--report` and `--rejects` are never the input, its map, the ledger or the config file. */
async function refuseOverwritingWhatIsKept(
  request: ImportRequest,
  environment: ImportEnvironment,
  source: InputSource,
): Promise<void> {
  const outputs: NamedPath[] = [];
  const at = (path: string): string => resolve(environment.cwd, path);
  if (request.report !== undefined)
    outputs.push({ what: '--report', path: at(request.report), shown: request.report });
  if (request.rejects !== undefined)
    outputs.push({ what: '--rejects', path: at(request.rejects), shown: request.rejects });
  if (outputs.length === 0) return;
  // No config file when its folder would be relative (HOME empty or relative, a --ledger given).
  const configFile = knownConfigPath(environment.env);
  const kept: NamedPath[] = configFile === undefined ? [] : [{ what: 'the config file', path: configFile }];
  if (request.input !== '-') kept.push({ what: 'the input', path: source.path, shown: request.input });
  if (request.mapFile !== undefined)
    kept.push({ what: 'the --map file', path: at(request.mapFile), shown: request.mapFile });
  const ledger = localLedgerRoot(await ledgerPlaceOf(environment));
  if (ledger !== undefined) kept.push({ what: 'the order ledger', path: ledger, folder: true });
  // A journal of an earlier release not folded in yet holds what may have been sent.
  const journal = legacyJournalPath(request.input, request.journal, environment.cwd);
  if (journal !== undefined && (await stat(journal).catch(() => undefined))?.isFile())
    kept.push({
      what: 'the journal of an earlier ordercli (folded into the ledger by the next run)',
      path: journal,
    });
  await refuseOverwrites(outputs, kept);
}

function isNotCreated(result: RecordResult): boolean {
  return (
    result.status !== 'created' &&
    result.status !== 'skipped' &&
    result.status !== 'exists' &&
    result.status !== 'not-sent'
  );
}

/**
 * The sending pass: the input read again from its start, each order made ready to send (only
 * product codes still need resolving, from the cached lists); the orders the validation refused
 * come with its problems. Reading again keeps memory bounded whatever the input's size. Once
 * `until` aborts, it reads no further (the caller counts the records left as not sent).
 */
async function* readAgainForSending(
  source: InputSource,
  validation: ImportValidation,
  references: ReferenceCatalog,
  kind: ImportKind,
  {
    until,
    listedForMs,
    rest,
  }: { until: AbortSignal; listedForMs: number; rest: { from?: { index: number; line: number } } },
): AsyncGenerator<ValidatedRecord> {
  const problemsByIndex = new Map<number, InputProblem[]>();
  for (const order of validation.invalid) problemsByIndex.set(order.index, order.problems);
  let abortedAt: number | undefined;
  for await (const order of source.records()) {
    // Orders added to the file after the validation pass were never validated: they are not sent.
    if (order.index >= validation.total) break;
    if (until.aborted) abortedAt ??= performance.now();
    // After Ctrl-C, the records left are read (to list them not sent) only while Ctrl-C's 2 s allow.
    if (abortedAt !== undefined && performance.now() - abortedAt >= listedForMs) {
      if (listedForMs > 0) rest.from = { index: order.index, line: order.location.line };
      break;
    }
    const problems = problemsByIndex.get(order.index);
    if (problems !== undefined) {
      yield { source: order, body: undefined, problems };
      continue;
    }
    if (!order.needsProductResolution && order.problems.length === 0) {
      yield { source: order, body: order.body, problems: [] };
      continue;
    }
    const prepared = await prepareRecord(order, references, { limits: source.limits, kind });
    yield prepared.problems.length > 0
      ? { source: order, body: undefined, problems: prepared.problems }
      : { source: order, body: prepared.body, problems: [] };
  }
}

/** What tells one version of the input from another: its size and modification time. */
async function fileVersion(path: string): Promise<string> {
  const { size, mtimeMs, ino } = await stat(path);
  return `${ino}:${size}:${mtimeMs}`;
}

/** The error that gives the exit code of a run that stopped early (130, 3 or 1). */
function stopError(stop: SubmitStop, counts: ImportCounts, kind: ImportKind): Error {
  const { many } = kind;
  const rerun =
    stop.kind === 'ledger'
      ? `run the same command again once the ledger can be written: it skips what was created, and ${many} in flight when it failed may be in doubt (ordercli orders journal lists them)`
      : 'the order ledger holds every outcome: run the same command again to send the rest';
  if (stop.kind === 'interrupted') {
    return new CancelledError(
      `Interrupted: ${formatCount(counts.created)} ${many} created, ${formatCount(counts.notSent)} not sent; ${rerun}.`,
    );
  }
  const error = stop.error ?? new Error('the import stopped');
  if ('hint' in error) {
    const forbidden =
      error instanceof AuthError && error.status === 403 && kind.forbidden ? `${kind.forbidden} ` : '';
    (error as { hint: string | undefined }).hint =
      `${forbidden}Nothing more was sent after this (${formatCount(counts.notSent)} ${many} not sent); ${rerun} once it is fixed.`;
  }
  return error;
}
