// How reference records read in a table: French taxes, and the column keys the help names.
import { describe, expect, it } from 'vitest';
import { CONTACT_REFERENCE_KEYS, PACKAGING_REFERENCE_KEYS } from '../../src/commands/refs/index.js';
import {
  CONTACT_REFERENCE_COLUMNS,
  formatTax,
  formatTaxes,
  PACKAGING_REFERENCE_COLUMNS,
} from '../../src/refs/format.js';

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
