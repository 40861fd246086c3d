/**
 * Long messages wrapped for a terminal at word boundaries. Widths are measured with string-width
 * (East Asian wide characters and emoji take two cells, colour codes none). A word longer than a
 * line (a URL, a path, a token) is never cut: it stays whole on a line of its own, so that it can
 * still be copied. Text written to a pipe or a file is left as it is: one line per message, for
 * logs and grep.
 */
import stringWidth from 'string-width';
import type { IOStreams } from './streams.js';

/** Continuation lines are indented two more cells than the line they continue. */
const HANGING_INDENT = '  ';

export interface WrapOptions {
  /**
   * Ends every line but the last of a wrapped line: `' \\'` keeps a shell command runnable when
   * it is copied (the width counts it).
   */
  continuation?: string;
}

/** Wraps each line of `text` to at most `width` cells (longer words excepted). */
export function wrapText(text: string, width: number, options: WrapOptions = {}): string {
  return text
    .split('\n')
    .map((line) => wrapLine(line, width, options.continuation ?? ''))
    .join('\n');
}

function wrapLine(line: string, width: number, continuation: string): string {
  if (width <= 0 || stringWidth(line) <= width) return line;
  const room = width - stringWidth(continuation);
  const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
  // A deep indentation would leave too little room: continuation lines then keep the line's own.
  const hang = stringWidth(indent) + HANGING_INDENT.length <= width / 2 ? indent + HANGING_INDENT : indent;
  const hangWidth = stringWidth(hang);
  // Words and the spaces after them; spaces inside a line (aligned columns) are kept as they are.
  const parts = line.slice(indent.length).match(/\S+|\s+/g) ?? [];
  const lines: string[] = [];
  let current = indent;
  let currentWidth = stringWidth(indent);
  let hasWord = false;
  let space = '';
  for (const part of parts) {
    if (/^\s/.test(part)) {
      space = part;
      continue;
    }
    const partWidth = stringWidth(part);
    const spaceWidth = hasWord ? stringWidth(space) : 0;
    if (hasWord && currentWidth + spaceWidth + partWidth > room) {
      lines.push(current + continuation);
      current = hang + part;
      currentWidth = hangWidth + partWidth;
    } else {
      current += (hasWord ? space : '') + part;
      currentWidth += spaceWidth + partWidth;
    }
    hasWord = true;
    space = '';
  }
  lines.push(current);
  return lines.join('\n');
}

/** `text` as it should be written to stderr: wrapped to the terminal's width when stderr is one. */
export function wrapForStderr(io: IOStreams, text: string): string {
  return io.stderrIsTTY ? wrapText(text, io.columns) : text;
}

/** `text` as it should be written to stdout: wrapped to the terminal's width when stdout is one. */
export function wrapForStdout(io: IOStreams, text: string, options: WrapOptions = {}): string {
  return io.stdoutIsTTY ? wrapText(text, io.columns, options) : text;
}

/** Writes a note (or any message) on stderr, wrapped to the terminal's width. */
export function writeNote(io: IOStreams, text: string): void {
  io.err(wrapForStderr(io, text));
}
