import { withExamples } from '../../command-support/command-help.js';
import { type Command, type FlagsOf, Option } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** `sandbox`: the local service. Its flags are `SandboxFlags`, which `sandbox.ts` reads. */
export function registerSandbox(program: Command, ctx: Context) {
  return withExamples(
    program
      .command('sandbox')
      .description('run a local implementation of the service, seeded with realistic records, until Ctrl-C')
      .addOption(
        new Option('--port <port>', 'port to listen on (0 picks a free one)').default('4780', '4780'),
      )
      .option('--host <host>', 'address to bind; loopback unless you say otherwise', '127.0.0.1')
      .option('--data <dir>', 'keep state in this folder across restarts (default: in memory)')
      .option(
        '--latency <duration>',
        'every answer takes this long from the arrival of its request, processing included (20ms, 1s; a bare number is ms)',
      )
      .option('--fail-rate <0..1>', 'fraction of requests answered 500')
      .option('--throttle-rate <0..1>', 'fraction of requests answered 429 with Retry-After')
      .option(
        '--reset-rate <0..1>',
        'fraction of requests whose connection is reset (before or after processing)',
      )
      .option(
        '--webhook-key <key>',
        'the key sent in X-WEBHOOK-KEY (default: random; env ORDERCLI_WEBHOOK_KEY)',
      )
      .option(
        '--packaging-references <n>',
        'generate this many extra packaging references (for volume tests)',
      )
      .option(
        '--validation-delay <duration>',
        'time before a created order becomes validated (default 300ms; a bare number is ms)',
      )
      .option(
        '--validation-fail-rate <0..1>',
        'fraction of orders never validated nor notified, the same ones each run (picked by a hash of their externalId)',
      )
      .option(
        '--delivery-retries <n>',
        'retries of a notification the receiver refused or failed (no answer, 5xx), after 0.5s, 1s, 2s… (default 3)',
      )
      .option(
        '--ready-file <path>',
        'once the port accepts connections, write {url, pid, token names, webhook key source} here; removed at exit',
      )
      .option('-q, --quiet', 'do not print one line per request')
      .action(async (flags) => {
        const { run } = await import('./sandbox.js');
        await run(flags, ctx);
      }),
    [
      'ordercli sandbox',
      'ordercli sandbox --port 0 --latency 20 --fail-rate 0.05',
      'ordercli sandbox --data ./.sandbox-state --webhook-key whsec_local',
      'ordercli sandbox --port 0 --ready-file sandbox.ready --validation-fail-rate 0.1 &',
    ],
  );
}

/** The flags of `sandbox`, as its action receives them. */
export type SandboxFlags = FlagsOf<ReturnType<typeof registerSandbox>>;
