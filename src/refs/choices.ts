/**
 * A reference record as a choice of a search prompt (`refs browse`, `orders new`): the line it
 * shows after its id, the description under it, and the text typing searches.
 */
import { cleanCell, displayWidth, truncate } from '../io/cells.js';
import { asRecord } from '../io/loose-record.js';
import { formatTaxes, unitTimesFactor } from './format.js';
import { contactReferenceSearchText, packagingReferenceSearchText, scalarText } from './search.js';

export interface ReferenceChoice {
  record: Record<string, unknown>;
  /** The choice's line, without the id: `texts` and `code` joined by ` · `. */
  line: string;
  /** The line's words for people (a label, a name): what gives way on a narrow terminal. */
  texts: string[];
  /** The identifier ending the line (a product code, an external reference): never cut. */
  code: string;
  description: string;
  haystack: string;
  inactive: boolean;
}

const SEPARATOR = ' · ';
/** Cells a cut text keeps at least, its … included. */
const SHORTEST_TEXT = 4;

/** Parts joined by ` · `, the empty ones left out. */
export function joinParts(parts: string[]): string {
  return parts.filter((part) => part.trim() !== '').join(SEPARATOR);
}

/** `Camille Rousseau · Maison Rousseau · PART-C-0001`, the e-mail under it. */
export function contactReferenceChoice(record: Record<string, unknown>): ReferenceChoice {
  const contact = asRecord(record.contact);
  const texts = [
    `${scalarText(contact.firstName)} ${scalarText(contact.lastName)}`,
    scalarText(asRecord(record.customer).name),
  ];
  const code = scalarText(contact.externalReference);
  return {
    record,
    line: joinParts([...texts, code]),
    texts,
    code,
    description: scalarText(contact.email),
    haystack: contactReferenceSearchText(record),
    inactive: record.active === false,
  };
}

/** `Bière blonde 33 cl · Pack de 6 bouteilles · BIE-BLO-33`, unit × factor and taxes under it. */
export function packagingReferenceChoice(record: Record<string, unknown>): ReferenceChoice {
  const packaging = asRecord(record.packaging);
  const product = asRecord(packaging.product);
  const texts = [scalarText(record.label) || scalarText(product.label), scalarText(packaging.name)];
  const code = scalarText(product.code);
  return {
    record,
    line: joinParts([...texts, code]),
    texts,
    code,
    description: joinParts([unitTimesFactor(record), formatTaxes(product.taxes)]),
    haystack: packagingReferenceSearchText(record),
    inactive: record.active === false,
  };
}

/**
 * The choice's line, made safe for the terminal, in at most `width` cells: the texts give way
 * (the longest cut first, each ending with …), the code and `suffix` never do. When even the code
 * and the suffix do not fit, the line is just those, wider than `width`: the terminal wraps it.
 */
export function fitChoiceLine(choice: ReferenceChoice, width: number, suffix = ''): string {
  const texts = choice.texts.map(cleanCell).filter((text) => text.trim() !== '');
  const code = cleanCell(choice.code);
  const tail = cleanCell(suffix);
  const whole = joinParts([...texts, code]) + tail;
  if (displayWidth(whole) <= width) return whole;
  const codeWidth = code.trim() === '' ? 0 : displayWidth(SEPARATOR) + displayWidth(code);
  // Texts that cannot keep a few characters each are dropped, the last ones first: `B… · C…` says nothing.
  for (let kept = texts.length; kept > 0; kept--) {
    const room = width - codeWidth - displayWidth(tail) - displayWidth(SEPARATOR) * (kept - 1);
    if (room < SHORTEST_TEXT * kept) continue;
    const shown = texts.slice(0, kept);
    const cap = widestCap(
      shown.map((text) => displayWidth(text)),
      room,
    );
    return joinParts([...shown.map((text) => truncate(text, cap)), code]) + tail;
  }
  return joinParts([code]) + tail;
}

/** The largest width each text may keep so that together they take at most `room` cells. */
function widestCap(widths: number[], room: number): number {
  let cap = Math.max(...widths);
  while (cap > SHORTEST_TEXT && widths.reduce((sum, width) => sum + Math.min(width, cap), 0) > room) cap--;
  return cap;
}
