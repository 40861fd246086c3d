import { withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** `login`: a profile saved after one checking request. Its flags are `LoginFlags` (`login.ts`). */
export function registerLogin(program: Command, ctx: Context) {
  return withExamples(
    program
      .command('login')
      .description(
        'save the base URL and token of a service in a profile, after checking them with one request (GET /api/v1/webhooks/available)',
      )
      .option(
        '--with-token',
        'read the token from stdin (CI); the base URL comes from --base-url or ORDERCLI_BASE_URL',
      )
      .action(async (flags) => {
        const { run } = await import('./login.js');
        await run(flags, ctx);
      }),
    [
      'ordercli login',
      'ordercli login --profile staging',
      'printenv ORDER_TOKEN | ordercli login --with-token --base-url https://orders.example.com',
      'printenv ORDER_TOKEN | ordercli login --with-token --base-url https://orders.example.com --auth-header X-Api-Key',
    ],
  );
}

/** The flags of `login`, as its action receives them. */
export type LoginFlags = FlagsOf<ReturnType<typeof registerLogin>>;
