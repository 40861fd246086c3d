/**
 * What an import command shows a CI besides its usual output: in a GitHub Actions job
 * (`GITHUB_ACTIONS=true`) the annotations on stderr, and the job summary appended to
 * `$GITHUB_STEP_SUMMARY` when it is set. Shared by the import commands (orders, and any keyed record).
 */
import type { Context } from '../../command-support/context.js';
import { InputError, type InputProblem } from '../../core/errors.js';
import { InvalidInputError } from '../../import/check/validate.js';
import {
  ANNOTATIONS_PER_KIND,
  Annotator,
  appendJobSummary,
  appendStepOutputs,
  inGitHubActions,
  type JobSummary,
  type ProblemRank,
  renderJobSummary,
} from '../../import/report/github-actions.js';
import { type ImportCounts, keyedResult, type RecordResult } from '../../import/report/report.js';
import type { DryRunResult, ImportResult } from '../../import/run-import.js';
import { formatCount } from '../../io/numbers.js';

/** How the command and its records are named in annotations and the summary. */
export interface CiNaming {
  /** `ordercli orders import`. */
  command: string;
  /** What the key is called (`externalId`) and a record and the records (`order`, `orders`). */
  keyName: string;
  recordName: string;
  recordsName: string;
}

export interface CiImportOptions {
  /** The input as typed (`-` for standard input). */
  input: string;
  dryRun?: boolean | undefined;
  report?: string | undefined;
  rejects?: string | undefined;
}

/** How a run ended, for its step outputs. */
export interface StepOutcome {
  counts?: Pick<
    ImportCounts,
    | 'created'
    | 'skipped'
    | 'failed'
    | 'unknown'
    | 'invalid'
    | 'notSent'
    | 'total'
    | 'validated'
    | 'notValidated'
  >;
  exitCode: number;
  /** The report's path as typed, when one was written. */
  report?: string | undefined;
}

/** Rows of a job summary's lists: the first records not created, the first problems. */
const SUMMARY_ROWS = 10;

export const ORDER_CI_NAMING: CiNaming = {
  command: 'ordercli orders import',
  keyName: 'externalId',
  recordName: 'order',
  recordsName: 'orders',
};

/**
 * Collects the annotations while the import runs (printed once sending ends, so that the progress
 * display never cuts into one) and writes them and the summary when the command renders its end.
 */
export class ImportCiOutput {
  /** Each record's result as it is settled; absent outside GitHub Actions. */
  readonly onResult: ((result: RecordResult) => void) | undefined;
  private readonly annotator: Annotator | undefined;
  private readonly annotations: string[] = [];

  constructor(
    private readonly ctx: Context,
    private readonly options: CiImportOptions,
    private readonly naming: CiNaming = ORDER_CI_NAMING,
  ) {
    if (inGitHubActions(ctx.env)) {
      const annotator = new Annotator({
        input: options.input,
        cwd: ctx.cwd,
        env: ctx.env,
        keyName: naming.keyName,
        write: (line) => this.annotations.push(line),
      });
      this.annotator = annotator;
      this.onResult = (result) => annotator.result(keyedResult(result));
    }
  }

  /**
   * The import refused its input (exit 2): its problems annotated, the first problem of each
   * invalid record first (GitHub shows ten), and a summary of them that says where the rest are.
   */
  async failed(error: unknown): Promise<void> {
    if (!(error instanceof InputError)) return;
    const problems = mostUsefulFirst(error);
    for (const { problem, rank } of problems) this.annotator?.problem(problem, rank);
    const report = error instanceof InvalidInputError ? error.report : undefined;
    const { recordName } = this.naming;
    const where = `every problem is listed in the log${report !== undefined ? `, and every ${recordName} with its problems in the report ${report}` : ''}`;
    const counts = this.annotator?.counts();
    const left = counts?.left.errors ?? 0;
    const firstLeft = counts?.firstLeft ?? 0;
    this.flushAnnotations(where);
    const unannotated =
      error instanceof InvalidInputError && firstLeft > 0
        ? `, ${formatCount(firstLeft)} of them the first problem of an invalid ${recordName}`
        : '';
    const notAnnotated =
      left > 0
        ? `${formatCount(left)} more ${left === 1 ? 'problem is' : 'problems are'} not annotated${unannotated} (GitHub shows ${ANNOTATIONS_PER_KIND} annotations of each kind per step; the first problem of each invalid ${recordName} comes first). `
        : '';
    const more = left > 0 || problems.length > SUMMARY_ROWS;
    await this.appendSummary({
      ...this.summaryBase(),
      outcome: error.message,
      problems: problems.slice(0, SUMMARY_ROWS).map(({ problem }) => problem),
      problemsTotal: error.problems.length,
      note: more ? `${notAnnotated}${where.charAt(0).toUpperCase()}${where.slice(1)}.` : undefined,
      report,
    });
  }

  /** A dry run's problems (with --skip-invalid), annotated; call before its own lines. */
  dryRunAnnotations(result: DryRunResult): void {
    for (const record of result.invalid) this.annotator?.record(record.problems);
    this.flushAnnotations('every problem is listed in the log');
  }

  /** A dry run's summary: its counts and first problems. */
  async dryRunSummary(result: DryRunResult): Promise<void> {
    await this.appendSummary({
      ...this.summaryBase(),
      outcome: 'Dry run: nothing was sent.',
      counts: [
        ['total', result.counts.total],
        ['valid', result.counts.valid],
        ['invalid', result.counts.invalid],
      ],
      problems: result.problems.slice(0, SUMMARY_ROWS),
      problemsTotal: result.problems.length,
    });
  }

  /** The annotations of an import that sent; call before its summary on stderr. */
  importAnnotations(): void {
    const { report } = this.options;
    const { recordsName } = this.naming;
    this.flushAnnotations(
      report !== undefined
        ? `the report ${report} lists all ${recordsName}`
        : `pass --report report.xml to list all ${recordsName}`,
    );
  }

  /** An import's summary: how it ended, its counts, the first records not created. */
  async importSummary(result: ImportResult, stopped: string | undefined): Promise<void> {
    const { counts } = result;
    const rows: [string, number][] = [
      ['created', counts.created],
      ['already created', counts.skipped],
      ['failed', counts.failed],
      ['unknown', counts.unknown],
      ['invalid', counts.invalid],
    ];
    if (counts.exists > 0) rows.splice(2, 0, ['already at the service', counts.exists]);
    if (counts.notSent > 0) rows.push(['not sent', counts.notSent]);
    if (counts.validated !== undefined) rows.push(['validated', counts.validated]);
    if (counts.notValidated !== undefined) rows.push(['not validated in time', counts.notValidated]);
    rows.push(['total', counts.total]);
    const seconds = (result.durationMs / 1000).toFixed(1);
    await this.appendSummary({
      ...this.summaryBase(),
      outcome: `${stopped ? `Stopped (${stopped}) after` : 'Finished in'} ${seconds} s: ${formatCount(result.sent)} ${this.naming.recordsName} sent to ${result.baseUrl}.`,
      counts: rows,
      notCreated: result.notCreated.slice(0, SUMMARY_ROWS).map(keyedResult),
      notCreatedTotal: notCreatedCount(counts),
      report: result.written.report ? this.options.report : undefined,
      rejects: result.written.rejects ? this.options.rejects : undefined,
    });
  }

  /**
   * Appends the step outputs to `$GITHUB_OUTPUT` when it is set: the counts when they are known
   * (an import that sent, a dry run, an input refused as invalid), the exit code, and the report's
   * path when one was written. Called at the end of every run past argument parsing.
   */
  async stepOutputs(end: StepOutcome): Promise<void> {
    const path = this.ctx.env.GITHUB_OUTPUT;
    if (!path) return;
    const outputs: Record<string, string | number> = {};
    if (end.counts) {
      const { created, skipped, failed, unknown, invalid, total } = end.counts;
      Object.assign(outputs, { created, skipped, failed, unknown, invalid });
      outputs['not-sent'] = end.counts.notSent;
      outputs.total = total;
    }
    if (end.counts?.validated !== undefined) {
      outputs.validated = end.counts.validated;
      outputs['not-validated'] = end.counts.notValidated ?? 0;
    }
    outputs['exit-code'] = end.exitCode;
    if (end.report !== undefined) outputs.report = end.report;
    const warning = await appendStepOutputs(path, outputs);
    if (warning) this.ctx.io.err(warning);
  }

  private flushAnnotations(where: string): void {
    this.annotator?.finish(where);
    for (const line of this.annotations.splice(0)) this.ctx.io.err(line);
  }

  /** No report nor rejects: an import that sent names them, an invalid input its report. */
  private summaryBase(): JobSummary {
    const { input, dryRun } = this.options;
    return {
      title: `${this.naming.command} ${input === '-' ? 'stdin' : input}${dryRun ? ' --dry-run' : ''}`,
      outcome: '',
      counts: [],
      keyName: this.naming.keyName,
      recordsName: this.naming.recordsName,
      notCreated: [],
      notCreatedTotal: 0,
    };
  }

  /** Appends the job summary when `$GITHUB_STEP_SUMMARY` names a file; a failure is one warning. */
  private async appendSummary(summary: JobSummary): Promise<void> {
    const path = this.ctx.env.GITHUB_STEP_SUMMARY;
    if (!path) return;
    const markdown = this.ctx.io.redactor.redact(renderJobSummary(summary));
    const warning = await appendJobSummary(path, markdown);
    if (warning) this.ctx.io.err(warning);
  }
}

/**
 * An invalid input's problems in the order that says most in ten lines: the first problem of each
 * invalid record, in input order, then the others (a problem of no record, such as the count of
 * those not listed, last). Problems of a header or a syntax error keep their order.
 */
export function mostUsefulFirst(error: InputError): { problem: InputProblem; rank: ProblemRank }[] {
  if (!(error instanceof InvalidInputError))
    return error.problems.map((problem) => ({ problem, rank: 'first' }));
  const first: InputProblem[] = [];
  const other: InputProblem[] = [];
  const ofRecords = new Set<InputProblem>();
  for (const record of error.invalid) {
    for (const [index, problem] of record.problems.entries()) {
      (index === 0 ? first : other).push(problem);
      ofRecords.add(problem);
    }
  }
  other.push(...error.problems.filter((problem) => !ofRecords.has(problem)));
  return [
    ...first.map((problem) => ({ problem, rank: 'first' as const })),
    ...other.map((problem) => ({ problem, rank: 'other' as const })),
  ];
}

function notCreatedCount(counts: ImportCounts): number {
  return counts.failed + counts.unknown + counts.invalid;
}
