import { withExamples, withListColumns } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { withImportInputOptions } from '../orders/import-options.js';

/** Column keys of the two lists, for the help (kept equal to the columns in format.ts by a test). */
export const CONTACT_REFERENCE_KEYS = 'id, external-reference, first-name, last-name, email, customer';
export const PACKAGING_REFERENCE_KEYS = 'id, active, label, packaging, unit, product, taxes, product-label';

/** The `refs` group: `refs contacts` (list, add, import), `refs packagings` (list) and `refs browse`. */
export function registerRefs(program: Command, ctx: Context): void {
  const refs = program
    .command('refs')
    .description('reference lists of partner applications: the ids to put in orders as internalReferenceId');
  withExamples(refs, [
    'ordercli refs packagings list --active',
    'ordercli refs contacts list',
    'ordercli refs browse',
  ]);

  const contacts = refs
    .command('contacts')
    .description('contact references (GET/POST /api/v1/contact_references)');
  withExamples(contacts, [
    'ordercli refs contacts list',
    'ordercli refs contacts add --external-reference PART-C-0042 --first-name Jeanne --last-name Roux --email jeanne.roux@example.fr --customer "Épicerie Roux"',
    'ordercli refs contacts import contacts.csv --report contacts-report.csv',
  ]);
  registerContactsList(contacts, ctx);
  registerContactsAdd(contacts, ctx);
  registerContactsImport(contacts, ctx);

  const packagings = refs
    .command('packagings')
    .description('packaging references (GET /api/v1/packaging_references)');
  withExamples(packagings, [
    'ordercli refs packagings list --active',
    'ordercli refs packagings list --search "creme fraiche" --columns id,label,packaging',
  ]);
  registerPackagingsList(packagings, ctx);

  registerBrowse(refs, ctx);
}

/** `refs contacts list`: the contact references, as a list command. */
function registerContactsList(contacts: Command, ctx: Context) {
  return withExamples(
    withListColumns(
      contacts
        .command('list')
        .description('list the contact references; an id goes in an order as contact.internalReferenceId'),
      CONTACT_REFERENCE_KEYS,
    ).action(async (flags) => {
      const { run } = await import('./contacts-list.js');
      await run(flags, ctx);
    }),
    ['ordercli refs contacts list', 'ordercli refs contacts list --columns id,email,customer --csv'],
  );
}

/** `refs contacts add`: one contact reference. Its flags are `ContactsAddFlags` (`contacts-add.ts`). */
function registerContactsAdd(contacts: Command, ctx: Context) {
  return withExamples(
    contacts
      .command('add')
      .description('create a contact reference with POST /api/v1/contact_references (checked before sending)')
      .option('--external-reference <ref>', 'your own reference of the contact')
      .option('--first-name <name>', "the contact's first name")
      .option('--last-name <name>', "the contact's last name")
      .option('--email <address>', "the contact's e-mail address")
      .option('--customer <name>', "the customer's name")
      .option(
        '--file <path|->',
        'the whole request body as JSON ({"contact": {...}, "customer": {...}}), - for stdin',
      )
      .action(async (flags) => {
        const { run } = await import('./contacts-add.js');
        await run(flags, ctx);
      }),
    [
      'ordercli refs contacts add --external-reference PART-C-0042 --first-name Jeanne --last-name Roux --email jeanne.roux@example.fr --customer "Épicerie Roux"',
      'ordercli refs contacts add --file contact.json --json',
    ],
  );
}

/** The flags of `refs contacts add`, as its action receives them. */
export type ContactsAddFlags = FlagsOf<ReturnType<typeof registerContactsAdd>>;

/**
 * `refs contacts import <path|->`: the input options every import shares, then its own. Its flags
 * are `ContactsImportFlags` (`contacts-import.ts`).
 */
function registerContactsImport(contacts: Command, ctx: Context) {
  return withExamples(
    withImportInputOptions(contacts.command('import'), '{"Courriel": "contact.email"}')
      .description(
        'create contact references in bulk from CSV, JSON, NDJSON or an Excel workbook: validated first, each sent once (the order ledger makes re-runs safe)',
      )
      .argument('<path|->', 'the input file, or - for standard input (with --format and --journal <name>)')
      .option(
        '--skip-invalid',
        'send the valid ones and report the invalid ones (exit 4) instead of sending nothing (exit 2)',
      )
      .option(
        '--journal <name>',
        "the name of this input's history in the order ledger (default: the input's path from here); no file is written",
      )
      .option(
        '--retry-unknown',
        'send again the ones whose outcome is unknown (check first that they are not in refs contacts list)',
      )
      .option(
        '--report <file>',
        'write one line per contact reference (with the new id) to a .csv or .ndjson file, or a JUnit report to a .xml file; also when invalid ones stop the import',
      )
      .option(
        '--rejects <file>',
        "write the invalid and refused ones back, to fix and import again (.xlsx or .csv by its extension, else the input's format)",
      )
      .addHelpText(
        'after',
        '\nColumns (CSV, workbook): contact.externalReference, contact.firstName, contact.lastName, contact.email, customer.name;\nJSON and NDJSON records have the body\'s own shape ({"contact": {...}, "customer": {"name": ...}}).\nRe-runs are keyed by contact.externalReference. Exit codes: 0 every one created or already created,\n2 invalid input (nothing sent), 3 credentials or rights refused, 4 some not created (see --report),\n130 interrupted (run it again to continue).',
      )
      .action(async (input, flags) => {
        const { run } = await import('./contacts-import.js');
        await run({ ...flags, input }, ctx);
      }),
    [
      'ordercli refs contacts import contacts.csv --dry-run',
      'ordercli refs contacts import contacts.csv --report contacts-report.csv --rejects contacts-rejects.csv',
      'ordercli refs contacts import contacts.ndjson --concurrency 4',
      'ordercli refs contacts import contacts.xlsx --sheet Contacts',
      'ordercli refs contacts import contacts.csv --retry-unknown   # after checking refs contacts list',
    ],
  );
}

/** The flags of `refs contacts import`, as its action receives them. */
export type ContactsImportFlags = FlagsOf<ReturnType<typeof registerContactsImport>>;

/** `refs packagings list`: the packaging references, filtered. Flags: `PackagingsListFlags`. */
function registerPackagingsList(packagings: Command, ctx: Context) {
  return withExamples(
    withListColumns(
      packagings
        .command('list')
        .description('list the packaging references; an id goes in an item as internalReferenceId')
        .option('--active', 'only the active references (the ones an order may use)')
        .option(
          '--search <text>',
          'only references whose label, product code or label, or packaging name hold every word (case and accents ignored)',
        ),
      PACKAGING_REFERENCE_KEYS,
    ).action(async (flags) => {
      const { run } = await import('./packagings-list.js');
      await run(flags, ctx);
    }),
    [
      'ordercli refs packagings list --active',
      'ordercli refs packagings list --search "creme fraiche"',
      'ordercli refs packagings list --search biere --columns id,label,packaging --csv',
      'ordercli refs packagings list --json | jq ".[] | select(.active) | .id"',
    ],
  );
}

/** The flags of `refs packagings list`, as its action receives them. */
export type PackagingsListFlags = FlagsOf<ReturnType<typeof registerPackagingsList>>;

/** `refs browse`: pick a reference interactively. */
function registerBrowse(refs: Command, ctx: Context) {
  return withExamples(
    refs
      .command('browse')
      .description(
        'interactive: pick a contact or packaging reference, see its fields and the snippet to put in an order',
      )
      .action(async () => {
        const { run } = await import('./browse.js');
        await run(ctx);
      }),
    ['ordercli refs browse'],
  );
}
