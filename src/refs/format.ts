/**
 * How reference records read in a table, for a French user: `TVA 5,5 %`, `pot × 12`, yes/no.
 * Every accessor tolerates a missing or mistyped field: the service's records are read leniently.
 */
import { asRecord, type LooseRecord } from '../io/loose-record.js';
import { type Column, cellText } from '../io/record-columns.js';
import type { Tax } from '../schemas/references.js';

let frenchFormat: Intl.NumberFormat | undefined;

/** A number as French writes it: decimal comma (`5,5`). */
export function frenchNumber(value: number): string {
  frenchFormat ??= new Intl.NumberFormat('fr-FR', { maximumFractionDigits: 4, useGrouping: false });
  return frenchFormat.format(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : cellText(value);
}

/** One tax as `TVA 5,5 %`: its name, with the rate added unless the name already says it. */
export function formatTax(tax: unknown): string {
  const t = asRecord(tax) as Tax;
  const rate = typeof t.rate === 'number' ? frenchNumber(t.rate) : undefined;
  const name =
    typeof t.name === 'string' && t.name.trim() !== '' ? t.name.trim() : t.vat === true ? 'TVA' : 'Taxe';
  if (rate === undefined) return name;
  // "TVA 5,5 %" already carries its rate; "TVA" or "Droits d'accise" get it appended.
  return namesRate(name, rate) || namesRate(name, String(t.rate)) ? name : `${name} ${rate} %`;
}

function namesRate(name: string, rate: string): boolean {
  const at = name.indexOf(rate);
  if (at < 0) return false;
  const before = name[at - 1];
  return (before === undefined || !/[\d.,]/.test(before)) && /^\s*%/.test(name.slice(at + rate.length));
}

/** All taxes of a product, `TVA 20 %, Droits d'accise 3,2 %`. */
export function formatTaxes(taxes: unknown): string {
  return Array.isArray(taxes) ? taxes.map(formatTax).join(', ') : text(taxes);
}

function packagingOf(reference: LooseRecord): Record<string, unknown> {
  return asRecord(reference.packaging);
}

function productOf(reference: LooseRecord): Record<string, unknown> {
  return asRecord(packagingOf(reference).product);
}

/** `pot × 12`: the unit and how many of it the packaging holds. */
export function unitTimesFactor(reference: LooseRecord): string {
  const packaging = packagingOf(reference);
  const unit = text(packaging.unit);
  const factor = packaging.unit_factor;
  const count = typeof factor === 'number' ? frenchNumber(factor) : text(factor);
  if (unit === '' && count === '') return '';
  return count === '' ? unit : `${unit || '?'} × ${count}`;
}

export function yesNo(value: unknown): string {
  if (value === true) return 'yes';
  if (value === false) return 'no';
  return text(value);
}

/**
 * The columns of `GET /api/v1/packaging_references` records (the shape the interface documents).
 * On a narrow terminal the taxes go first, then the unit: the label and packaging name say most.
 */
export const PACKAGING_REFERENCE_COLUMNS: Column<LooseRecord>[] = [
  { key: 'id', header: 'ID', value: (r) => text(r.id), align: 'right', priority: 100, identifier: true },
  { key: 'active', header: 'ACTIVE', value: (r) => yesNo(r.active), priority: 60 },
  { key: 'label', header: 'LABEL', value: (r) => text(r.label), minWidth: 18, priority: 90 },
  {
    key: 'packaging',
    header: 'PACKAGING',
    value: (r) => text(packagingOf(r).name),
    minWidth: 14,
    priority: 80,
    paths: ['packaging.name'],
  },
  {
    key: 'unit',
    header: 'UNIT × FACTOR',
    value: unitTimesFactor,
    minWidth: 8,
    priority: 50,
    paths: ['packaging.unit', 'packaging.unit_factor'],
  },
  {
    key: 'product',
    header: 'PRODUCT',
    value: (r) => text(productOf(r).code),
    priority: 70,
    identifier: true,
    paths: ['packaging.product.code'],
  },
  {
    key: 'taxes',
    header: 'TAXES',
    value: (r) => formatTaxes(productOf(r).taxes),
    minWidth: 9,
    priority: 40,
    paths: ['packaging.product.taxes'],
  },
  {
    key: 'product-label',
    header: 'PRODUCT LABEL',
    value: (r) => text(productOf(r).label),
    optional: true,
    paths: ['packaging.product.label'],
  },
];

/** A packaging reference as the interface shows it: an id and a packaging object (or none). */
export function isPackagingReferenceShape(r: Record<string, unknown>): boolean {
  return (
    'id' in r &&
    (r.packaging === undefined || (typeof r.packaging === 'object' && r.packaging !== null)) &&
    ('label' in r || 'packaging' in r)
  );
}

function contactOf(reference: LooseRecord): Record<string, unknown> {
  return asRecord(reference.contact);
}

export const CONTACT_REFERENCE_COLUMNS: Column<LooseRecord>[] = [
  { key: 'id', header: 'ID', value: (r) => text(r.id), align: 'right', priority: 100, identifier: true },
  {
    key: 'external-reference',
    header: 'REFERENCE',
    value: (r) => text(contactOf(r).externalReference),
    priority: 60,
    identifier: true,
    paths: ['contact.externalReference'],
  },
  {
    key: 'first-name',
    header: 'FIRST NAME',
    value: (r) => text(contactOf(r).firstName),
    priority: 80,
    paths: ['contact.firstName'],
  },
  {
    key: 'last-name',
    header: 'LAST NAME',
    value: (r) => text(contactOf(r).lastName),
    priority: 90,
    paths: ['contact.lastName'],
  },
  {
    key: 'email',
    header: 'EMAIL',
    value: (r) => text(contactOf(r).email),
    minWidth: 16,
    priority: 50,
    paths: ['contact.email'],
  },
  {
    key: 'customer',
    header: 'CUSTOMER',
    value: (r) => text(asRecord(r.customer).name),
    minWidth: 12,
    priority: 70,
    paths: ['customer.name'],
  },
];

/** A contact reference as the POST body shows it: an id and a contact object. */
export function isContactReferenceShape(r: Record<string, unknown>): boolean {
  return 'id' in r && typeof r.contact === 'object' && r.contact !== null && !Array.isArray(r.contact);
}

/** Fields of CRM contacts and catalog packagings are not documented: these go first when present. */
export const CONTACT_PREFERRED_KEYS = ['firstName', 'lastName', 'name', 'email', 'company', 'city'];
export const PACKAGING_PREFERRED_KEYS = [
  'active',
  'name',
  'label',
  'unit',
  'unit_factor',
  'productCode',
  'productLabel',
];
