import { describe, expect, it } from 'vitest';
import { formatCount } from '../../src/io/numbers.js';

describe('formatCount', () => {
  it('formats thousands without locale data', () => {
    expect([0, 999, 1_000, 1_234_567].map(formatCount)).toEqual(['0', '999', '1,000', '1,234,567']);
  });
});
