/**
 * Import progress on stderr: a line redrawn in place on a terminal, a plain line every few
 * seconds otherwise (CI logs), for each phase of an import: reading and validating the input
 * (`ReadingProgress`: records so far and their rate, as the total is not known yet), then sending
 * (`ImportProgress`: a bar of done/total, rate, ETA, failures); and the final summary.
 * They read live counts on a timer, so the per-record path costs nothing here.
 */

import { formatCount } from '../../io/numbers.js';
import { escapeControl } from '../../io/quote.js';
import type { IOStreams } from '../../io/streams.js';
import type { ReadCounts } from '../types.js';
import { doneCount, type ImportCounts } from './report.js';

export interface ProgressOptions {
  /** Redraw period of the bar on a terminal (default 100 ms). */
  ttyIntervalMs?: number;
  /** Period of the summary lines when stderr is not a terminal (default 5 s). */
  lineIntervalMs?: number;
  /** Draw the bar (stderr is a terminal) or print lines. */
  tty?: boolean;
  now?: () => number;
  /** What is imported, in the summary lines (default `orders`). */
  noun?: string;
  /** Aborted on Ctrl-C: the display then says the import is stopping. */
  signal?: AbortSignal;
  /**
   * When the phase before printed its last line (or started), on the clock of `now`: the first
   * line comes one period after it, so that a log gets a line every period across the phases.
   */
  lastLineAt?: number;
}

/** Rate over the last few seconds, so that the ETA follows slow-downs (429 pauses) quickly. */
const RATE_WINDOW_MS = 5_000;

/** The timer, the rate and the drawing that every phase's display shares. */
abstract class TimedProgress {
  protected readonly io: IOStreams;
  protected readonly tty: boolean;
  protected readonly noun: string;
  protected readonly signal: AbortSignal | undefined;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private samples: { at: number; done: number }[] = [];
  private drawn = false;
  /** When the last line was printed (or the display started): see `ProgressOptions.lastLineAt`. */
  lastLineAt: number;

  constructor(io: IOStreams, options: ProgressOptions) {
    this.io = io;
    this.tty = options.tty ?? io.stderrIsTTY;
    this.intervalMs = this.tty ? (options.ttyIntervalMs ?? 100) : (options.lineIntervalMs ?? 5_000);
    this.now = options.now ?? (() => performance.now());
    this.noun = options.noun ?? 'orders';
    this.signal = options.signal;
    this.lastLineAt = options.lastLineAt ?? this.now();
  }

  /** How many records are done, for the rate. */
  protected abstract done(): number;
  /** The line printed when stderr is not a terminal. */
  abstract line(): string;
  /** The line redrawn on a terminal, fitted to its width. */
  abstract bar(width: number): string;

  /** Starts the timer; `drawNow` draws the bar at once rather than at the first tick. */
  protected startTimer(drawNow: boolean): void {
    const now = this.now();
    this.samples = [{ at: now, done: this.done() }];
    if (this.tty && drawNow) this.draw();
    const first = this.tty ? this.intervalMs : Math.max(0, this.intervalMs - (now - this.lastLineAt));
    this.timer = setTimeout(() => {
      this.tick();
      this.timer = setInterval(() => this.tick(), this.intervalMs);
      this.timer.unref();
    }, first);
    // Progress must never keep the process alive on its own.
    this.timer.unref();
  }

  /** Stops the timer and removes the bar, so that what follows starts on a clean line. */
  stop(): void {
    // A timeout until the first tick, an interval after it: clearTimeout ends either.
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.tty && this.drawn) this.io.err('\r\x1b[2K');
    this.drawn = false;
  }

  /** One timer tick: redraw the bar, or print a summary line. */
  tick(): void {
    const at = this.now();
    this.samples.push({ at, done: this.done() });
    while (this.samples.length > 2 && at - this.samples[0]!.at > RATE_WINDOW_MS) this.samples.shift();
    if (this.tty) this.draw();
    else this.io.err(`${this.line()}\n`);
    this.lastLineAt = at;
  }

  /** Records per second over the recent window (0 before there is anything to measure). */
  rate(): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at - first.at < 1) return 0;
    return ((last.done - first.done) * 1000) / (last.at - first.at);
  }

  /** ` · stopping (Ctrl-C)` once interrupted, so that a display still moving says why. */
  protected stopping(): string {
    return this.signal?.aborted ? ' · stopping (Ctrl-C)' : '';
  }

  private draw(): void {
    this.io.err(`\r\x1b[2K${this.bar(this.io.columns)}`);
    this.drawn = true;
  }
}

/** Progress of the sending pass: done/total, rate, ETA and failures. */
export class ImportProgress extends TimedProgress {
  private readonly counts: ImportCounts;

  constructor(io: IOStreams, counts: ImportCounts, options: ProgressOptions = {}) {
    super(io, options);
    this.counts = counts;
  }

  start(): void {
    this.startTimer(true);
  }

  protected done(): number {
    return doneCount(this.counts);
  }

  /** The summary line printed when stderr is not a terminal. */
  line(): string {
    const counts = this.counts;
    const done = doneCount(counts);
    const parts = [
      `import: ${formatCount(done)}/${formatCount(counts.total)} ${this.noun} (${percent(done, counts.total)})`,
      `created ${formatCount(counts.created)}, skipped ${formatCount(counts.skipped)}, ${counts.exists > 0 ? `exists ${formatCount(counts.exists)}, ` : ''}failed ${formatCount(counts.failed)}, unknown ${formatCount(counts.unknown)}, invalid ${formatCount(counts.invalid)}`,
      `${formatCount(Math.round(this.rate()))}/s, ${timeLeft(counts.total - done, this.rate())} left`,
    ];
    return `${parts.join(' · ')}${this.stopping()}`;
  }

  /** The bar, fitted to the terminal width. */
  bar(width: number): string {
    const counts = this.counts;
    const done = doneCount(counts);
    const rate = this.rate();
    const problems = counts.failed + counts.unknown + counts.invalid;
    const right = ` ${formatCount(done)}/${formatCount(counts.total)} ${percent(done, counts.total).padStart(4)} · ${formatCount(Math.round(rate))}/s · ETA ${timeLeft(counts.total - done, rate)}${problems > 0 ? ` · ${problemCounts(counts)}` : ''}${this.stopping()}`;
    const barWidth = Math.max(10, Math.min(40, width - right.length - 3));
    const filled = counts.total === 0 ? barWidth : Math.round((barWidth * done) / counts.total);
    return fitted(`[${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)}]${right}`, width);
  }
}

/**
 * Progress of the validation pass, before anything is sent: the records read so far and their
 * rate (the total is known only at the end of the input). Drawn from the first tick, not at once,
 * so that a small input that is read in a moment leaves nothing on the terminal.
 */
export class ReadingProgress extends TimedProgress {
  private readonly counts: ReadCounts;

  constructor(io: IOStreams, counts: ReadCounts, options: ProgressOptions = {}) {
    super(io, options);
    this.counts = counts;
  }

  start(): void {
    this.startTimer(false);
  }

  protected done(): number {
    return this.counts.read;
  }

  /** The line printed every few seconds when stderr is not a terminal. */
  line(): string {
    const { read, invalid } = this.counts;
    return `import: reading and validating: ${formatCount(read)} ${this.noun} so far, ${formatCount(invalid)} invalid · ${formatCount(Math.round(this.rate()))}/s${this.stopping()}`;
  }

  /** The line redrawn on a terminal, fitted to its width. */
  bar(width: number): string {
    const { read, invalid } = this.counts;
    const problems = invalid > 0 ? ` · ${formatCount(invalid)} invalid` : '';
    return fitted(
      `Reading and validating: ${formatCount(read)} ${this.noun} · ${formatCount(Math.round(this.rate()))}/s${problems}${this.stopping()}`,
      width,
    );
  }
}

/**
 * `--await validated`, once sending ended: the orders created beside those validated, and how many
 * still wait.
 */
export class AwaitProgress extends TimedProgress {
  constructor(
    io: IOStreams,
    private readonly counts: Readonly<ImportCounts>,
    private readonly waiting: { readonly counts: { validated: number }; readonly pending: number },
    options: ProgressOptions = {},
  ) {
    super(io, options);
  }

  start(): void {
    this.startTimer(false);
  }

  protected done(): number {
    return this.waiting.counts.validated;
  }

  private text(): string {
    const created = this.counts.created + this.counts.skipped;
    return `${formatCount(created)} created · ${formatCount(this.waiting.counts.validated + (this.counts.validated ?? 0))} validated · ${formatCount(this.waiting.pending)} waiting${this.stopping()}`;
  }

  line(): string {
    return `import: waiting for validations: ${this.text()}`;
  }

  bar(width: number): string {
    return fitted(`Waiting for validations: ${this.text()}`, width);
  }
}

/** A line that never wraps: one column short of the width, so that the cursor stays on it. */
function fitted(text: string, width: number): string {
  return text.length >= width ? text.slice(0, Math.max(0, width - 1)) : text;
}

function problemCounts(counts: ImportCounts): string {
  const parts: string[] = [];
  if (counts.failed > 0) parts.push(`${formatCount(counts.failed)} failed`);
  if (counts.unknown > 0) parts.push(`${formatCount(counts.unknown)} unknown`);
  if (counts.invalid > 0) parts.push(`${formatCount(counts.invalid)} invalid`);
  return parts.join(', ');
}

export interface SummaryInfo {
  counts: ImportCounts;
  durationMs: number;
  input: string;
  baseUrl?: string;
  journal?: string;
  report?: string;
  rejects?: string;
  /** Why the run stopped early, if it did. */
  stopped?: string;
  /** Requests sent in this run, and their rate from the first request to the last answer. */
  sent: number;
  sentPerSecond: number;
  /** What is imported, one and several (default order, orders). */
  noun?: { one: string; many: string };
}

/** The final table on stderr: counts, duration, rate, and the input's history in the ledger and where the report is. */
export function renderSummary(info: SummaryInfo): string {
  const { counts } = info;
  const rows: [string, number, string][] = [
    ['created', counts.created, ''],
    ['skipped', counts.skipped, 'already created, or being sent by another ordercli'],
  ];
  if (counts.exists > 0)
    rows.push(['exists', counts.exists, 'already at the service: not sent again, no failure']);
  rows.push(
    ['failed', counts.failed, counts.failed > 0 ? 'refused by the service: fix, then run again' : ''],
    ['unknown', counts.unknown, counts.unknown > 0 ? 'may have been created: see below' : ''],
    ['invalid', counts.invalid, ''],
  );
  if (counts.notSent > 0)
    rows.push(['not sent', counts.notSent, 'the import stopped first: run it again to send them']);
  if (counts.validated !== undefined)
    rows.push(['validated', counts.validated, 'sales_order_validated arrived']);
  if (counts.notValidated)
    rows.push(['not validated', counts.notValidated, 'created, but not validated in time: see the report']);
  rows.push(['total', counts.total, '']);
  const width = Math.max(...rows.map(([, n]) => formatCount(n).length));
  const labels = Math.max(8, ...rows.map(([label]) => label.length));
  const seconds = (info.durationMs / 1000).toFixed(1);
  const sent =
    info.sent > 0
      ? `${formatCount(info.sent)} ${info.sent === 1 ? (info.noun?.one ?? 'order') : (info.noun?.many ?? 'orders')} sent (${formatCount(Math.round(info.sentPerSecond))}/s)`
      : 'nothing sent';
  const lines = [
    `Import of ${escapeControl(info.input)}${info.baseUrl ? ` → ${info.baseUrl}` : ''}: ${info.stopped ? `stopped (${info.stopped}) after` : 'finished in'} ${seconds} s, ${sent}`,
    ...rows.map(
      ([label, n, note]) =>
        `  ${label.padEnd(labels)} ${formatCount(n).padStart(width)}${note ? `   ${note}` : ''}`,
    ),
  ];
  // Paths as given may hold a line break or an escape sequence: shown escaped, never raw.
  if (info.journal) lines.push(`  history  ordercli orders journal ${escapeControl(info.journal)}`);
  if (info.report) lines.push(`  report   ${escapeControl(info.report)}`);
  if (info.rejects) lines.push(`  rejects  ${escapeControl(info.rejects)}`);
  return `${lines.join('\n')}\n`;
}

function percent(done: number, total: number): string {
  return total === 0 ? '100%' : `${Math.floor((100 * done) / total)}%`;
}

function timeLeft(remaining: number, rate: number): string {
  if (remaining <= 0) return '0s';
  if (rate <= 0) return '--';
  const seconds = Math.ceil(remaining / rate);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
