import type { Command } from 'commander';
import type { Context } from '../../cli/context.js';
import { withExamples } from '../../cli/program.js';

export function registerOrders(program: Command, ctx: Context): void {
  const orders = program.command('orders').description('create, import and fetch sales orders');

  withExamples(
    orders
      .command('get')
      .description('fetch one order with GET /api/v1/orders/{id}')
      .argument('<id>', 'the order id the service returned')
      .action(async (id: string) => {
        const { run } = await import('./get.js');
        await run({ id }, ctx);
      }),
    ['ordercli orders get 1001', 'ordercli orders get 1001 --json | jq .status'],
  );
}
