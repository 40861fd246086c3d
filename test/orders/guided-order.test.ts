// The checks of the guided order's answers (the whole walk is tested in test/commands/orders/new.test.ts).
import { describe, expect, it } from 'vitest';
import { checkQuantity, suggestExternalId } from '../../src/orders/guided-order.js';

describe('guided order', () => {
  it('takes a whole number above zero as a quantity, and nothing else', () => {
    expect(checkQuantity('12')).toBe(true);
    expect(checkQuantity(' 3 ')).toBe(true);
    for (const typed of ['', '0', '-1', '2.5', '1e3', 'douze', '99999999999999999999']) {
      expect(checkQuantity(typed), typed).not.toBe(true);
    }
  });

  it('suggests the first externalId of the day that the ledger does not know', async () => {
    const known = new Set(['ORD-20261123-1', 'ORD-20261123-2']);
    const lookup = async (id: string) => (known.has(id) ? 'created' : undefined);
    expect(await suggestExternalId(new Date(2026, 10, 23, 9), lookup)).toBe('ORD-20261123-3');
    expect(await suggestExternalId(new Date(2026, 0, 5, 9), lookup)).toBe('ORD-20260105-1');
  });
});
