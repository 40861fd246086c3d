/**
 * GitHub Actions output of an import: workflow commands (`::error file=…,line=…::…`) that put
 * each problem on the offending line of the pull request, and the markdown job summary appended
 * to `$GITHUB_STEP_SUMMARY`. Generic over keyed records (orders, contact references).
 */
import { randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { InputProblem } from '../../core/errors.js';
import { escapeControl, shorten } from '../../io/quote.js';
import type { KeyedResult } from './junit.js';

/** Whether the command runs in a GitHub Actions job. */
export function inGitHubActions(env: NodeJS.ProcessEnv): boolean {
  return env.GITHUB_ACTIONS === 'true';
}

/** Annotations of one kind that GitHub shows for a step; more are dropped without a word. */
export const ANNOTATIONS_PER_KIND = 10;

export type AnnotationKind = 'error' | 'warning' | 'notice';

/** A workflow command's message: `%`, CR and LF escaped, as GitHub's toolkit does. */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value: as the message, plus `:` and `,`. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export interface AnnotationProperties {
  file?: string | undefined;
  line?: number | undefined;
  endLine?: number | undefined;
  title?: string | undefined;
}

/** `::error file=orders.csv,line=12,title=contact.email::contact.email: …` (one line). */
export function workflowCommand(
  kind: AnnotationKind,
  properties: AnnotationProperties,
  message: string,
): string {
  const pairs = Object.entries(properties)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([name, value]) => `${name}=${escapeProperty(escapeControlButLines(String(value)))}`);
  const head = pairs.length > 0 ? `${kind} ${pairs.join(',')}` : kind;
  return `::${head}::${escapeData(escapeControlButLines(message))}\n`;
}

/** Control characters escaped as the terminal output does, line breaks left to `escapeData`. */
function escapeControlButLines(text: string): string {
  return text.replace(/[^\r\n]+/g, (part) => escapeControl(part));
}

/**
 * The path GitHub matches against the repository's files: relative to `GITHUB_WORKSPACE` when the
 * input is inside it, else as given; none for standard input.
 */
export function annotationPath(
  input: string,
  file: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (input === '-') return undefined;
  const workspace = env.GITHUB_WORKSPACE;
  const absolute = resolve(cwd, file);
  if (workspace) {
    const inside = relative(resolve(workspace), absolute);
    if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) return inside.split(sep).join('/');
  }
  return file;
}

export interface AnnotatorOptions {
  /** The input as typed (`-` for standard input) and the command's cwd and environment. */
  input: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** What the record's key is called (`externalId`), for the title of a warning. */
  keyName: string;
  /** Where the commands go (stderr). */
  write: (line: string) => void;
  /** Annotations of each kind at most (default: what GitHub shows for a step). */
  perKind?: number;
}

/** Which of a record's problems an error annotation is: its first one, or one of the others. */
export type ProblemRank = 'first' | 'other';

/** Annotations of each kind, and how many were left out for GitHub's limit. */
export interface AnnotationCounts {
  errors: number;
  warnings: number;
}

/**
 * Collects annotations for problems and results, and prints at `finish()` at most `perKind` of
 * each kind (what GitHub shows): the errors that say most first — the first problem of each
 * invalid record, in input order, then the other problems — then the warnings, in input order;
 * one notice says how many were left out and where they are. It keeps only what it may print.
 */
export class Annotator {
  private readonly options: AnnotatorOptions;
  private readonly perKind: number;
  private readonly kept: Record<ProblemRank | 'warning', string[]> = { first: [], other: [], warning: [] };
  private readonly seen: Record<ProblemRank | 'warning', number> = { first: 0, other: 0, warning: 0 };
  private readonly paths = new Map<string, string | undefined>();

  constructor(options: AnnotatorOptions) {
    this.options = options;
    this.perKind = options.perKind ?? ANNOTATIONS_PER_KIND;
  }

  /**
   * A problem of an invalid input: an error on its line, titled with its field (a workbook's cell
   * leads the message). `other` when it is not its record's first problem.
   */
  problem(problem: InputProblem, rank: ProblemRank = 'first'): void {
    const text = problem.field ? `${problem.field}: ${problem.message}` : problem.message;
    const message = problem.cell === undefined ? text : `${problem.cell}: ${text}`;
    this.keep(
      rank,
      workflowCommand(
        'error',
        { file: this.pathOf(problem.file), line: problem.line, title: problem.field },
        message,
      ),
    );
  }

  /** The problems of one invalid record, in order: its first one ranks before every other problem. */
  record(problems: readonly InputProblem[], line?: number): void {
    for (const [index, problem] of problems.entries()) {
      const placed = line === undefined ? problem : { ...problem, line: problem.line ?? line };
      this.problem(placed, index === 0 ? 'first' : 'other');
    }
  }

  /** A record's result: the problems of an invalid one errors; a failed or unknown one a warning. */
  result(result: KeyedResult): void {
    if (result.status === 'invalid') {
      if (result.problems && result.problems.length > 0) this.record(result.problems, result.line);
      else this.problem({ file: result.file, line: result.line, message: result.message ?? 'invalid' });
      return;
    }
    const notValidated = result.notValidated !== undefined;
    if (result.status !== 'failed' && result.status !== 'unknown' && !notValidated) return;
    const key = result.key ?? `(no ${this.options.keyName})`;
    const what = notValidated ? 'not validated' : result.status;
    const properties: AnnotationProperties = {
      file: this.pathOf(result.file),
      line: result.line,
      endLine: result.endLine !== undefined && result.endLine > result.line ? result.endLine : undefined,
      title: `${key} ${what}`,
    };
    const message = notValidated ? `created, but ${result.notValidated}` : (result.message ?? '');
    this.keep('warning', workflowCommand('warning', properties, `${key} ${what}: ${message}`));
  }

  /**
   * How many errors and warnings `finish()` prints, and how many it leaves out; `firstLeft`: of
   * the errors left out, how many are the first problem of their record (records not annotated).
   */
  counts(): { shown: AnnotationCounts; left: AnnotationCounts; firstLeft: number } {
    const errors = this.seen.first + this.seen.other;
    const shown = {
      errors: Math.min(errors, this.perKind),
      warnings: Math.min(this.seen.warning, this.perKind),
    };
    return {
      shown,
      left: { errors: errors - shown.errors, warnings: this.seen.warning - shown.warnings },
      firstLeft: Math.max(0, this.seen.first - this.perKind),
    };
  }

  /** Prints the annotations kept, then one notice when some were left out, saying where every problem is. */
  finish(where: string): void {
    const errors = [...this.kept.first, ...this.kept.other].slice(0, this.perKind);
    for (const line of [...errors, ...this.kept.warning]) this.options.write(line);
    const { left } = this.counts();
    if (left.errors + left.warnings === 0) return;
    const parts = [
      left.errors > 0 ? `${left.errors} more ${left.errors === 1 ? 'error' : 'errors'}` : '',
      left.warnings > 0 ? `${left.warnings} more ${left.warnings === 1 ? 'warning' : 'warnings'}` : '',
    ].filter((part) => part !== '');
    this.options.write(
      workflowCommand(
        'notice',
        { title: 'ordercli: annotations left out' },
        `${parts.join(' and ')} not annotated (GitHub shows ${this.perKind} of each kind per step): ${where}.`,
      ),
    );
  }

  private keep(rank: ProblemRank | 'warning', line: string): void {
    this.seen[rank]++;
    if (this.kept[rank].length < this.perKind) this.kept[rank].push(line);
  }

  private pathOf(file: string): string | undefined {
    if (!this.paths.has(file)) {
      const { input, cwd, env } = this.options;
      this.paths.set(file, annotationPath(input, file, cwd, env));
    }
    return this.paths.get(file);
  }
}

/** What a job summary shows of one import (or dry run). */
export interface JobSummary {
  /** `ordercli orders import orders.csv`, and how it ended (`finished`, `stopped: …`). */
  title: string;
  outcome: string;
  /** The counts, in the order shown: `[['created', 12], ['failed', 1], …]`. */
  counts: [string, number][];
  /** What the record's key is called (`externalId`), and the records (`orders`). */
  keyName: string;
  recordsName: string;
  /** The first records not created, and how many there are in all. */
  notCreated: KeyedResult[];
  notCreatedTotal: number;
  /** Problems of an invalid input that stopped the run (exit 2), the first ones. */
  problems?: InputProblem[];
  problemsTotal?: number;
  /** What more there is and where (problems left out of the list and of the annotations). */
  note?: string | undefined;
  /** `--report` and `--rejects` as typed, when given. */
  report?: string | undefined;
  rejects?: string | undefined;
}

/** A cell's longest text in the summary: GitHub takes at most 1 MiB per step. */
const CELL_CHARS = 300;

/** The job summary as markdown: a table of the counts, then the first records not created. */
export function renderJobSummary(summary: JobSummary): string {
  const lines = [`### ${cell(summary.title)}`, '', cell(summary.outcome), ''];
  if (summary.counts.length > 0) {
    lines.push(
      `| ${summary.counts.map(([label]) => cell(label)).join(' | ')} |`,
      `| ${summary.counts.map(() => '---:').join(' | ')} |`,
      `| ${summary.counts.map(([, n]) => String(n)).join(' | ')} |`,
      '',
    );
  }
  if (summary.notCreated.length > 0) {
    lines.push(
      `${firstOf(summary.notCreated.length, summary.notCreatedTotal, `${summary.recordsName} not created`)}:`,
      '',
      `| line | ${cell(summary.keyName)} | status | reason |`,
      '| --- | --- | --- | --- |',
      ...summary.notCreated.map(
        (result) =>
          `| ${cell(`${result.file}:${result.line}`)} | ${cell(result.key ?? '')} | ${result.status} | ${cell(result.message ?? '')} |`,
      ),
      '',
    );
  }
  const problems = summary.problems ?? [];
  if (problems.length > 0) {
    lines.push(
      `${firstOf(problems.length, summary.problemsTotal ?? problems.length, 'problems')}:`,
      '',
      '| line | field | problem |',
      '| --- | --- | --- |',
      ...problems.map(
        (problem) =>
          `| ${cell(`${problem.file}${problem.cell !== undefined ? `:${problem.cell}` : problem.line !== undefined ? `:${problem.line}` : ''}`)} | ${cell(problem.field ?? '')} | ${cell(problem.message)} |`,
      ),
      '',
    );
  }
  if (summary.note) lines.push(cell(summary.note, NOTE_CHARS), '');
  const files = [
    summary.report ? `Report: ${cell(summary.report)}` : '',
    summary.rejects ? `Rejects: ${cell(summary.rejects)}` : '',
  ].filter((part) => part !== '');
  if (files.length > 0) lines.push(files.join(' · '), '');
  return `${lines.join('\n')}\n`;
}

function firstOf(shown: number, total: number, what: string): string {
  const label = what.charAt(0).toUpperCase() + what.slice(1);
  return shown < total ? `**${label}** (the first ${shown} of ${total})` : `**${label}**`;
}

/** A note's longest text: it names the report, whose path may be long. */
const NOTE_CHARS = 1000;

/** A value in a markdown table cell: control characters, markup and pipes escaped, kept short. */
export function cell(text: string, max = CELL_CHARS): string {
  return escapeControl(shorten(text, max))
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[\\`*_[\]|~#]/g, '\\$&');
}

/**
 * Appends the summary to `$GITHUB_STEP_SUMMARY`; never fails the command: a write error comes
 * back as one warning line to print.
 */
export function appendJobSummary(path: string, markdown: string): Promise<string | undefined> {
  return appendOrWarn(path, markdown, 'the job summary');
}

/**
 * Appends step outputs to `$GITHUB_OUTPUT` in the multi-line form GitHub documents
 * (`name<<DELIMITER`, the value, `DELIMITER`), safe for any value: the delimiter is random and
 * checked not to occur in the value. Never fails the command: a write error is one warning line.
 */
export function appendStepOutputs(
  path: string,
  outputs: Record<string, string | number>,
): Promise<string | undefined> {
  let text = '';
  for (const [name, raw] of Object.entries(outputs)) {
    const value = String(raw);
    let delimiter: string;
    do delimiter = `ghadelimiter_${randomUUID()}`;
    while (value.includes(delimiter));
    text += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  return appendOrWarn(path, text, 'the step outputs');
}

/** Appends to a file GitHub reads; a failure is the warning line to print, never the command's. */
async function appendOrWarn(path: string, text: string, what: string): Promise<string | undefined> {
  try {
    await appendFile(path, text, 'utf8');
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return `warning: cannot append ${what} to ${escapeControl(path)} (${code}); the import itself is not affected.\n`;
  }
}
