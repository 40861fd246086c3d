// The table renderer's measuring and fitting, on cells the service may send.
import { describe, expect, it } from 'vitest';
import {
  CONTACT_REFERENCE_COLUMNS,
  formatTax,
  formatTaxes,
  PACKAGING_REFERENCE_COLUMNS,
} from '../../src/commands/refs/format.js';
import { CONTACT_REFERENCE_KEYS, PACKAGING_REFERENCE_KEYS } from '../../src/commands/refs/index.js';
import { foldForSearch, matchesWords, queryWords, searchText } from '../../src/commands/refs/search.js';
import { cleanCell, displayWidth, fitWidths, renderTable, truncate } from '../../src/io/table.js';

describe('table cells', () => {
  it('measures accents (composed or not), wide characters and emoji by terminal cells', () => {
    expect(displayWidth(cleanCell('Crème'))).toBe(5);
    // "e" + COMBINING GRAVE ACCENT: composed to one character, one cell.
    expect(cleanCell('Cre\u0300me')).toBe('Crème');
    expect(displayWidth('Cre\u0300me')).toBe(5);
    expect(displayWidth('日本酒')).toBe(6);
    expect(displayWidth('🍺 Bière')).toBe(8);
  });

  it('truncates to a width with …, never splitting a wide character over the limit', () => {
    expect(truncate('Crème fraîche épaisse', 10)).toBe('Crème fra…');
    expect(displayWidth(truncate('日本酒の瓶', 6))).toBeLessThanOrEqual(6);
    expect(truncate('court', 10)).toBe('court');
  });

  it('renders rows of accented text aligned to the same width', () => {
    const text = renderTable(
      ['NOM', 'VILLE'],
      [
        ['Gaëlle', 'Brest'],
        ['Zoé', 'Saint-Étienne'],
        ['Noël', 'Orléans'],
      ],
      80,
      false,
    );
    const widths = new Set(text.trimEnd().split('\n').map(displayWidth));
    expect(widths).toEqual(new Set([26]));
  });

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

describe('search folding', () => {
  it('ignores case, accents, ligatures and punctuation, matching the starts of words', () => {
    expect(foldForSearch('Œufs frais, « bio »')).toBe('oeufs frais bio');
    const haystack = searchText(['Moutarde de Dijon à l’ancienne', 'MOU-DIJ']);
    expect(matchesWords(haystack, queryWords("L'ANCIENNE mou"))).toBe(true);
    expect(matchesWords(haystack, queryWords('dij ancien'))).toBe(true);
    expect(matchesWords(haystack, queryWords('tarde'))).toBe(false);
  });
});

describe('taxes', () => {
  it('writes rates the French way, adding the rate to a name that does not say it', () => {
    expect(formatTax({ name: 'TVA 5,5 %', rate: 5.5, vat: true })).toBe('TVA 5,5 %');
    expect(formatTax({ name: 'TVA', rate: 5.5, vat: true })).toBe('TVA 5,5 %');
    expect(formatTax({ rate: 10, vat: true })).toBe('TVA 10 %');
    expect(formatTax({ name: "Droits d'accise", rate: 3.2, vat: false })).toBe("Droits d'accise 3,2 %");
    expect(formatTax({ name: 'VAT 20%', rate: 20 })).toBe('VAT 20%');
    expect(
      formatTaxes([
        { name: 'TVA 20 %', rate: 20 },
        { name: 'Écotaxe', rate: 0.05 },
      ]),
    ).toBe('TVA 20 %, Écotaxe 0,05 %');
    expect(formatTaxes(undefined)).toBe('');
  });
});

describe('column keys in the help', () => {
  it('name exactly the columns of each list', () => {
    expect(PACKAGING_REFERENCE_KEYS).toBe(PACKAGING_REFERENCE_COLUMNS.map((c) => c.key).join(', '));
    expect(CONTACT_REFERENCE_KEYS).toBe(CONTACT_REFERENCE_COLUMNS.map((c) => c.key).join(', '));
  });
});
