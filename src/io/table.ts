/**
 * Terminal tables fitted to the terminal width, drawn by cli-table3: `fitWidths` decides which
 * columns are shown and how wide, cli-table3 pads, cuts long cells with `…` and draws the frame
 * (no rule between rows).
 */
import Table from 'cli-table3';
import { cleanCell, displayWidth, truncate } from './cells.js';

/** Border and padding cost per column: `│ ` + ` `, plus one for the closing `│`. */
const COLUMN_OVERHEAD = 3;
/** A column is not shrunk below this (or below its natural width when narrower). */
const MIN_COLUMN = 6;
/** Tables never get narrower than this, even in a tiny terminal. */
const MIN_TABLE_WIDTH = 40;
/** A header may be cut rather than widen a column of short values, but keeps this many cells. */
const READABLE_HEADER = 12;
/**
 * Rows drawn by one cli-table3 table: its layout compares every cell with the rows above it, so
 * a long table is drawn in blocks of the same column widths, joined without their inner rules.
 */
const ROWS_PER_BLOCK = 100;

export type Align = 'left' | 'right';

/** What a column asks of the layout. */
export interface ColumnFit {
  /** Narrowest width worth showing (default 6, never more than the content needs). */
  minWidth?: number;
  /** When not every column fits, the lowest priority is left out first (default: later columns lower). */
  priority?: number;
}

export interface TableLayout {
  /** Indexes of the columns shown, in order. */
  shown: number[];
  /** Display width of each shown column. */
  widths: number[];
}

export interface TableOptions {
  /** Terminal width of stdout. */
  width: number;
  color: boolean;
  /** Per column; default left. */
  align?: Align[];
  fits?: ColumnFit[];
}

/** A table ready to be written: which columns were left out or cut, and its text in blocks of rows. */
export interface RenderedTable extends TableLayout {
  /** Indexes of the shown columns some of whose values are cut with `…`. */
  cut: number[];
  chunks: Iterable<string>;
}

/**
 * Which columns to show and how wide. When even their minimums do not fit `maxWidth`, the
 * lowest-priority column is left out. Then no column may take more than 40 % of the width, and the
 * rest of the excess is taken from the lowest-priority columns first, none below its minimum: the
 * label stays whole while the taxes are cut.
 */
export function fitWidths(natural: number[], maxWidth: number, fits: ColumnFit[] = []): TableLayout {
  const width = Math.max(maxWidth, MIN_TABLE_WIDTH);
  const mins = natural.map((w, i) => Math.min(w, fits[i]?.minWidth ?? MIN_COLUMN));
  const priority = (i: number) => fits[i]?.priority ?? -i;
  const shown = natural.map((_, i) => i);
  const cost = (sizes: (i: number) => number) =>
    shown.reduce((total, i) => total + sizes(i) + COLUMN_OVERHEAD, 1);
  while (shown.length > 1 && cost((i) => mins[i] ?? 0) > width) {
    let lowest = 0;
    for (let k = 1; k < shown.length; k++) if (priority(shown[k]!) < priority(shown[lowest]!)) lowest = k;
    shown.splice(lowest, 1);
  }
  const widths = shown.map((i) => natural[i] ?? 0);
  let excess = cost((i) => natural[i] ?? 0) - width;
  if (excess <= 0) return { shown, widths };

  const cap = Math.floor((width - 1 - COLUMN_OVERHEAD * shown.length) * 0.4);
  for (let k = 0; k < shown.length && excess > 0; k++) {
    const cut = Math.min(excess, widths[k]! - Math.max(cap, mins[shown[k]!]!));
    if (cut > 0) {
      widths[k] = widths[k]! - cut;
      excess -= cut;
    }
  }
  const byPriority = shown.map((_, k) => k).sort((a, b) => priority(shown[a]!) - priority(shown[b]!));
  for (const k of byPriority) {
    if (excess <= 0) break;
    const cut = Math.min(excess, widths[k]! - mins[shown[k]!]!);
    if (cut > 0) {
      widths[k] = widths[k]! - cut;
      excess -= cut;
    }
  }
  return { shown, widths };
}

const FRAME = /[─│┌┐└┘├┤┬┴┼]+/g;

/**
 * Lays out and draws rows (cells cleaned here: one line, control characters escaped) as a framed
 * table no wider than `options.width`; columns that do not fit are left out.
 */
export function renderTable(headers: string[], rows: string[][], options: TableOptions): RenderedTable {
  const cleanHeaders = headers.map(cleanCell);
  const cells = rows.map((row) => headers.map((_, i) => cleanCell(row[i] ?? '')));
  const widest = headers.map(() => 0);
  for (const row of cells) {
    for (let i = 0; i < row.length; i++) widest[i] = Math.max(widest[i] ?? 0, displayWidth(row[i] ?? ''));
  }
  const natural = widest.map((w, i) =>
    Math.max(w, Math.min(displayWidth(cleanHeaders[i] ?? ''), READABLE_HEADER)),
  );
  const layout = fitWidths(natural, options.width, options.fits);
  const cut = layout.shown.filter((i, k) => (layout.widths[k] ?? 0) < (widest[i] ?? 0));
  return { ...layout, cut, chunks: drawBlocks(cleanHeaders, cells, layout, options) };
}

function* drawBlocks(
  headers: string[],
  rows: string[][],
  { shown, widths }: TableLayout,
  options: TableOptions,
): Generator<string> {
  const pick = (row: string[]) => shown.map((i) => row[i] ?? '');
  const bold = (text: string) => (options.color ? `\x1b[1m${text}\x1b[22m` : text);
  // Cut here, so that cli-table3 never cuts through the bold's escape codes.
  const head = pick(headers).map((header, k) => bold(truncate(header, widths[k] ?? 0)));
  const base = {
    colWidths: widths.map((w) => w + 2),
    colAligns: shown.map((i) => options.align?.[i] ?? 'left'),
    truncate: '…',
    wordWrap: false,
    style: { head: [], border: [], compact: true },
  };
  for (let start = 0; start === 0 || start < rows.length; start += ROWS_PER_BLOCK) {
    const table = new Table({ ...base, head: start === 0 ? head : [] });
    for (const row of rows.slice(start, start + ROWS_PER_BLOCK)) table.push(pick(row));
    let lines = table.toString().split('\n');
    if (start > 0) lines = lines.slice(1);
    if (start + ROWS_PER_BLOCK < rows.length) lines = lines.slice(0, -1);
    const text = `${lines.join('\n')}\n`;
    yield options.color ? text.replace(FRAME, (frame) => `\x1b[90m${frame}\x1b[39m`) : text;
  }
}
