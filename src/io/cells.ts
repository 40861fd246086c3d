/**
 * Text in the cells of a terminal: a value made safe to show on one line, its width in cells
 * (string-width: East Asian wide characters and emoji take two, combining marks none), and cut to
 * a width. Used by the tables and by the interactive browser's choices.
 */
import stringWidth from 'string-width';
import { escapeControl } from './quote.js';

const ELLIPSIS = '…';

/**
 * A value as it may be shown in a cell: one line, control characters escaped (`\u001b`, `\t`: data
 * from the service must never drive the terminal), accents composed (NFC).
 */
export function cleanCell(text: string): string {
  return escapeControl(text).normalize('NFC');
}

/** Terminal cells a (clean) text takes. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

let graphemes: Intl.Segmenter | undefined;

/** Cuts a (clean) text to at most `max` cells, ending with `…` when something was cut; never splits a character. */
export function truncate(text: string, max: number): string {
  if (displayWidth(text) <= max) return text;
  if (max <= 0) return '';
  graphemes ??= new Intl.Segmenter();
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(text)) {
    const width = displayWidth(segment);
    if (used + width > max - 1) break;
    out += segment;
    used += width;
  }
  return out + ELLIPSIS;
}
