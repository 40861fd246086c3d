// KeyTable: an exact string -> number map outside the heap (the import's externalIds, the local
// ledger's states). Checked against a Map on keys chosen to collide, grow and mislead.
import { describe, expect, it } from 'vitest';
import { hashBytes, KeyTable } from '../../src/core/key-table.js';

describe('KeyTable', () => {
  it('behaves as a Map through growth: set, get, has, delete, size and iteration order', () => {
    const table = new KeyTable();
    const reference = new Map<string, number>();
    // A seeded generator: the same keys at every run.
    let seed = 42;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const pool = [
      '',
      'A',
      'é',
      'Ω-12',
      '日本-注文',
      '🚚-1',
      'x'.repeat(300),
      `${'y'.repeat(47)}z`,
      `${'y'.repeat(49)}z`,
    ];
    for (let i = 0; i < 40_000; i++) pool.push(`GEN-${String(i).padStart(8, '0')}`);
    const mismatches: string[] = [];
    for (let step = 0; step < 120_000; step++) {
      const key = pool[Math.floor(random() * pool.length)]!;
      const action = random();
      if (action < 0.7) {
        const value = Math.floor(random() * 2 ** 40) - 2 ** 20;
        table.set(key, value);
        reference.set(key, value);
      } else if (action < 0.8) {
        if (table.delete(key) !== reference.delete(key)) mismatches.push(`delete ${key}`);
      } else if (table.get(key) !== reference.get(key) || table.has(key) !== reference.has(key)) {
        mismatches.push(`get ${key}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(table.size).toBe(reference.size);
    for (const key of pool) expect(table.get(key)).toBe(reference.get(key));
    // Iteration: the keys with a value, each once.
    expect(new Set(table).size).toBe(reference.size);
    expect([...table].sort()).toEqual([...reference.keys()].sort());
  });

  it('tells apart keys that differ only in length, case, a byte past a short prefix, or normalization', () => {
    const table = new KeyTable();
    const keys = [
      'ORD-1',
      'ORD-10',
      'ord-1',
      'ORD-1 ',
      'e\u0301',
      '\u00e9',
      'a'.repeat(49),
      `${'a'.repeat(48)}b`,
    ];
    keys.forEach((key, i) => {
      table.set(key, i);
    });
    expect(keys.map((key) => table.get(key))).toEqual(keys.map((_, i) => i));
    expect(table.get('ORD-100')).toBeUndefined();
    expect(table.size).toBe(keys.length);
  });

  it('keeps indexes stable: indexOf, keyAt, valueAt, setAt and hashAt (the FNV-1a of the UTF-8 bytes)', () => {
    const table = new KeyTable();
    const first = table.set('Été-1', 7);
    for (let i = 0; i < 5000; i++) table.set(`K${i}`, i);
    expect(table.indexOf('Été-1')).toBe(first);
    expect(table.keyAt(first)).toBe('Été-1');
    expect(table.valueAt(first)).toBe(7);
    const bytes = Buffer.from('Été-1', 'utf8');
    expect(table.hashAt(first)).toBe(hashBytes(bytes, 0, bytes.length));
    table.setAt(first, 9);
    expect(table.get('Été-1')).toBe(9);
    table.delete('Été-1');
    expect(table.valueAt(first)).toBeUndefined();
    expect(table.indexOf('Été-1')).toBe(first);
    expect(table.count).toBe(5001);
    expect(table.size).toBe(5000);
    table.setAt(first, 1);
    expect(table.size).toBe(5001);
    expect(table.indexOf('absent')).toBe(-1);
  });

  it('refuses NaN, which means "no value"', () => {
    const table = new KeyTable();
    expect(() => table.set('A', Number.NaN)).toThrow(RangeError);
    expect(table.size).toBe(0);
  });
});
