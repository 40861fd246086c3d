// The one wrapping helper: word boundaries, widths as a terminal shows them, words never cut.
import { describe, expect, it } from 'vitest';
import { createTestIO } from '../../src/io/memory.js';
import { wrapForStderr, wrapText } from '../../src/io/wrap.js';

const NOTE =
  'note: productLabel, ean left out and long values of name cut short with … to fit 80 columns; pick columns with --columns, or use --csv or --json for whole values.';

describe('wrapText', () => {
  it('breaks at spaces, each line within the width, continuation lines indented', () => {
    const text = wrapText(NOTE, 60);
    const lines = text.split('\n');
    expect(lines.length).toBe(3);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(lines.slice(1).every((line) => line.startsWith('  ') && !line.startsWith('   '))).toBe(true);
    expect(text.replace(/\n\s+/g, ' ')).toBe(NOTE);
  });

  it('measures wide characters as two cells and colour codes as none', () => {
    const wide = '製品 製品 製品 製品 製品 製品';
    // 6 words of 4 cells and 5 spaces: 29 cells, 17 characters.
    expect(wrapText(wide, 20).split('\n')).toEqual(['製品 製品 製品 製品', '  製品 製品']);
    const red = `\x1b[31merror:\x1b[39m ${'word '.repeat(10).trim()}`;
    // 66 characters, 10 of them colour codes: 56 cells.
    expect(red.length).toBe(66);
    expect(wrapText(red, 56)).toBe(red);
    expect(wrapText(red, 55).split('\n')).toHaveLength(2);
  });

  it('never cuts a word longer than the line (a URL stays whole and copyable)', () => {
    const url = `http://127.0.0.1:4780/${'x'.repeat(80)}`;
    const lines = wrapText(`see ${url} for more`, 40).split('\n');
    expect(lines).toEqual(['see', `  ${url}`, '  for more']);
  });

  it('keeps the indentation and the aligned spaces of a line that fits, and of the first line', () => {
    expect(wrapText('  full token      abc   (CRM and catalog access)', 80)).toBe(
      '  full token      abc   (CRM and catalog access)',
    );
    expect(wrapText('    one two three four', 14).split('\n')).toEqual([
      '    one two',
      '      three',
      '      four',
    ]);
  });

  it('ends the wrapped lines of a shell command with a continuation, so that it still runs', () => {
    const command =
      '  ordercli --base-url http://127.0.0.1:4780 --token sandbox-partner-token refs packagings list';
    const lines = wrapText(command, 50, { continuation: ' \\' }).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(50);
    for (const line of lines.slice(0, -1)) expect(line.endsWith(' \\')).toBe(true);
    expect(lines.join('\n').replace(/ \\\n\s+/g, ' ')).toBe(command);
  });
});

describe('wrapForStderr', () => {
  it('wraps on a terminal and leaves piped text as one line per message', () => {
    expect(wrapForStderr(createTestIO({ tty: true, columns: 70 }), NOTE)).toContain('\n');
    expect(wrapForStderr(createTestIO({ tty: false, columns: 70 }), NOTE)).toBe(NOTE);
  });
});
