/**
 * Import progress on stderr: a bar redrawn in place on a terminal (done/total, rate, ETA,
 * failures), a plain summary line every few seconds otherwise (CI logs), and the final summary.
 * It reads the live counts on a timer, so the per-order path costs nothing here.
 */

import { formatCount } from '../../io/numbers.js';
import { escapeControl } from '../../io/quote.js';
import type { IOStreams } from '../../io/streams.js';
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
}

/** Rate over the last few seconds, so that the ETA follows slow-downs (429 pauses) quickly. */
const RATE_WINDOW_MS = 5_000;

export class ImportProgress {
  private readonly io: IOStreams;
  private readonly counts: ImportCounts;
  private readonly tty: boolean;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly noun: string;
  private timer: NodeJS.Timeout | undefined;
  private started = 0;
  private samples: { at: number; done: number }[] = [];
  private drawn = false;

  constructor(io: IOStreams, counts: ImportCounts, options: ProgressOptions = {}) {
    this.io = io;
    this.counts = counts;
    this.tty = options.tty ?? io.stderrIsTTY;
    this.intervalMs = this.tty ? (options.ttyIntervalMs ?? 100) : (options.lineIntervalMs ?? 5_000);
    this.now = options.now ?? (() => performance.now());
    this.noun = options.noun ?? 'orders';
  }

  start(): void {
    this.started = this.now();
    this.samples = [{ at: this.started, done: doneCount(this.counts) }];
    if (this.tty) this.draw();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    // Progress must never keep the process alive on its own.
    this.timer.unref();
  }

  /** Stops the timer and removes the bar, so that the summary starts on a clean line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty && this.drawn) this.io.err('\r\x1b[2K');
    this.drawn = false;
  }

  /** One timer tick: redraw the bar, or print a summary line. */
  tick(): void {
    const at = this.now();
    this.samples.push({ at, done: doneCount(this.counts) });
    while (this.samples.length > 2 && at - this.samples[0]!.at > RATE_WINDOW_MS) this.samples.shift();
    if (this.tty) this.draw();
    else this.io.err(`${this.line()}\n`);
  }

  /** Orders per second over the recent window (0 before there is anything to measure). */
  rate(): number {
    const first = this.samples[0];
    const last = this.samples[this.samples.length - 1];
    if (!first || !last || last.at - first.at < 1) return 0;
    return ((last.done - first.done) * 1000) / (last.at - first.at);
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
    return parts.join(' · ');
  }

  /** The bar, fitted to the terminal width. */
  bar(width: number): string {
    const counts = this.counts;
    const done = doneCount(counts);
    const rate = this.rate();
    const problems = counts.failed + counts.unknown + counts.invalid;
    const right = ` ${formatCount(done)}/${formatCount(counts.total)} ${percent(done, counts.total).padStart(4)} · ${formatCount(Math.round(rate))}/s · ETA ${timeLeft(counts.total - done, rate)}${problems > 0 ? ` · ${problemCounts(counts)}` : ''}`;
    const barWidth = Math.max(10, Math.min(40, width - right.length - 3));
    const filled = counts.total === 0 ? barWidth : Math.round((barWidth * done) / counts.total);
    const text = `[${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)}]${right}`;
    return text.length >= width ? text.slice(0, Math.max(0, width - 1)) : text;
  }

  private draw(): void {
    this.io.err(`\r\x1b[2K${this.bar(this.io.columns)}`);
    this.drawn = true;
  }
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
  rows.push(['total', counts.total, '']);
  const width = Math.max(...rows.map(([, n]) => formatCount(n).length));
  const seconds = (info.durationMs / 1000).toFixed(1);
  const sent =
    info.sent > 0
      ? `${formatCount(info.sent)} ${info.sent === 1 ? (info.noun?.one ?? 'order') : (info.noun?.many ?? 'orders')} sent (${formatCount(Math.round(info.sentPerSecond))}/s)`
      : 'nothing sent';
  const lines = [
    `Import of ${escapeControl(info.input)}${info.baseUrl ? ` → ${info.baseUrl}` : ''}: ${info.stopped ? `stopped (${info.stopped}) after` : 'finished in'} ${seconds} s, ${sent}`,
    ...rows.map(
      ([label, n, note]) =>
        `  ${label.padEnd(8)} ${formatCount(n).padStart(width)}${note ? `   ${note}` : ''}`,
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
