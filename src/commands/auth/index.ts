import { withExamples } from '../../command-support/command-help.js';
import type { Command } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** The `auth` group (gh's name): what the configured credentials are and whether the service takes them. */
export function registerAuth(program: Command, ctx: Context): void {
  const auth = program
    .command('auth')
    .description(
      'the credentials in use: where they come from and whether the service accepts them (log in with ordercli login, out with ordercli logout)',
    );
  withExamples(auth, ['ordercli auth status', 'ordercli --profile staging auth status --json']);

  withExamples(
    auth
      .command('status')
      .description(
        'the profile, base URL, where the token and webhook key come from, and whether the service accepts the token, with which access (one GET /api/v1/contacts)',
      )
      .addHelpText(
        'after',
        `
Access: full (CRM and catalog) when GET /api/v1/contacts answers, partner when it is refused
with 403 (partners use the reference lists). No secret is ever printed, not even in part.
Exit 0 when the service accepts the token, 3 when it refuses it (or there is none), 1 when it
cannot be reached or fails, 2 when there is no base URL.
--json prints {profile, configPath, baseUrl: {value, source, sourceName}, token: {set, source,
sourceName, header}, webhookKey: {set, source, sourceName}, service: {request, result, status,
access}}.`,
      )
      .action(async () => {
        const { run } = await import('./status.js');
        await run(ctx);
      }),
    [
      'ordercli auth status',
      'ordercli --profile staging auth status',
      'ordercli auth status --json | jq -r .service.access',
    ],
  );
}
