// Cells of a terminal: widths as a terminal shows them, and cutting to a width.
import { describe, expect, it } from 'vitest';
import { cleanCell, displayWidth, truncate } from '../../src/io/cells.js';

describe('cell widths', () => {
  it('measures accents (composed or not), wide characters and emoji by terminal cells', () => {
    expect(displayWidth(cleanCell('Crème'))).toBe(5);
    // "e" + COMBINING GRAVE ACCENT: composed to one character, one cell.
    expect(cleanCell('Cre\u0300me')).toBe('Crème');
    expect(displayWidth('Cre\u0300me')).toBe(5);
    expect(displayWidth('日本酒')).toBe(6);
    expect(displayWidth('한국어')).toBe(6);
    expect(displayWidth('🍺 Bière')).toBe(8);
    // The hand-written width tables this replaced measured these as one cell each.
    expect(displayWidth('🚀')).toBe(2);
    expect(displayWidth('🥐')).toBe(2);
    expect(displayWidth('👨‍👩‍👧')).toBe(2);
    expect(displayWidth('🇫🇷')).toBe(2);
  });

  it('escapes control characters, so a cell stays one line and never drives the terminal', () => {
    expect(cleanCell('a\tb\nc\x1b[31m')).toBe('a\\tb\\nc\\u001b[31m');
  });

  it('truncates to a width with …, never splitting a wide character or an emoji over the limit', () => {
    expect(truncate('Crème fraîche épaisse', 10)).toBe('Crème fra…');
    expect(displayWidth(truncate('日本酒の瓶', 6))).toBeLessThanOrEqual(6);
    expect(truncate('🚀🚀🚀', 4)).toBe('🚀…');
    expect(truncate('👨‍👩‍👧 famille', 4)).toBe('👨‍👩‍👧 …');
    expect(truncate('court', 10)).toBe('court');
  });
});
