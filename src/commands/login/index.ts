import type { Command } from 'commander';
import { withExamples } from '../../cli/command-help.js';
import type { Context } from '../../cli/context.js';

export interface LoginFlags {
  withToken?: boolean;
}

export function registerLogin(program: Command, ctx: Context): void {
  withExamples(
    program
      .command('login')
      .description(
        'save the base URL and token of a service in a profile, after checking them with one request (GET /api/v1/webhooks/available)',
      )
      .option(
        '--with-token',
        'read the token from stdin (CI); the base URL comes from --base-url or ORDERCLI_BASE_URL',
      )
      .action(async (flags: LoginFlags) => {
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
