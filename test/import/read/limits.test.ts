// The size limits of an order input: the size options read, sizes written as people read them, and
// a value or a body over its limit found.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import {
  DEFAULT_LIMITS,
  formatSize,
  inputLimits,
  orderTextTooLarge,
  parseSizeOption,
  sizeProblems,
} from '../../../src/import/read/limits.js';

describe('size options', () => {
  it('reads bytes, binary and decimal units in any case, with spaces', () => {
    expect(
      ['1048576', '64KiB', '64k', '2 MiB', '2MB', '1.5m', '1G', '1 gb', ' 10 b '].map((value) =>
        parseSizeOption('--max-order-bytes', value),
      ),
    ).toEqual([1048576, 65536, 65536, 2097152, 2_000_000, 1572864, 1073741824, 1_000_000_000, 10]);
  });

  it('refuses nothing, zero, a negative size, an unknown unit and a size too large to count', () => {
    for (const value of ['', '0', '-1', '12 parsecs', '0.1', '1e3', `${'9'.repeat(20)}`]) {
      expect(() => parseSizeOption('--max-cell-bytes', value), value).toThrow(UsageError);
    }
    expect(() => parseSizeOption('--max-cell-bytes', '12 parsecs')).toThrow(
      '--max-cell-bytes takes a size in bytes such as 1048576, 64KiB or 2MiB, not "12 parsecs".',
    );
  });

  it('takes the defaults for the options not given', () => {
    expect(inputLimits({})).toEqual(DEFAULT_LIMITS);
    expect(inputLimits({ maxCellBytes: '1KiB' })).toEqual({ maxOrderBytes: 1024 * 1024, maxCellBytes: 1024 });
    expect(() => inputLimits({ maxOrderBytes: 'x' })).toThrow(/^--max-order-bytes takes/);
  });
});

describe('formatSize', () => {
  it('writes bytes, KiB and MiB, with one decimal when needed', () => {
    expect(
      [1, 900, 1024, 1536, 64 * 1024, 1024 * 1024, 1.5 * 1024 * 1024, 3 * 1024 ** 3].map(formatSize),
    ).toEqual(['1 byte', '900 bytes', '1 KiB', '1.5 KiB', '64 KiB', '1 MiB', '1.5 MiB', '3072 MiB']);
    expect(orderTextTooLarge(DEFAULT_LIMITS, 'line 4')).toBe(
      'line 4 is larger than 1 MiB, the largest order ordercli sends: split the order, or raise the limit with --max-order-bytes',
    );
  });
});

describe('sizeProblems', () => {
  const limits = { maxOrderBytes: 200, maxCellBytes: 10 };

  it('names each value over the cell limit by its path, counting UTF-8 bytes', () => {
    const body = { externalId: 'é'.repeat(6), items: [{ note: 'ok' }, { note: 'x'.repeat(11) }] };
    expect(sizeProblems(body, limits)).toEqual([
      {
        field: 'externalId',
        message:
          'is 12 bytes long, over the 10 bytes limit for one value: shorten it, or raise the limit with --max-cell-bytes',
      },
      {
        field: 'items[1].note',
        message:
          'is 11 bytes long, over the 10 bytes limit for one value: shorten it, or raise the limit with --max-cell-bytes',
      },
    ]);
    expect(sizeProblems({ externalId: 'x'.repeat(10) }, limits)).toEqual([]);
  });

  it('names a body over the order limit first, as the body', () => {
    const body = { items: Array.from({ length: 30 }, (_, i) => ({ id: i })) };
    const problems = sizeProblems(body, limits);
    expect(problems).toEqual([
      {
        field: '(body)',
        message: `the order's JSON body is ${JSON.stringify(body).length} bytes, over the 200 bytes limit: split the order, or raise the limit with --max-order-bytes`,
      },
    ]);
    expect(sizeProblems({ items: [{ id: 1 }] }, limits)).toEqual([]);
  });
});
