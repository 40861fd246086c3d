import { withExamples } from '../../command-support/command-help.js';
import type { Command } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { withListOptions } from '../../io/list-flags.js';

export function registerContacts(program: Command, ctx: Context): void {
  const contacts = program
    .command('contacts')
    .description('CRM contacts (needs CRM access; partner applications use refs contacts)');
  withExamples(contacts, ['ordercli contacts list', 'ordercli contacts get 101']);

  withExamples(
    withListOptions(
      contacts
        .command('list')
        .description('list the contacts with GET /api/v1/contacts; their ids go in an order as contact.id'),
    ).action(async (flags) => {
      const { run } = await import('./list.js');
      await run(flags, ctx);
    }),
    [
      'ordercli contacts list',
      'ordercli contacts list --columns id,email,company',
      'ordercli contacts list --json | jq ".[].email"',
    ],
  );
  withExamples(
    contacts
      .command('get')
      .description('one contact with GET /api/v1/contacts/{id}')
      .argument('<id>', 'the contact id')
      .action(async (id) => {
        const { run } = await import('./get.js');
        await run({ id }, ctx);
      }),
    ['ordercli contacts get 101', 'ordercli contacts get 101 --json | jq .email'],
  );
}
