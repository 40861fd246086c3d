/**
 * A reference record as a choice of a search prompt (`refs browse`, `orders new`): the line it
 * shows after its id, the description under it, and the text typing searches.
 */
import { asRecord } from '../io/loose-record.js';
import { formatTaxes, unitTimesFactor } from './format.js';
import { contactReferenceSearchText, packagingReferenceSearchText, scalarText } from './search.js';

export interface ReferenceChoice {
  record: Record<string, unknown>;
  /** The choice's line, without the id. */
  line: string;
  description: string;
  haystack: string;
  inactive: boolean;
}

/** Parts joined by ` · `, the empty ones left out. */
export function joinParts(parts: string[]): string {
  return parts.filter((part) => part.trim() !== '').join(' · ');
}

/** `Camille Rousseau · Maison Rousseau · PART-C-0001`, the e-mail under it. */
export function contactReferenceChoice(record: Record<string, unknown>): ReferenceChoice {
  const contact = asRecord(record.contact);
  return {
    record,
    line: joinParts([
      `${scalarText(contact.firstName)} ${scalarText(contact.lastName)}`,
      scalarText(asRecord(record.customer).name),
      scalarText(contact.externalReference),
    ]),
    description: scalarText(contact.email),
    haystack: contactReferenceSearchText(record),
    inactive: record.active === false,
  };
}

/** `Bière blonde 33 cl · Pack de 6 bouteilles · BIE-BLO-33`, unit × factor and taxes under it. */
export function packagingReferenceChoice(record: Record<string, unknown>): ReferenceChoice {
  const packaging = asRecord(record.packaging);
  const product = asRecord(packaging.product);
  return {
    record,
    line: joinParts([
      scalarText(record.label) || scalarText(product.label),
      scalarText(packaging.name),
      scalarText(product.code),
    ]),
    description: joinParts([unitTimesFactor(record), formatTaxes(product.taxes)]),
    haystack: packagingReferenceSearchText(record),
    inactive: record.active === false,
  };
}
