/**
 * `refs contacts import <path|->`: contact references onboarded in bulk (CSV, JSON, NDJSON, an
 * Excel workbook), each row or record one
 * `POST /api/v1/contact_references`, through the import pipeline of `orders import` (validation
 * of the whole input first, claims keyed by `contact.externalReference` in the ledger, report, rejects).
 */
import type { Context } from '../../command-support/context.js';
import { CONTACT_REFERENCE_IMPORT } from '../../import/kind.js';
import { formatCount } from '../../io/numbers.js';
import { type ImportAdvice, runImportCommand } from '../support/import-command.js';
import type { ContactsImportFlags } from './index.js';

/** The flags of `refs contacts import` and its input. */
export type ContactsImportOptions = ContactsImportFlags & { input: string };

/** Contact references can be looked up (`refs contacts list`), which settles those in doubt. */
const ADVICE: ImportAdvice = {
  unknown: (count) =>
    `${formatCount(count)} contact references have an unknown outcome: they may exist at the service, so they are not sent again. To settle them:\n` +
    '  1. look for each (by its contact.externalReference, listed above and in --report) in ordercli refs contacts list;\n' +
    '  2. record the ones you found with ordercli orders resolve <input> --created <contact.externalReference>=<id>;\n' +
    '  3. once you know the others are not there, run the same import again with --retry-unknown.\n',
  afterSummary: (result, options) => {
    const { created, exists } = result.counts;
    if (options.report !== undefined || created + exists === 0) return undefined;
    const which =
      exists === 0 ? 'created' : created === 0 ? 'already at the service' : 'created or already there';
    return `note: the ids of the contact references ${which} are in ordercli refs contacts list, or in a report: run the same command again with --report ids.csv (nothing is sent again). An id goes in an order as "contact": {"internalReferenceId": <id>}.\n`;
  },
};

export async function run(options: ContactsImportOptions, ctx: Context): Promise<void> {
  await runImportCommand(options, ctx, CONTACT_REFERENCE_IMPORT, ADVICE);
}
