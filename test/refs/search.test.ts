// Searching reference lists as a French user expects.
import { describe, expect, it } from 'vitest';
import { foldForSearch, matchesWords, queryWords, searchText } from '../../src/refs/search.js';

describe('search folding', () => {
  it('ignores case, accents, ligatures and punctuation, matching the starts of words', () => {
    expect(foldForSearch('Œufs frais, « bio »')).toBe('oeufs frais bio');
    const haystack = searchText(['Moutarde de Dijon à l’ancienne', 'MOU-DIJ']);
    expect(matchesWords(haystack, queryWords("L'ANCIENNE mou"))).toBe(true);
    expect(matchesWords(haystack, queryWords('dij ancien'))).toBe(true);
    expect(matchesWords(haystack, queryWords('tarde'))).toBe(false);
  });
});
