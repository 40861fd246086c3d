import { withExamples, withListColumns } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** The `webhooks` group: available, subscribe, trigger and replay. */
export function registerWebhooks(program: Command, ctx: Context): void {
  const webhooks = program
    .command('webhooks')
    .description('list events, subscribe a URL, and send test notifications (trigger, replay)');
  withExamples(webhooks, [
    'ordercli webhooks available',
    'ordercli webhooks subscribe --event sales_order_validated --url https://app.example.com/hooks --save-key',
    'ordercli webhooks trigger sales_order_validated --url http://127.0.0.1:8787/',
  ]);
  registerAvailable(webhooks, ctx);
  registerSubscribe(webhooks, ctx);
  registerTrigger(webhooks, ctx);
  registerReplay(webhooks, ctx);
}

/** `webhooks available`: the events this user may subscribe to. */
function registerAvailable(webhooks: Command, ctx: Context) {
  return withExamples(
    withListColumns(
      webhooks
        .command('available')
        .description('the events this user may subscribe to (GET /api/v1/webhooks/available)'),
      'event, description',
    ).action(async (flags) => {
      const { run } = await import('./available.js');
      await run(flags, ctx);
    }),
    ['ordercli webhooks available', 'ordercli webhooks available --json'],
  );
}

/** `webhooks subscribe`: a URL subscribed to an event. */
function registerSubscribe(webhooks: Command, ctx: Context) {
  return withExamples(
    webhooks
      .command('subscribe')
      .description(
        'subscribe a URL to an event (PUT /api/v1/webhooks); the key in the answer is printed only with --show-secrets',
      )
      .requiredOption('--event <name>', 'the event, e.g. sales_order_validated (see webhooks available)')
      .requiredOption('--url <url>', 'the address the service will POST notifications to')
      .option(
        '--save-key',
        "store the subscription's key as webhook-key in the profile (listen and trigger use it)",
      )
      .option(
        '--key-file <path>',
        "write the subscription's key to this file (mode 0600) for your application",
      )
      .option(
        '--show-secrets',
        "print the subscription's key on stdout once (it stays in your terminal's scrollback: prefer --save-key or --key-file)",
      )
      .action(async (flags) => {
        const { run } = await import('./subscribe.js');
        await run(flags, ctx);
      }),
    [
      'ordercli webhooks subscribe --event sales_order_validated --url https://app.example.com/hooks --save-key',
      'ordercli webhooks subscribe --event sales_order_validated --url https://app.example.com/hooks --key-file .webhook-key',
      'ordercli webhooks subscribe --event sales_order_validated --url https://app.example.com/hooks --show-secrets --json | jq -r .key',
    ],
  );
}

/** The flags of `webhooks subscribe`, as its action receives them. */
export type SubscribeFlags = FlagsOf<ReturnType<typeof registerSubscribe>>;

/** `webhooks trigger <event>`: one notification sent as the service does. */
function registerTrigger(webhooks: Command, ctx: Context) {
  return withExamples(
    webhooks
      .command('trigger')
      .description('send one notification exactly as the service does, to test a receiver')
      .argument('<event>', 'the event name sent in X-WEBHOOK-EVENT')
      .requiredOption('--url <url>', 'the receiver')
      .option(
        '--key <key>',
        "the key sent in X-WEBHOOK-KEY (env ORDERCLI_WEBHOOK_KEY, or the profile's webhook-key)",
      )
      .option(
        '--data <file|->',
        'the JSON body, sent byte for byte (default for sales_order_validated: a realistic order)',
      )
      .action(async (event, flags) => {
        const { run } = await import('./trigger.js');
        await run(event, flags, ctx);
      }),
    [
      'ordercli webhooks trigger sales_order_validated --url http://127.0.0.1:8787/',
      'ordercli webhooks trigger sales_order_validated --url http://127.0.0.1:3000/hooks --data order.json',
    ],
  ).addHelpText('after', '\nExit code 1 when the receiver does not answer 2xx (or cannot be reached).\n');
}

/** The flags of `webhooks trigger`, as its action receives them. */
export type TriggerFlags = FlagsOf<ReturnType<typeof registerTrigger>>;

/** `webhooks replay <log.ndjson>`: recorded notifications sent again. */
function registerReplay(webhooks: Command, ctx: Context) {
  return withExamples(
    webhooks
      .command('replay')
      .description('re-send notifications recorded by listen --log, with their original headers and body')
      .argument('<log.ndjson>', 'a file written by listen --log (or a forwarding queue file)')
      .requiredOption('--url <url>', 'the receiver')
      .option(
        '--key <key>',
        "the key sent in X-WEBHOOK-KEY (env ORDERCLI_WEBHOOK_KEY, or the profile's webhook-key)",
      )
      .option('--event <name>', 'only the notifications of this event')
      .option(
        '--received-at <time>',
        'only the notification recorded at this time (its receivedAt in the log, as listen --inspect copies it)',
      )
      .action(async (file, flags) => {
        const { run } = await import('./replay.js');
        await run(file, flags, ctx);
      }),
    [
      'ordercli webhooks replay events.ndjson --url http://127.0.0.1:3000/hooks --event sales_order_validated',
    ],
  ).addHelpText(
    'after',
    '\nSent one at a time, in the order of the file. Exit code 1 when any is not answered 2xx.\n',
  );
}

/** The flags of `webhooks replay`, as its action receives them. */
export type ReplayFlags = FlagsOf<ReturnType<typeof registerReplay>>;
