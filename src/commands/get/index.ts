import { withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

export function registerGet(program: Command, ctx: Context) {
  return withExamples(
    program
      .command('get')
      .description('fetch any entity with GET /api/v1/<entity>/{id}')
      .argument('<entity>', 'entity kind as it appears in the path, e.g. orders, shipping_modes')
      .argument('<id>', 'the entity identifier')
      .option(
        '--show-secrets',
        'print secret fields (key, token, secret, password...) as received; by default they read [redacted]',
      )
      .action(async (entity, id, flags) => {
        const { run } = await import('./get.js');
        await run({ entity, id, ...flags }, ctx);
      }),
    [
      'ordercli get shipping_modes 4',
      'ordercli get packaging_references 401 --json | jq .packaging.product',
      'ordercli get webhooks 1 --show-secrets   # a subscription with its key',
    ],
  );
}

/** The flags of `get`, as its action receives them. */
export type GetFlags = FlagsOf<ReturnType<typeof registerGet>>;
