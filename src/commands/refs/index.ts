import type { Command } from 'commander';
import { withExamples } from '../../cli/command-help.js';
import type { Context } from '../../cli/context.js';
import { type ListFlags, withListOptions } from '../../io/output.js';
import type { ContactReferenceFlags } from './contacts-add.js';

import type { PackagingReferenceFlags } from './packagings-list.js';

/** Column keys of the two lists, for the help (kept equal to the columns in format.ts by a test). */
export const CONTACT_REFERENCE_KEYS = 'id, external-reference, first-name, last-name, email, customer';
export const PACKAGING_REFERENCE_KEYS = 'id, active, label, packaging, unit, product, taxes, product-label';

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
  ]);
  withExamples(
    withListOptions(
      contacts
        .command('list')
        .description('list the contact references; an id goes in an order as contact.internalReferenceId'),
      CONTACT_REFERENCE_KEYS,
    ).action(async (flags: ListFlags) => {
      const { run } = await import('./contacts-list.js');
      await run(flags, ctx);
    }),
    ['ordercli refs contacts list', 'ordercli refs contacts list --columns id,email,customer --csv'],
  );
  withExamples(
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
      .action(async (flags: ContactReferenceFlags) => {
        const { run } = await import('./contacts-add.js');
        await run(flags, ctx);
      }),
    [
      'ordercli refs contacts add --external-reference PART-C-0042 --first-name Jeanne --last-name Roux --email jeanne.roux@example.fr --customer "Épicerie Roux"',
      'ordercli refs contacts add --file contact.json --json',
    ],
  );

  const packagings = refs
    .command('packagings')
    .description('packaging references (GET /api/v1/packaging_references)');
  withExamples(packagings, [
    'ordercli refs packagings list --active',
    'ordercli refs packagings list --search "creme fraiche" --columns id,label,packaging',
  ]);
  withExamples(
    withListOptions(
      packagings
        .command('list')
        .description('list the packaging references; an id goes in an item as internalReferenceId')
        .option('--active', 'only the active references (the ones an order may use)')
        .option(
          '--search <text>',
          'only references whose label, product code or label, or packaging name hold every word (case and accents ignored)',
        ),
      PACKAGING_REFERENCE_KEYS,
    ).action(async (flags: PackagingReferenceFlags) => {
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

  withExamples(
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
