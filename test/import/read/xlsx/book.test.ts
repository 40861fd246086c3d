// What the workbook reader holds of a part: runs of text between `<` and `>` measured across the
// chunks the part is inflated in, so that saxes, which holds a run whole, is never given a long one.
import { describe, expect, it } from 'vitest';
import { RunLength } from '../../../../src/import/read/xlsx/book.js';

/** Where, in which chunk, RunLength finds a run over `max`: [chunk index, index in it], or undefined. */
function overAt(max: number, chunks: string[]): [number, number] | undefined {
  const runs = new RunLength(max);
  for (const [i, chunk] of chunks.entries()) {
    const at = runs.over(chunk);
    if (at >= 0) return [i, at];
  }
  return undefined;
}

describe('RunLength', () => {
  it('takes runs of the limit, however the chunks cut them', () => {
    expect(overAt(10, ['<t>', 'x'.repeat(10), '</t>'])).toBeUndefined();
    expect(overAt(10, ['<t>xxxx', 'xxx', 'xxx</t><t>', 'x'.repeat(10), '<'])).toBeUndefined();
    expect(overAt(10, [`<a>${'x'.repeat(10)}<b>${'y'.repeat(10)}</b>`])).toBeUndefined();
  });

  it('finds a run one over the limit: within a chunk, across chunks, in a chunk without markup', () => {
    expect(overAt(10, [`<a>xx<b>${'x'.repeat(11)}</b>`])).toEqual([0, 8]);
    expect(overAt(10, ['<t>xxxxxx', 'xxxxx</t>'])).toEqual([1, 0]);
    expect(overAt(10, ['<t>xxxxx', 'xxxx', 'xx'])).toEqual([2, 0]);
    expect(overAt(10, ['<t>', 'x'.repeat(11)])).toEqual([1, 0]);
    // A chunk longer than the limit is walked run by run.
    expect(overAt(10, [`${'<a>x'.repeat(20)}<b>${'x'.repeat(11)}</b>`])).toEqual([0, 83]);
    expect(overAt(10, [`<t>${'x'.repeat(8)}`, `xx${'<a>x'.repeat(20)}`])).toBeUndefined();
    expect(overAt(10, [`<t>${'x'.repeat(8)}`, `xxx${'<a>x'.repeat(20)}`])).toEqual([1, 0]);
    // A tag is a run too: its attributes are held whole as well.
    expect(overAt(10, [`<c r="${'A'.repeat(20)}"/>`])).toEqual([0, 1]);
  });
});
