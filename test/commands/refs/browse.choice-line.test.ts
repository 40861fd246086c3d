// The line of a reference in `refs browse` (src/refs/choices.ts, fitChoiceLine): on a narrow terminal
// the label and the packaging name (a contact's name and customer) give way, the code never does.
import { describe, expect, it } from 'vitest';
import { displayWidth } from '../../../src/io/cells.js';
import {
  contactReferenceChoice,
  fitChoiceLine,
  packagingReferenceChoice,
} from '../../../src/refs/choices.js';

const beer = packagingReferenceChoice({
  id: 433,
  label: 'Bière blonde 33 cl',
  packaging: { name: 'Carton de 24 bouteilles', product: { code: 'BIE-BLO-33' } },
});

describe('fitChoiceLine', () => {
  it('keeps a line that fits as it is', () => {
    expect(fitChoiceLine(beer, 80)).toBe('Bière blonde 33 cl · Carton de 24 bouteilles · BIE-BLO-33');
    expect(fitChoiceLine(beer, 80)).toBe(beer.line);
  });

  it('cuts the longest text first, never the code nor the suffix, within the width', () => {
    const line = fitChoiceLine(beer, 50, ' (inactive)');
    expect(line).toBe('Bière blon… · Carton de … · BIE-BLO-33 (inactive)');
    expect(displayWidth(line)).toBeLessThanOrEqual(50);
    for (const width of [30, 35, 40, 45, 52, 57]) {
      const fitted = fitChoiceLine(beer, width);
      expect(fitted, `width ${width}`).toMatch(/ · BIE-BLO-33$/);
      expect(displayWidth(fitted), `width ${width}`).toBeLessThanOrEqual(width);
    }
  });

  it('drops the texts that cannot keep a character, and shows the code alone past that', () => {
    expect(fitChoiceLine(beer, 24)).toBe('Biè… · Car… · BIE-BLO-33');
    expect(fitChoiceLine(beer, 20)).toBe('Bière … · BIE-BLO-33');
    expect(fitChoiceLine(beer, 16)).toBe('BIE-BLO-33');
    expect(fitChoiceLine(beer, 8)).toBe('BIE-BLO-33');
  });

  it("keeps a contact's external reference whole, and counts wide characters as two cells", () => {
    const contact = contactReferenceChoice({
      id: 309,
      contact: { firstName: '山田', lastName: '太郎', externalReference: 'PART-C-0099' },
      customer: { name: '株式会社山田商店ホールディングス' },
    });
    const line = fitChoiceLine(contact, 36);
    expect(line).toMatch(/^山田.* · 株式会社.*… · PART-C-0099$/);
    expect(displayWidth(line)).toBeLessThanOrEqual(36);
  });

  it('makes control characters of the data safe for the terminal', () => {
    const choice = packagingReferenceChoice({
      label: 'Evil\x1b[2J label',
      packaging: { name: 'Box', product: { code: 'EV\x1bIL' } },
    });
    expect(fitChoiceLine(choice, 80)).not.toContain('\x1b');
  });
});
