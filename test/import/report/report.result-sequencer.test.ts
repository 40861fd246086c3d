// ResultSequencer: results arrive in completion order and leave in input order, whatever the
// distance between them (the ring that holds those ahead grows).
import { describe, expect, it } from 'vitest';
import type { RecordResult } from '../../../src/import/report/report.js';
import { ResultSequencer } from '../../../src/import/report/report.js';

const result = (index: number): RecordResult =>
  ({
    index,
    key: `E-${index}`,
    status: 'created',
    location: { file: 'f.csv', line: index + 2 },
  }) as RecordResult;

function emitted(arrival: number[]): number[] {
  const out: number[] = [];
  const sequencer = new ResultSequencer((r) => out.push(r.index));
  for (const index of arrival) sequencer.push(result(index));
  return out;
}

describe('ResultSequencer', () => {
  it('hands on in input order results shuffled within a window, and after one far behind', () => {
    let seed = 7;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    // Shuffled in windows of 16 (the orders in flight of an import at --concurrency 8).
    const arrival: number[] = [];
    for (let start = 0; start < 2000; start += 16) {
      const window = Array.from({ length: 16 }, (_, i) => start + i);
      window.sort(() => random() - 0.5);
      arrival.push(...window);
    }
    const all = Array.from({ length: 2000 }, (_, i) => i);
    expect(emitted(arrival)).toEqual(all);
    // Order 0 last: 1,999 results wait (far more than the ring's first size), then all leave.
    expect(emitted([...all.slice(1), 0])).toEqual(all);
  });

  it('emits nothing while the oldest is missing', () => {
    expect(emitted([3, 2, 1])).toEqual([]);
    expect(emitted([3, 2, 1, 0])).toEqual([0, 1, 2, 3]);
  });
});
