/**
 * The `--await` options of the commands that create orders, declared at start-up (help, parsing)
 * without loading what waits (await.ts, loaded by the command that runs).
 */
import { type Command, Option } from '../../command-support/commander.js';

export interface AwaitFlags {
  await?: string;
  awaitTimeout?: string;
  awaitFrom?: string;
  tunnel?: string;
  publicUrl?: string;
  awaitPort?: string;
}

export const DEFAULT_TIMEOUT = '10m';

/** Declares the `--await` options on a command that creates orders. */
export function withAwaitOptions<C extends Command>(command: C): C {
  command
    .addOption(
      new Option(
        '--await <state>',
        'after each order is created, wait for its validation (its sales_order_validated notification); exit 5 when some are not validated in time',
      ).choices(['validated']),
    )
    .option(
      '--await-timeout <duration>',
      `how long each created order may wait for its validation (default ${DEFAULT_TIMEOUT}; 90s, 5m, 1h: a unit is needed)`,
    )
    .option(
      '--await-from <file>',
      'read the notifications from the log of a listen --log that receives them, rather than receiving them here',
    )
    .option(
      '--tunnel <cloudflared|ngrok>',
      'with --await: receive the notifications of a service on another machine through this tunnel, as listen --tunnel does',
    )
    .option(
      '--public-url <url>',
      'with --await: the https:// address that reaches this machine, subscribed for the notifications (with --await-port)',
    )
    .option(
      '--await-port <n>',
      'with --await: the 127.0.0.1 port the notifications are received on (default: a free one; needed with --public-url, whose tunnel forwards there)',
    );
  return command;
}
