/**
 * What an import brings to the service: everything that differs between `orders import` and
 * `refs contacts import`. The pipeline (read, validate, claim, send, report, rejects) is the
 * same for both; it asks its `ImportKind` for the columns, the key, the rules and the endpoint.
 */

import type { LedgerKind } from '../ledger/store.js';
import { validateOrder } from '../schemas/order.js';
import type { ValidationProblem } from '../schemas/problems.js';
import { validateContactReference } from '../schemas/references.js';
import { CONTACT_REFERENCE_COLUMNS, CSV_COLUMNS } from './read/columns.js';
import { type ExistingRecord, existingContactReference } from './send/already-exists.js';

export interface ImportKind {
  /** The command, as the ledger records it and messages name it. */
  command: 'orders import' | 'refs contacts import';
  /** One record and several, in messages: `order`, `orders`; and one with its article, `an order`. */
  one: string;
  many: string;
  oneWithArticle: string;
  /** The command that sends a single record, for a JSON file that holds one instead of an array. */
  sendOne?: string;
  /** The field that keys re-runs (the ledger, duplicates, the report's first column). */
  keyField: string;
  /** Where each record is sent with POST. */
  path: string;
  /** The CSV columns (dotted paths of the body) a file may have. */
  columns: readonly string[];
  /** CSV: adjacent rows with the same key form one record (an order's rows are its items). */
  groupsRows: boolean;
  /** Its items may name a product by code, resolved to an `internalReferenceId` before sending. */
  namesProducts: boolean;
  /** Which ledger its keys are claimed in (orders are shared with `orders create`). */
  ledger: LedgerKind;
  /** The key of a record body, or undefined when it has none. */
  keyOf(body: Record<string, unknown>): string | undefined;
  /** The rules of the interface for one body (the zod source in src/schemas). */
  validate(body: unknown, options: { requireKey: boolean }): ValidationProblem[];
  /** The report's columns, the key first (named by `keyField`). */
  reportColumns: readonly string[];
  /** What a person does about a record whose outcome is unknown: a clause, from `check at the service`. */
  settleUnknown: string;
  /** What a 403 on `path` most likely means, first in the hint of the error (exit 3). */
  forbidden?: string;
  /**
   * Whether an error answer says the service already has this record (reported `exists`, which
   * is not a failure), and its id; absent: every error answer is a failure.
   */
  existing?(status: number, body: unknown): ExistingRecord | undefined;
  /** Where to find the id of an existing record the answer did not name. */
  findExisting?: string;
}

function nonEmptyText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export const ORDER_IMPORT: ImportKind = {
  command: 'orders import',
  one: 'order',
  many: 'orders',
  oneWithArticle: 'an order',
  sendOne: 'ordercli orders create',
  keyField: 'externalId',
  path: '/api/v1/orders',
  columns: CSV_COLUMNS,
  groupsRows: true,
  namesProducts: true,
  ledger: 'orders',
  keyOf: (body) => nonEmptyText(body.externalId),
  validate: (body, { requireKey }) => validateOrder(body, { requireExternalId: requireKey }),
  reportColumns: ['externalId', 'status', 'httpStatus', 'id', 'code', 'message', 'line'],
  settleUnknown:
    'check at the service, then record what you found with ordercli orders resolve --created or --not-created (or send it again with --retry-unknown)',
};

/**
 * Contact references (`POST /api/v1/contact_references`), keyed by `contact.externalReference`,
 * claimed in a ledger of their own (the service also refuses a second contact reference with the
 * same external reference: see docs/assumptions.md).
 */
export const CONTACT_REFERENCE_IMPORT: ImportKind = {
  command: 'refs contacts import',
  one: 'contact reference',
  many: 'contact references',
  oneWithArticle: 'a contact reference',
  sendOne: 'ordercli refs contacts add',
  keyField: 'contact.externalReference',
  path: '/api/v1/contact_references',
  columns: CONTACT_REFERENCE_COLUMNS,
  groupsRows: false,
  namesProducts: false,
  ledger: 'contact-references',
  keyOf: (body) => {
    const contact = body.contact;
    if (typeof contact !== 'object' || contact === null || Array.isArray(contact)) return undefined;
    return nonEmptyText((contact as Record<string, unknown>).externalReference);
  },
  // A missing customer is named by the one field it needs, the column a CSV row leaves empty.
  validate: (body) =>
    validateContactReference(body).map((problem) =>
      problem.field === 'customer' && problem.message === 'is required'
        ? { field: 'customer.name', message: problem.message }
        : problem,
    ),
  reportColumns: ['contact.externalReference', 'status', 'httpStatus', 'id', 'message', 'line'],
  settleUnknown:
    'check at the service (ordercli refs contacts list), then record it with ordercli orders resolve if it is there, or send it again with --retry-unknown if it is not',
  forbidden:
    'This token may not create contact references: the instance decides whether a partner application registers its own contacts (ask its administrator for that right), or it names them itself (then send the contact data with each order instead).',
  // The service keeps one contact reference per external reference (docs/assumptions.md).
  existing: existingContactReference,
  findExisting: 'ordercli refs contacts list',
};
