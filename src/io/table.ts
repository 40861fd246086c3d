/**
 * Terminal tables fitted to the terminal width. Rendered here rather than with cli-table3, which
 * took minutes for 50,000 rows (it measures and pads every cell through several layers); the
 * look is the same box-drawing frame, without a rule between rows.
 */
import { escapeControl } from './quote.js';

/** Border and padding cost per column: `│ ` + ` `, plus one for the closing `│`. */
const COLUMN_OVERHEAD = 3;
/** A column is not shrunk below this (or below its natural width when narrower). */
const MIN_COLUMN = 6;
/** Tables never get narrower than this, even in a tiny terminal. */
const MIN_TABLE_WIDTH = 40;
/** Rows per string written to the stream: bounded memory for any length of list. */
const ROWS_PER_CHUNK = 1000;
const ELLIPSIS = '…';

export type Align = 'left' | 'right';

export interface TableOptions {
  /** Terminal width of stdout. */
  width: number;
  color: boolean;
  /** Per column; default left. */
  align?: Align[];
}

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

const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * A cell as it may be shown: one line, control characters escaped (`\u001b`, `\t`: data from the
 * service must never drive the terminal), accents composed (NFC).
 */
export function cleanCell(text: string): string {
  if (ASCII_PRINTABLE.test(text)) return text;
  return escapeControl(text).normalize('NFC');
}

function isZeroWidth(code: number): boolean {
  return (
    (code >= 0x300 && code <= 0x36f) ||
    (code >= 0x1ab0 && code <= 0x1aff) ||
    (code >= 0x1dc0 && code <= 0x1dff) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x20d0 && code <= 0x20ff) ||
    (code >= 0x2060 && code <= 0x2064) ||
    (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0xfe20 && code <= 0xfe2f) ||
    code === 0xfeff
  );
}

function isWide(code: number): boolean {
  return (
    code >= 0x1100 &&
    (code <= 0x115f ||
      (code >= 0x2e80 && code <= 0x303e) ||
      (code >= 0x3041 && code <= 0x33ff) ||
      (code >= 0x3400 && code <= 0x4dbf) ||
      (code >= 0x4e00 && code <= 0x9fff) ||
      (code >= 0xa000 && code <= 0xa4cf) ||
      (code >= 0xac00 && code <= 0xd7a3) ||
      (code >= 0xf900 && code <= 0xfaff) ||
      (code >= 0xfe30 && code <= 0xfe4f) ||
      (code >= 0xff00 && code <= 0xff60) ||
      (code >= 0xffe0 && code <= 0xffe6) ||
      (code >= 0x1f300 && code <= 0x1f64f) ||
      (code >= 0x1f900 && code <= 0x1f9ff) ||
      (code >= 0x20000 && code <= 0x3fffd))
  );
}

function charWidth(code: number): number {
  if (code < 0x300) return 1;
  if (isZeroWidth(code)) return 0;
  return isWide(code) ? 2 : 1;
}

/** Terminal cells a (clean) text takes: combining marks none, East Asian wide and emoji two. */
export function displayWidth(text: string): number {
  if (ASCII_PRINTABLE.test(text)) return text.length;
  let n = 0;
  for (const ch of text) n += charWidth(ch.codePointAt(0) ?? 0);
  return n;
}

/** Cuts a (clean) text to at most `max` cells, ending with `…` when something was cut. */
export function truncate(text: string, max: number): string {
  if (displayWidth(text) <= max) return text;
  if (max <= 0) return '';
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = charWidth(ch.codePointAt(0) ?? 0);
    if (used + w > max - 1) break;
    out += ch;
    used += w;
  }
  return out + ELLIPSIS;
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

const ANSI = {
  bold: (t: string) => `\x1b[1m${t}\x1b[22m`,
  grey: (t: string) => `\x1b[90m${t}\x1b[39m`,
};

/** Cleaned cells with their display widths, measured once for layout and rendering. */
export interface Grid {
  headers: string[];
  rows: string[][];
  /** Display width of `rows[r][i]` at `r * headers.length + i`. */
  widths: Uint32Array;
}

/** Cleans the cells (in place) and measures them. */
export function measureGrid(headers: string[], rows: string[][]): Grid {
  const columns = headers.length;
  const widths = new Uint32Array(rows.length * columns);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let i = 0; i < columns; i++) {
      const cell = row[i] ?? '';
      if (ASCII_PRINTABLE.test(cell)) {
        widths[r * columns + i] = cell.length;
      } else {
        const clean = cleanCell(cell);
        row[i] = clean;
        widths[r * columns + i] = displayWidth(clean);
      }
    }
  }
  return { headers: headers.map(cleanCell), rows, widths };
}

/** Decides which columns fit the terminal, and how wide each is. */
export function layoutGrid(grid: Grid, terminalWidth: number, fits: ColumnFit[] = []): TableLayout {
  const columns = grid.headers.length;
  const natural = grid.headers.map(() => 0);
  for (let j = 0; j < grid.widths.length; j++) {
    const i = j % columns;
    if (grid.widths[j]! > natural[i]!) natural[i] = grid.widths[j]!;
  }
  // A header may be cut rather than widen a column of short values, but stays readable.
  for (let i = 0; i < columns; i++)
    natural[i] = Math.max(natural[i]!, Math.min(displayWidth(grid.headers[i]!), 12));
  return fitWidths(natural, terminalWidth, fits);
}

const SPACES = ' '.repeat(512);

function spaces(n: number): string {
  return n <= SPACES.length ? SPACES.slice(0, n) : ' '.repeat(n);
}

/**
 * Renders a measured grid as a framed table, in chunks of rows (so that a long list is written as
 * it is rendered). Cells wider than their column end with `…`.
 */
export function* renderGridChunks(grid: Grid, layout: TableLayout, options: TableOptions): Generator<string> {
  const { widths, shown } = layout;
  const columns = grid.headers.length;
  const align = options.align ?? [];
  const border = options.color ? ANSI.grey : (t: string) => t;
  const rule = (left: string, middle: string, right: string) =>
    border(left + widths.map((w) => '─'.repeat(w + 2)).join(middle) + right);
  const bar = border('│');
  const cellText = (text: string, width: number, w: number, right: boolean) => {
    if (width > w) {
      text = truncate(text, w);
      width = displayWidth(text);
    }
    return right ? spaces(w - width) + text : text + spaces(w - width);
  };

  let header = bar;
  for (let k = 0; k < shown.length; k++) {
    const i = shown[k]!;
    const text = cellText(grid.headers[i]!, displayWidth(grid.headers[i]!), widths[k]!, align[i] === 'right');
    header += ` ${options.color ? ANSI.bold(text) : text} ${bar}`;
  }
  let chunk = `${rule('┌', '┬', '┐')}\n${header}\n${rule('├', '┼', '┤')}\n`;
  const separator = ` ${bar} `;
  for (let r = 0; r < grid.rows.length; r++) {
    const row = grid.rows[r]!;
    let line = `${bar} `;
    for (let k = 0; k < shown.length; k++) {
      const i = shown[k]!;
      if (k > 0) line += separator;
      line += cellText(row[i] ?? '', grid.widths[r * columns + i]!, widths[k]!, align[i] === 'right');
    }
    chunk += `${line} ${bar}\n`;
    if ((r + 1) % ROWS_PER_CHUNK === 0) {
      yield chunk;
      chunk = '';
    }
  }
  yield `${chunk}${rule('└', '┴', '┘')}\n`;
}

/** Renders rows as a framed table no wider than `terminalWidth` (columns that do not fit are left out). */
export function renderTable(
  headers: string[],
  rows: string[][],
  terminalWidth: number,
  color: boolean,
): string {
  const grid = measureGrid(
    headers,
    rows.map((row) => [...row]),
  );
  const layout = layoutGrid(grid, terminalWidth);
  return [...renderGridChunks(grid, layout, { width: terminalWidth, color })].join('');
}
