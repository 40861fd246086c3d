import { withExamples } from '../../command-support/command-help.js';
import type { Command } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { withListOptions } from '../../io/list-flags.js';

export function registerPackagings(program: Command, ctx: Context): void {
  const packagings = program
    .command('packagings')
    .description('catalog packagings (needs catalog access; partner applications use refs packagings)');
  withExamples(packagings, ['ordercli packagings list', 'ordercli packagings get 1101']);

  withExamples(
    withListOptions(
      packagings
        .command('list')
        .description('list the packagings with GET /api/v1/packagings; their ids go in an item as packaging'),
    ).action(async (flags) => {
      const { run } = await import('./list.js');
      await run(flags, ctx);
    }),
    ['ordercli packagings list', 'ordercli packagings list --csv > packagings.csv'],
  );
  withExamples(
    packagings
      .command('get')
      .description('one packaging with GET /api/v1/packagings/{id}')
      .argument('<id>', 'the packaging id')
      .action(async (id) => {
        const { run } = await import('./get.js');
        await run({ id }, ctx);
      }),
    ['ordercli packagings get 1101', 'ordercli packagings get 1101 --json'],
  );
}
