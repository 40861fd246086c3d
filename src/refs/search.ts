/**
 * Searching reference lists as a French user expects: case and accents ignored (`creme` finds
 * `Crème`), ligatures spelled out (`oeufs` finds `Œufs`), punctuation ignored, and every word of
 * the query the start of a word of the record, in any order (`creme` does not find `écrémé`,
 * `fraich` finds `fraîche`, `blo` finds `BIE-BLO-33`).
 */
import { asRecord } from '../io/loose-record.js';

const MARKS = /\p{M}+/gu;
const LIGATURES: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss' };
const NOT_WORD = /[^\p{L}\p{N}]+/gu;

/** Text reduced to what a search compares: lower-case words without accents, one space between. */
export function foldForSearch(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(MARKS, '')
    .replace(/[œæß]/g, (ch) => LIGATURES[ch] ?? ch)
    .replace(NOT_WORD, ' ')
    .trim();
}

/** The folded words of a query; an empty query matches everything. */
export function queryWords(query: string): string[] {
  return foldForSearch(query)
    .split(' ')
    .filter((word) => word !== '');
}

/** A record's searchable text: its fields folded, each word preceded by a space. */
export function searchText(fields: string[]): string {
  return ` ${foldForSearch(fields.join(' '))}`;
}

/** Whether every query word starts a word of the haystack (made by `searchText`). */
export function matchesWords(haystack: string, words: readonly string[]): boolean {
  for (const word of words) if (!haystack.includes(` ${word}`)) return false;
  return true;
}

/** A string or number field as text; anything else (missing, an object) is no text. */
export function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** What `--search` looks at in a packaging reference: label, product code and label, packaging name. */
export function packagingReferenceSearchText(reference: unknown): string {
  const r = asRecord(reference);
  const packaging = asRecord(r.packaging);
  const product = asRecord(packaging.product);
  return searchText([
    scalarText(r.label),
    scalarText(product.code),
    scalarText(product.label),
    scalarText(packaging.name),
  ]);
}

/** What browsing contacts looks at: external reference, names, e-mail, customer. */
export function contactReferenceSearchText(reference: unknown): string {
  const r = asRecord(reference);
  const contact = asRecord(r.contact);
  return searchText([
    scalarText(contact.externalReference),
    scalarText(contact.firstName),
    scalarText(contact.lastName),
    scalarText(contact.email),
    scalarText(asRecord(r.customer).name),
  ]);
}

export interface PackagingFilter {
  active?: boolean;
  search?: string;
}

/** The references that are active (`--active`: `active` is exactly true) and match `--search`. */
export function filterPackagingReferences(records: unknown[], filter: PackagingFilter): unknown[] {
  const words = filter.search === undefined ? [] : queryWords(filter.search);
  if (!filter.active && words.length === 0) return records;
  return records.filter((record) => {
    if (filter.active && asRecord(record).active !== true) return false;
    return words.length === 0 || matchesWords(packagingReferenceSearchText(record), words);
  });
}
