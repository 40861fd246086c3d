/**
 * `refs contacts import <path|->`: contact references onboarded in bulk (CSV, JSON, NDJSON, an
 * Excel workbook), each row or record one
 * `POST /api/v1/contact_references`, through the import pipeline of `orders import` (validation
 * of the whole input first, journal keyed by `contact.externalReference`, report, rejects).
 */
import type { Context } from '../../cli/context.js';
import { CONTACT_REFERENCE_IMPORT } from '../../import/kind.js';
import { type ImportOptions, runImportCommand } from '../orders/import.js';

export type ContactsImportOptions = Pick<
  ImportOptions,
  | 'input'
  | 'format'
  | 'sheet'
  | 'delimiter'
  | 'map'
  | 'concurrency'
  | 'dryRun'
  | 'skipInvalid'
  | 'journal'
  | 'retryUnknown'
  | 'report'
  | 'rejects'
>;

export async function run(options: ContactsImportOptions, ctx: Context): Promise<void> {
  await runImportCommand(options, ctx, CONTACT_REFERENCE_IMPORT);
}
