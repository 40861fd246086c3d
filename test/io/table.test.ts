// Terminal tables: the column fitting, and cli-table3's drawing of cells the service may send.
import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../src/io/cells.js';
import { fitWidths, renderTable } from '../../src/io/table.js';
import { stripAnsi } from '../support/session.js';

function draw(headers: string[], rows: string[][], width = 80, color = false): string {
  return [...renderTable(headers, rows, { width, color }).chunks].join('');
}

describe('renderTable', () => {
  it('renders rows of accented text aligned to the same width', () => {
    const text = draw(
      ['NOM', 'VILLE'],
      [
        ['Gaëlle', 'Brest'],
        ['Zoé', 'Saint-Étienne'],
        ['Noël', 'Orléans'],
      ],
    );
    const widths = new Set(text.trimEnd().split('\n').map(displayWidth));
    expect(widths).toEqual(new Set([26]));
  });

  it('aligns rows holding emoji and East Asian characters, each two cells wide', () => {
    const text = draw(
      ['PRODUIT', 'NOTE'],
      [
        ['🚀 Fusée', 'a'],
        ['日本酒', 'b'],
        ['Cidre brut', '🍏🍏'],
        ['한국어', 'c'],
      ],
    );
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(8);
    expect(new Set(lines.map(displayWidth))).toEqual(new Set([21]));
    // 🚀 takes two cells: its row has one space fewer than "Cidre brut" has letters.
    expect(lines).toContain('│ 🚀 Fusée   │ a    │');
    expect(lines).toContain('│ 日本酒     │ b    │');
    expect(lines).toContain('│ Cidre brut │ 🍏🍏 │');
  });

  it('cuts a cell wider than its column with …, and says which columns it cut', () => {
    const table = renderTable(['ID', 'LABEL'], [['1', '🚀'.repeat(30)]], { width: 40, color: false });
    const lines = [...table.chunks].join('').trimEnd().split('\n');
    expect(new Set(lines.map(displayWidth))).toEqual(new Set([40]));
    expect(lines[3]).toMatch(/^│ 1 {2}│ (🚀)+… *│$/);
    expect(table.cut).toEqual([1]);
    expect(table.shown).toEqual([0, 1]);
  });

  it('escapes control characters in cells and headers: the terminal never acts on them', () => {
    const text = draw(['A\x1b[2J'], [['x\ty\x1b]0;pwned\x07']]);
    expect(text).not.toContain('\x1b');
    expect(text).toContain('x\\ty\\u001b]0;pwned\\u0007');
  });

  it('draws a long table as one frame: one rule under the header, none between rows', () => {
    const rows = Array.from({ length: 250 }, (_, i) => [String(i + 1), `ligne ${i + 1}`]);
    const lines = draw(['N', 'TEXTE'], rows).trimEnd().split('\n');
    expect(lines).toHaveLength(250 + 4);
    expect(lines.filter((line) => /^[┌├└]/.test(line))).toEqual([lines[0], lines[2], lines.at(-1)]);
    expect(lines.slice(3, -1).map((line) => line.split('│')[1]?.trim())).toEqual(rows.map((row) => row[0]));
    expect(new Set(lines.map(displayWidth)).size).toBe(1);
  });

  it('in colour: bold headers and a grey frame, the same text once the colours are taken out', () => {
    const rows = [['Zoé', 'Saint-Étienne']];
    const coloured = draw(['NOM', 'VILLE'], rows, 80, true);
    expect(coloured).toContain('\x1b[1mNOM\x1b[22m');
    expect(coloured).toContain('\x1b[90m│\x1b[39m');
    expect(stripAnsi(coloured)).toBe(draw(['NOM', 'VILLE'], rows));
  });
});

describe('fitWidths', () => {
  it('leaves out the lowest-priority column when even the minimums do not fit, then cuts low priorities first', () => {
    const layout = fitWidths([3, 40, 30, 20], 60, [
      { priority: 9 },
      { priority: 8, minWidth: 20 },
      { priority: 1, minWidth: 20 },
      { priority: 5 },
    ]);
    expect(layout.shown).toEqual([0, 1, 3]);
    expect(layout.widths[0]).toBe(3);
    // 60 = 1 + 3 columns × 3 + widths: the label (priority 8) keeps more than the last column.
    expect(layout.widths.reduce((a, b) => a + b, 0)).toBe(50);
    expect(layout.widths[1]).toBeGreaterThan(layout.widths[2]!);
  });
});
