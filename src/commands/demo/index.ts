import { withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** `demo`: the guided first run. Its flags are `DemoFlags`, which `demo.ts` reads. */
export function registerDemo(program: Command, ctx: Context) {
  return withExamples(
    program
      .command('demo')
      .description(
        'the guided first run: a sandbox in this process, a webhook receiver, reference tables, a CSV import, notifications',
      )
      .option('--file <orders>', 'the orders to import (default: the sample fixtures/orders/orders.csv)')
      .action(async (flags) => {
        const { run } = await import('./demo.js');
        await run(flags, ctx);
      }),
    ['ordercli demo', 'ordercli demo | cat             # the same, as a CI log would show it'],
  );
}

/** The flags of `demo`, as its action receives them. */
export type DemoFlags = FlagsOf<ReturnType<typeof registerDemo>>;
