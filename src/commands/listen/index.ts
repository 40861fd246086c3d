import { completeWith, withExamples } from '../../command-support/command-help.js';
import { type Command, type FlagsOf, Option } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

/** listen's flags, typed by the options `declareListen` declares (`--event` folds into `events` in listen.ts). */
export type ListenFlags = FlagsOf<ReturnType<typeof declareListen>>;

/** A comma-separated, repeatable list of names, as commander collects it. */
function collectNames(value: string, previous: string[] | undefined): string[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return [...(previous ?? []), ...names];
}

/** A repeatable option whose values are kept whole (a URL may hold commas). */
function collectValues(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function registerListen(program: Command, ctx: Context): void {
  const command = declareListen(program).action(async (flags) => {
    const { run } = await import('./listen.js');
    await run(flags, ctx);
  });
  command.addHelpText('after', HELP_AFTER);
  // TUNNEL_KINDS of webhooks/tunnel.ts, not imported: help loads no more than the registry (a test keeps them equal).
  completeWith(command, '--tunnel', ['cloudflared', 'ngrok']);
  withExamples(command, EXAMPLES);
}

/** The command and its options: what its flags are typed from. */
function declareListen(program: Command) {
  return program
    .command('listen')
    .description(
      'receive webhook notifications locally: check the key, print, log, forward to your app, until Ctrl-C',
    )
    .addOption(new Option('--port <port>', 'port to listen on (0 picks a free one)').default('8787', '8787'))
    .option('--host <host>', 'address to bind; loopback unless you say otherwise', '127.0.0.1')
    .option('--path <path>', 'the path notifications are accepted on', '/')
    .option(
      '--key <key>',
      "the webhook key X-WEBHOOK-KEY must carry (env ORDERCLI_WEBHOOK_KEY, or the profile's webhook-key)",
    )
    .option('--no-verify', 'accept requests whatever their X-WEBHOOK-KEY (for a first look only)')
    .option('--log <file.ndjson>', 'append every accepted event as one JSON line, before answering 200')
    .option(
      '--forward-to <url>',
      'forward each event to your application, in order, retried until it answers (repeatable: <event>=<url> sends that event there instead)',
      collectValues,
    )
    .option(
      '--forward-timeout <duration>',
      'how long each forwarding attempt waits for your application to answer before retrying (default 10s; 500ms, 30s, 2m: a unit is needed)',
    )
    .option(
      '--queue-dir <dir>',
      'where the forwarding queue is kept (default: beside --log, else the config folder)',
    )
    .option('--fetch', 'fetch the entity of each event with GET /api/v1/<entity>/{id} and show it')
    .option('--exec <command>', 'run a shell command per event, the JSON body on its stdin')
    .option(
      '--subscribe <events>',
      "subscribe the tunnel's (or --public-url's) address to these events on start (a,b; repeatable; all: every event webhooks available lists)",
      collectNames,
    )
    .option('--public-url <url>', 'the address the service reaches this listener at (with --subscribe)')
    .option(
      '--tunnel <program>',
      'start a tunnel to this listener with cloudflared (a quick tunnel) or ngrok, and use its public address',
    )
    .option('--once', 'exit 0 after the first accepted event (see --events and --wait)')
    .option(
      '--expect <events>',
      'exit 0 once --count notifications of these events (a,b; repeatable) were accepted, 5 when --wait passes first',
      collectNames,
    )
    .option(
      '--where <field=value>',
      'with --expect: count only notifications whose body field (a dotted path such as data.code) reads this value (repeatable: all must hold)',
      collectValues,
    )
    .option('--count <n>', 'with --expect: how many matching notifications to wait for (default 1)')
    .option(
      '--wait <duration>',
      'how long --once (then exit 1) or --expect (then exit 5; default 5m) waits (30s, 2m, 500ms; a bare number is seconds)',
    )
    .option(
      '--ready-file <path>',
      'once listening, write {"url","pid"} (and "publicUrl") to this file, atomically; removed at exit',
    )
    .option(
      '--events <names>',
      'accept only these events (a,b; repeatable): others are answered 200 and ignored, neither logged nor forwarded',
      collectNames,
    )
    .addOption(new Option('--event <name>', 'the same as --events').hideHelp().argParser(collectNames))
    .option(
      '--inspect [port]',
      'serve a page on 127.0.0.1 that shows every request live, with replay (default port 4781)',
    );
}

const HELP_AFTER = `
Answers: 200 accepted; 401 key missing or wrong (the caller is told only which header; the exact
reason is printed here, on stderr); 400 body not JSON; 404 other path; 405 other method; 413 body
over 1 MiB; 500 the event could not be logged or queued.

A script can wait for the line on stderr that starts with "Ready: listening on".

--wait bounds --once: listen --once --wait 2m exits 1 when no event was accepted within two
minutes. --timeout keeps its global meaning here too (per-request timeout of --fetch and
--subscribe; a bare number is ms): it does not end the wait.

--expect is for CI assertions: listen --expect sales_order_validated --count 3 --wait 2m exits 0
as soon as three were accepted (key checked, logged and queued, answered 200; a refused one never
counts), and 5 when two minutes pass first, saying how many arrived. --where code=SO-12 counts
only notifications whose body field reads SO-12 (compared as text; data.code for a nested one).
--wait defaults to 5m with --expect.

--ready-file l.json is written (whole, by a rename) once the port accepts connections, after the
tunnel's address is known with --tunnel: {"url","pid"}, and "publicUrl" with --tunnel or
--public-url. It is removed when listen ends (Ctrl-C, SIGTERM, --once, --expect); a file left at
that path by a killed run is removed at start. A script waits for it instead of sleeping.

--forward-to keeps a queue on disk (fsync'ed before the 200): events are forwarded in order with
their original headers and body, the key added back; connection errors, 5xx, 408, 425 and 429 are
retried with back-off until the application answers; another 3xx or 4xx is final (shown, not
retried; re-send with ordercli webhooks replay). A restart resumes what was not delivered.
--forward-timeout (default 10s) is how long each attempt waits for the answer: an application
slower than that gets the same event again after each time-out; give it more, such as 30s.
--forward-to <event>=<url> (repeatable; a,b=<url> for several) sends those events there instead,
each address with a queue of its own; a plain --forward-to <url> takes every other event.

--fetch derives the entity from the event name: sales_order_validated -> orders/{id}.
--exec runs with ORDERCLI_WEBHOOK_EVENT set; it is stopped after 60 s.

--inspect serves a page on http://127.0.0.1:4781/ (on 127.0.0.1 only, whatever --host says),
opened with the address it prints (…/?token=<secret of this run>; anything else gets 403):
every request as it arrives (headers with the key redacted, the JSON body, forwarding attempts),
Replay (to --forward-to or a URL typed in the page; the key is added back by listen, never shown)
and Copy as command. It keeps the last 1000 requests in memory, starting with the end of --log.`;

const EXAMPLES = [
  'ordercli listen --key "$KEY" --log events.ndjson',
  'ORDERCLI_WEBHOOK_KEY=$KEY ordercli listen --forward-to http://127.0.0.1:3000/webhooks',
  'ordercli listen --once --event sales_order_validated --wait 60s --json > event.json',
  'ordercli listen --expect sales_order_validated --count 3 --wait 2m --ready-file listen.json',
  'ordercli listen --expect sales_order_validated --where code=SO-2026-000012 --log events.ndjson',
  "ordercli listen --fetch --exec 'jq .code'",
  'ordercli listen --log events.ndjson --forward-to http://127.0.0.1:3000/webhooks --inspect',
  'ordercli listen --forward-to sales_order_validated=http://127.0.0.1:3000/orders --forward-to http://127.0.0.1:3000/webhooks',
  'ordercli listen --tunnel cloudflared --subscribe sales_order_validated --forward-to http://127.0.0.1:3000/webhooks',
  'ordercli listen --events sales_order_validated,contact_updated --log events.ndjson',
  'ordercli listen --subscribe sales_order_validated --public-url https://my-tunnel.example.com/',
];
