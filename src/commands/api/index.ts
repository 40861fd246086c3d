import { withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function registerApi(program: Command, ctx: Context) {
  return withExamples(
    program
      .command('api')
      .description('send any request to the service, with the same auth, retries and errors')
      .argument('<method>', 'GET, POST, PUT, PATCH, DELETE or HEAD')
      .argument(
        '<path>',
        'path below the base URL, e.g. /api/v1/shipping_modes (a bare "contacts" means /api/v1/contacts)',
      )
      .option('-d, --data <json|@file|->', 'JSON request body: literal, @file, or - for stdin')
      .option('-H, --header <name:value>', 'extra request header (repeatable)', collect, [])
      .option('-i, --include', 'print the status line and response headers before the body')
      .option(
        '--show-secrets',
        'print secret fields of the answer (key, token, secret, password...) as received; by default they read [redacted]',
      )
      .action(async (method, path, flags) => {
        const { run } = await import('./api.js');
        await run({ method, path, ...flags }, ctx);
      }),
    [
      'ordercli api GET /api/v1/shipping_modes',
      'ordercli api POST /api/v1/contact_references --data @contact.json',
      'echo \'{"event":"sales_order_validated","url":"https://example.com/hook"}\' | ordercli api PUT webhooks -d -',
      'ordercli api GET webhooks --show-secrets   # the subscriptions with their keys',
    ],
  );
}

/** The flags of `api`, as its action receives them. */
export type ApiFlags = FlagsOf<ReturnType<typeof registerApi>>;
