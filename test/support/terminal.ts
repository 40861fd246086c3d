/**
 * What a terminal shows after some output: a small model of the screen for the escape sequences
 * prompts use (cursor moves, erasing lines, colours ignored), so that a test can say a prompt was
 * erased, not only that it was written. Lines wrap at `columns`. `screenLines` has no bottom: the
 * screen never scrolls away. `terminalView` has `rows` rows, as a real window: what goes past the
 * bottom scrolls the top lines off, and the cursor cannot move up to them any more.
 */
import type { Session } from './session.js';
import { startSession } from './session.js';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** What a terminal of a given size shows after some output. */
export interface TerminalView {
  /** The window's rows, top to bottom (trailing empty rows left out). */
  screen: string[];
  /** Every line the terminal holds: those scrolled off the top (its scrollback), then the screen's. */
  lines: string[];
}

/** Every line `output` leaves on a terminal `columns` wide that never scrolls. */
export function screenLines(output: string, columns = 100): string[] {
  return terminalView(output, { columns, rows: Number.POSITIVE_INFINITY }).lines;
}

/**
 * What a terminal of `columns` × `rows` shows after `output`. As on a real terminal, cursor moves
 * stop at the window's edges: a prompt taller than the window cannot erase the lines that scrolled
 * off, and each redraw leaves a copy of them in the scrollback.
 */
export function terminalView(output: string, size: TerminalSize): TerminalView {
  const screen = new ScreenModel(size);
  screen.write(output);
  return screen.view();
}

const SEQUENCE = /^\x1b\[([?0-9;]*)([A-Za-z])/;

class ScreenModel {
  private readonly lines: string[][] = [[]];
  /** The first line of the window; those above it scrolled off. */
  private top = 0;
  private row = 0;
  private col = 0;

  constructor(private readonly size: TerminalSize) {}

  write(output: string): void {
    for (let at = 0; at < output.length; ) {
      const char = output[at]!;
      if (char === '\x1b') {
        const match = SEQUENCE.exec(output.slice(at));
        if (match === null) {
          at++;
          continue;
        }
        at += match[0].length;
        this.control(match[1] ?? '', match[2]!);
        continue;
      }
      at++;
      if (char === '\r') this.col = 0;
      else if (char === '\n') this.newLine();
      else this.print(char);
    }
  }

  view(): TerminalView {
    const lines = this.lines.map((cells) => cells.join('').trimEnd());
    const screen = lines.slice(this.top, this.top + this.size.rows);
    while (screen.length > 0 && screen.at(-1) === '') screen.pop();
    return { screen, lines };
  }

  private get bottom(): number {
    return this.top + this.size.rows - 1;
  }

  private line(): string[] {
    while (this.lines.length <= this.row) this.lines.push([]);
    return this.lines[this.row]!;
  }

  private newLine(): void {
    this.row++;
    this.col = 0;
    if (this.row > this.bottom) this.top = this.row - this.size.rows + 1;
  }

  private print(char: string): void {
    if (this.col >= this.size.columns) this.newLine();
    const current = this.line();
    while (current.length < this.col) current.push(' ');
    current[this.col] = char;
    this.col++;
  }

  private control(parameters: string, command: string): void {
    const n = Number.parseInt(parameters, 10);
    const count = Number.isNaN(n) ? 1 : n;
    switch (command) {
      case 'A':
        this.row = Math.max(this.top, this.row - count);
        break;
      case 'B':
        this.row = Math.min(this.bottom, this.row + count);
        break;
      case 'C':
        this.col += count;
        break;
      case 'D':
        this.col = Math.max(0, this.col - count);
        break;
      case 'G':
        this.col = Number.isNaN(n) ? 0 : n - 1;
        break;
      case 'K': {
        const line = this.line();
        if (parameters === '2') line.length = 0;
        else if (parameters === '1') line.fill(' ', 0, this.col);
        else line.length = Math.min(line.length, this.col);
        break;
      }
      case 'J':
        this.line().length = Math.min(this.line().length, this.col);
        this.lines.length = this.row + 1;
        break;
      default:
      // Colours (m), cursor shown or hidden (?25h/l): nothing on the screen changes.
    }
  }
}

/** An interactive session on a terminal of a given size, and what its window shows. */
export interface TerminalSession extends Session {
  view(): TerminalView;
}

/** `startSession` on a terminal of `columns` × `rows`: prompts see both (stdout's `columns` and `rows`). */
export function startTerminalSession(
  args: string[],
  env: Record<string, string | undefined>,
  size: TerminalSize,
): TerminalSession {
  const session = startSession(args, env, size.columns);
  // The test IO's stdout says 24 rows; the command reads them only once it prompts, after this.
  (session.io.stdout as unknown as { rows: number }).rows = size.rows;
  return { ...session, view: () => terminalView(session.io.stdoutText(), size) };
}
