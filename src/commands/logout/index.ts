import { withExamples } from '../../command-support/command-help.js';
import type { Command } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** `logout`: the token and the webhook key taken out of a profile. */
export function registerLogout(program: Command, ctx: Context): void {
  withExamples(
    program
      .command('logout')
      .description(
        'remove the token and the webhook key from a profile (the default one, or --profile); asks first on a terminal',
      )
      .addHelpText(
        'after',
        `
The base URL and the other values of the profile stay. Without a terminal (scripts, CI), pass
--yes: logout does not take it as implied, and is exit 2 without it. Declining on a terminal is
exit 130, nothing removed. A token or key set in the environment is not touched (it is named).
--json prints {profile, path, removed}.`,
      )
      .action(async () => {
        const { run } = await import('./logout.js');
        await run(ctx);
      }),
    ['ordercli logout', 'ordercli logout --profile staging', 'ordercli logout --profile ci --yes'],
  );
}
