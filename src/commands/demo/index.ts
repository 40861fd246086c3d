import type { Command } from 'commander';
import { withExamples } from '../../cli/command-help.js';
import type { Context } from '../../cli/context.js';

export interface DemoFlags {
  file?: string;
}

export function registerDemo(program: Command, ctx: Context): void {
  withExamples(
    program
      .command('demo')
      .description(
        'the guided first run: a sandbox in this process, a webhook receiver, reference tables, a CSV import, notifications',
      )
      .option('--file <orders>', 'the orders to import (default: the sample fixtures/orders/orders.csv)')
      .action(async (flags: DemoFlags) => {
        const { run } = await import('./demo.js');
        await run(flags, ctx);
      }),
    ['ordercli demo', 'ordercli demo | cat             # the same, as a CI log would show it'],
  );
}
