/** `listen`: the local webhook receiver, until Ctrl-C (or the first event with --once). */
import { resolve } from 'node:path';
import type { ApiClient } from '../../api/client.js';
import type { Context } from '../../command-support/context.js';
import { formatDuration, parseDuration } from '../../config/duration.js';
import { IncompleteError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { checkSendable } from '../../core/header-value.js';
import { isLoopbackHost, parseHttpUrl } from '../../core/url.js';
import { chooseWebhookKey, type WebhookKeyChoice } from '../../core/webhook-key.js';
import { lockWaitFromEnv } from '../../io/file-lock.js';
import { invocation } from '../../io/invocation.js';
import { writeNote } from '../../io/wrap.js';
import { type Expectation, ExpectedNotifications, parseFieldCondition } from '../../webhooks/expectation.js';
import { type ForwardRoute, parseForwardRoutes } from '../../webhooks/forward-routes.js';
import type { ListenSubscription } from '../../webhooks/listen-session.js';
import {
  type ListenResult,
  type ListenSessionOptions,
  queueFileFor,
  runListenSession,
} from '../../webhooks/listen-session.js';
import type { AcceptedEvent } from '../../webhooks/receiver.js';
import { TUNNEL_KINDS, type TunnelKind } from '../../webhooks/tunnel.js';
import { ListenConsole } from './console.js';
import { FollowUpChain } from './follow-up.js';
import type { ListenFlags } from './index.js';

const EXAMPLE_URL = 'http://127.0.0.1:3000/webhooks';
/** The inspector's port when `--inspect` is given without one. */
const DEFAULT_INSPECT_PORT = 4781;
/** How long `--expect` waits without `--wait`: a CI job fails in minutes, not at its own time limit. */
const DEFAULT_EXPECT_WAIT_MS = 5 * 60_000;

export interface ListenPlan {
  port: number;
  host: string;
  path: string;
  /** How long --once or --expect waits (--wait), in ms; undefined waits for ever. */
  waitMs: number | undefined;
  /** `--expect`, `--where`, `--count`: what ends the session with exit 0; undefined without --expect. */
  expect: Expectation | undefined;
  /** `--forward-to`: one route per target, in the order given; empty without it. */
  forwardTo: ForwardRoute[];
  /** `--forward-timeout`, in ms: how long each forwarding attempt waits for the application. */
  forwardTimeoutMs: number | undefined;
  publicUrl: URL | undefined;
  /** The inspector's port (`--inspect`), undefined without it. */
  inspectPort: number | undefined;
  /** `--tunnel`. */
  tunnel: TunnelKind | undefined;
  /** `--events`: only these are accepted; undefined accepts every event. */
  events: string[] | undefined;
}

/** Checks the flags, --wait among them (a duration; a bare number is seconds). */
export function planListen(flags: ListenFlags, ctx: Context): ListenPlan {
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, not ${JSON.stringify(flags.port)}.`);
  }
  if (!flags.path.startsWith('/') || /[?#\s]/.test(flags.path)) {
    throw new UsageError(
      `--path must be a URL path starting with /, such as /webhooks, not ${JSON.stringify(flags.path)}.`,
    );
  }
  const tunnel = planTunnel(flags);
  if (flags.subscribe !== undefined && flags.publicUrl === undefined && tunnel === undefined) {
    throw new UsageError(
      "--subscribe needs the address the service reaches this listener at: --tunnel cloudflared (or ngrok) starts a tunnel and uses its address, or give a tunnel's https:// address with --public-url.",
    );
  }
  if (flags.publicUrl !== undefined && flags.subscribe === undefined) {
    throw new UsageError(
      '--public-url only tells --subscribe where the service reaches this listener: add --subscribe <event>, or leave --public-url out.',
    );
  }
  if (flags.queueDir !== undefined && flags.forwardTo === undefined) {
    throw new UsageError('--queue-dir only matters with --forward-to.');
  }
  if (flags.forwardTimeout !== undefined && flags.forwardTo === undefined) {
    throw new UsageError('--forward-timeout only matters with --forward-to.');
  }
  const forwardTimeoutMs =
    flags.forwardTimeout === undefined
      ? undefined
      : parseDuration(flags.forwardTimeout, { name: '--forward-timeout', minMs: 1, maxMs: 3_600_000 });
  let inspectPort: number | undefined;
  if (flags.inspect !== undefined) {
    const given = flags.inspect === true ? String(DEFAULT_INSPECT_PORT) : flags.inspect;
    inspectPort = Number(given);
    if (!/^\d{1,5}$/.test(given) || inspectPort > 65535) {
      throw new UsageError(
        `--inspect takes a port from 0 to 65535 (default ${DEFAULT_INSPECT_PORT}), not ${JSON.stringify(flags.inspect)}.`,
      );
    }
    if (inspectPort !== 0 && inspectPort === port) {
      throw new UsageError(
        `--inspect needs a port of its own, not --port's ${port}: the page is never served where notifications arrive.`,
      );
    }
  }
  const events = acceptedEvents(flags);
  const expect = planExpect(flags, events);
  return {
    port,
    host: flags.host,
    path: flags.path,
    waitMs: planWait(flags, ctx, expect),
    expect,
    forwardTo: parseForwardRoutes(flags.forwardTo ?? [], events),
    forwardTimeoutMs,
    publicUrl:
      flags.publicUrl === undefined ? undefined : parseHttpUrl(flags.publicUrl, '--public-url', EXAMPLE_URL),
    inspectPort,
    tunnel,
    events,
  };
}

/** `--wait`: how long --once or --expect waits, in ms (--expect: 5m unless said); undefined for ever. */
function planWait(flags: ListenFlags, ctx: Context, expect: Expectation | undefined): number | undefined {
  if (flags.wait !== undefined) {
    if (!flags.once && !expect) {
      throw new UsageError('--wait only bounds --once or --expect: add one, or leave --wait out.');
    }
    return parseDuration(flags.wait, { name: '--wait', bare: 's', minMs: 1, maxMs: 7 * 86_400_000 });
  }
  // --timeout once meant "seconds to wait" here; it is the per-request timeout everywhere now.
  if (expect && ctx.globalFlags.timeout !== undefined) {
    throw new UsageError(
      `--timeout is the per-request timeout (of --fetch and --subscribe), not how long --expect waits: say that with --wait (e.g. --wait 30s; default ${formatDuration(DEFAULT_EXPECT_WAIT_MS)}).`,
    );
  }
  if (expect) return DEFAULT_EXPECT_WAIT_MS;
  if (flags.once && ctx.globalFlags.timeout !== undefined) {
    ctx.io.err(
      'note: --timeout is the per-request timeout (of --fetch and --subscribe), not how long --once waits: to stop waiting after a while, use --wait (e.g. --wait 30s). Waiting without a limit.\n',
    );
  }
  return undefined;
}

/** `--expect` with its `--where` and `--count`; undefined without it (and then neither may be given). */
function planExpect(flags: ListenFlags, accepted: string[] | undefined): Expectation | undefined {
  if (flags.expect === undefined) {
    if (flags.where !== undefined)
      throw new UsageError('--where only narrows --expect: add --expect <event>.');
    if (flags.count !== undefined) throw new UsageError('--count only matters with --expect <event>.');
    return undefined;
  }
  if (flags.once) {
    throw new UsageError(
      '--once and --expect both end listen: --expect <event> waits for --count of them and exits 5 when --wait passes; keep one.',
    );
  }
  const events = [...new Set(flags.expect)];
  if (events.length === 0)
    throw new UsageError('--expect needs an event, such as --expect sales_order_validated.');
  const left = accepted === undefined ? [] : events.filter((event) => !accepted.includes(event));
  if (left.length > 0) {
    throw new UsageError(
      `--expect ${left.join(',')}: --events leaves ${left.length === 1 ? 'it' : 'them'} out, so none could ever be accepted; add ${left.length === 1 ? 'it' : 'them'} to --events.`,
    );
  }
  const count = Number(flags.count ?? '1');
  if (!/^\d+$/.test(flags.count ?? '1') || count < 1 || count > 1_000_000) {
    throw new UsageError(
      `--count must be a whole number from 1 to 1000000, not ${JSON.stringify(flags.count)}.`,
    );
  }
  return { events, where: (flags.where ?? []).map(parseFieldCondition), count };
}

/** `--events` and `--event` (one option under two names): the events accepted, or all. */
function acceptedEvents(flags: ListenFlags): string[] | undefined {
  const names = [...(flags.events ?? []), ...(flags.event ?? [])];
  return names.length === 0 ? undefined : [...new Set(names)];
}

/**
 * The key travels with every notification: a plain http:// address on another host would send it
 * in clear across the internet, refused as for --base-url unless --allow-insecure-http.
 */
function checkPublicUrl(url: URL | undefined, allowInsecureHttp: boolean): void {
  if (url === undefined || url.protocol !== 'http:' || isLoopbackHost(url.hostname) || allowInsecureHttp)
    return;
  throw new UsageError(
    `--public-url ${url.href} is plain http:// on another host: the service would send the webhook key in clear. Use the tunnel's https:// address, or pass --allow-insecure-http.`,
  );
}

/** `--tunnel`: a program ordercli knows, alone (it gives the public address), to 127.0.0.1. */
function planTunnel(flags: ListenFlags): TunnelKind | undefined {
  if (flags.tunnel === undefined) return undefined;
  const kind = flags.tunnel.toLowerCase();
  if (!(TUNNEL_KINDS as readonly string[]).includes(kind)) {
    throw new UsageError(`--tunnel takes cloudflared or ngrok, not ${JSON.stringify(flags.tunnel)}.`);
  }
  if (flags.publicUrl !== undefined) {
    throw new UsageError('--tunnel gives the public address itself: leave --public-url out.');
  }
  if (!isLoopbackHost(flags.host) && !['0.0.0.0', '::'].includes(flags.host)) {
    throw new UsageError(`--tunnel sends to 127.0.0.1: leave --host out (it is ${flags.host}).`);
  }
  return kind as TunnelKind;
}

/** The key X-WEBHOOK-KEY must carry (flag > environment > profile), with warnings about its value. */
async function chooseKey(flags: ListenFlags, ctx: Context): Promise<WebhookKeyChoice> {
  const settings = await ctx.settings();
  const choice = chooseWebhookKey(flags.key, ctx.env, settings);
  if (choice.key === undefined) return choice;
  ctx.io.redactor.addSecret(choice.key);
  // A key no X-WEBHOOK-KEY header can carry would refuse every notification with 401.
  checkSendable(choice.key, `the webhook key from ${choice.source}`);
  if (choice.trimmed) {
    // HTTP strips spaces around header values, so a key with them could never match.
    ctx.io.err(`warning: the key from ${choice.source} has surrounding white space; checking it without.\n`);
  }
  if (choice.key === settings.token) {
    ctx.io.err(
      `warning: the key from ${choice.source} is the API token; the webhook key is a different value.\n`,
    );
  }
  return choice;
}

/** Runs one `listen` session and renders it: events as they come, then a summary. */
export async function run(flags: ListenFlags, ctx: Context): Promise<void> {
  const plan = planListen(flags, ctx);
  const { io } = ctx;
  const key = await chooseKey(flags, ctx);
  if (key.key === undefined && flags.verify && flags.subscribe === undefined) {
    throw new UsageError(
      'listen needs the webhook key to check X-WEBHOOK-KEY: pass --key, set ORDERCLI_WEBHOOK_KEY, or save it with ordercli webhooks subscribe --save-key. --no-verify accepts any request.',
    );
  }
  if (!isLoopbackHost(plan.host)) {
    io.err(`warning: listen binds ${plan.host}, reachable from other machines.\n`);
  }
  const settings = await ctx.settings();
  checkPublicUrl(plan.publicUrl, settings.allowInsecureHttp);
  // Fail before listening when the service cannot be reached for --fetch or --subscribe.
  const api: ApiClient | undefined = flags.fetch || flags.subscribe ? await ctx.api() : undefined;
  const events = api && flags.subscribe ? await subscribedEvents(flags.subscribe, api) : undefined;
  const logFile = flags.log === undefined ? undefined : resolve(ctx.cwd, flags.log);
  const out = new ListenConsole(io, { json: ctx.json, logFile });
  const shown = new EventShowing(flags, out, followUpsOf(flags, ctx, api));
  const expected = plan.expect && new ExpectedNotifications(plan.expect);

  let result: ListenResult | undefined;
  try {
    const ending = await runListenSession({
      host: plan.host,
      port: plan.port,
      path: plan.path,
      verify: flags.verify,
      key,
      apiToken: settings.token,
      logFile,
      events: plan.events,
      ...sessionExtras(plan, flags, ctx, logFile, api, events),
      tunnel: plan.tunnel && {
        kind: plan.tunnel,
        // The tunnel's own output is for --verbose only.
        onOutput: settings.verbose ? (line) => io.err(`  [${plan.tunnel}] ${line}\n`) : undefined,
        env: ctx.env,
        ngrokApi: ctx.env.ORDERCLI_NGROK_API || undefined,
      },
      readyFile: flags.readyFile === undefined ? undefined : resolve(ctx.cwd, flags.readyFile),
      redactor: io.redactor,
      signal: ctx.signal,
      until: flags.once ? shown.firstEvent : expected?.met,
      untilMs: plan.waitMs,
      on: {
        accepted: (event) => {
          // Counted when accepted (its 200 written after the log and the queue have it), shown as ever.
          expected?.count(event);
          shown.present(event);
        },
        rejected: (rejection) => out.rejected(rejection),
        forwardAttempt: (attempt) => out.forward(attempt),
        lockWait: (message) => io.err(`${message}\n`),
        subscribed: (subscription) => out.subscribed(subscription, plan.path),
        tunnel: (tunnel) => out.tunnel(tunnel),
        ready: (ready) => out.ready(ready, waitingFor(plan, flags, expected)),
        ignored: (event) => out.ignored(event),
        looped: (event) => out.looped(event),
        stopped: (stopped) => {
          result = stopped;
        },
      },
    });
    // Ctrl-C: 130 like every interrupted command, also what the shell sees through `npx ordercli`
    // (npm runs it under sh, which dash ends with the same SIGINT).
    if (ending === 'interrupted') ctx.exitCode = ExitCode.Interrupted;
    if (ending === 'timeout') throw timedOut(plan, expected);
  } finally {
    await shown.followUps?.idle();
    out.close();
    if (result) writeNote(io, `${summary(result, shown.count)}\n`);
    if (result && out.subscriptions.length > 0)
      writeNote(io, `${subscriptionsLeft(out.subscriptions, plan)}\n`);
  }
}

/** What the ready lines say is waited for (--once, --expect); undefined when listen runs until Ctrl-C. */
function waitingFor(
  plan: ListenPlan,
  flags: ListenFlags,
  expected: ExpectedNotifications | undefined,
): { what: string; waitMs: number | undefined } | undefined {
  if (expected) return { what: expected.describe(), waitMs: plan.waitMs };
  if (flags.once) return { what: `one ${plan.events?.join(' or ') ?? 'notification'}`, waitMs: plan.waitMs };
  return undefined;
}

/** The error of a wait that --wait ended: exit 1 for --once, 5 for --expect (some may have come). */
function timedOut(plan: ListenPlan, expected: ExpectedNotifications | undefined): IncompleteError {
  const within = formatDuration(plan.waitMs!);
  if (expected) return new IncompleteError(`${expected.shortfall(within)}.`, ExitCode.Unconfirmed);
  return new IncompleteError(
    `No ${plan.events?.join(' or ') ?? 'notification'} was accepted within ${within} (listen --once --wait).`,
    ExitCode.Failure,
  );
}

/**
 * `--subscribe`'s names, `all` replaced by the events `GET /api/v1/webhooks/available` lists, each
 * checked against that list before any is subscribed (none is, when one is not listed). An answer
 * ordercli cannot read leaves the names unchecked: the service refuses what it does not know.
 */
async function subscribedEvents(names: string[], api: ApiClient): Promise<string[]> {
  const { eventRows } = await import('../webhooks/available.js');
  const answer = await api.get('/api/v1/webhooks/available').catch((error: unknown) => {
    if (names.includes('all')) throw error;
    return undefined;
  });
  const listed = answer === undefined ? undefined : eventRows(answer.body)?.map((row) => row.event);
  if (names.includes('all') && (listed === undefined || listed.length === 0)) {
    throw new UsageError(
      '--subscribe all: the service lists no events (GET /api/v1/webhooks/available); name them: --subscribe sales_order_validated,…',
    );
  }
  const wanted = [...new Set(names.flatMap((name) => (name === 'all' ? listed! : [name])))];
  const unknown = listed === undefined ? [] : wanted.filter((name) => !listed.includes(name));
  if (unknown.length > 0) {
    throw new UsageError(
      `--subscribe: the service does not list ${unknown.join(', ')} (GET /api/v1/webhooks/available lists ${listed!.join(', ')}); nothing was subscribed.`,
    );
  }
  return wanted;
}

/** Keeps the key a subscription returned as the profile's webhook-key, as `subscribe --save-key` does. */
async function saveKeyInProfile(key: string, ctx: Context): Promise<string> {
  const settings = await ctx.settings();
  const { ProfileStore } = await import('../../config/profiles.js');
  const store = await ProfileStore.open(ctx.env);
  await store.update(settings.profileName, { 'webhook-key': key });
  return `webhook-key of profile "${settings.profileName}" (${store.path})`;
}

/**
 * Said once at the end: the interface has no way to remove a subscription, so the service keeps
 * sending there; what the next run does about it.
 */
function subscriptionsLeft(subscriptions: ListenSubscription[], plan: ListenPlan): string {
  const urls = [...new Set(subscriptions.map((s) => s.publicUrl))];
  const events = subscriptions.map((s) => s.event).join(', ');
  const next =
    plan.tunnel === 'cloudflared'
      ? 'a quick tunnel gets a new address each run, so the next run subscribes that one, and the service keeps trying this one (its notifications there fail)'
      : 'the next run with the same address subscribes it again, which the sandbox treats as the same subscription';
  return `note: ${urls.join(', ')} stays subscribed to ${events}: the service's interface has no way to remove a subscription (see docs/assumptions.md); ${next}.`;
}

/** --fetch and --exec, run after each event shown; undefined without them. */
function followUpsOf(
  flags: ListenFlags,
  ctx: Context,
  api: ApiClient | undefined,
): FollowUpChain | undefined {
  if (!flags.fetch && !flags.exec) return undefined;
  return new FollowUpChain({
    api: flags.fetch ? api : undefined,
    exec: flags.exec,
    cwd: ctx.cwd,
    env: ctx.env,
    signal: ctx.signal,
  });
}

/** The session's forwarding (--forward-to), subscription (--subscribe) and inspector (--inspect). */
function sessionExtras(
  plan: ListenPlan,
  flags: ListenFlags,
  ctx: Context,
  logFile: string | undefined,
  api: ApiClient | undefined,
  events: string[] | undefined,
): Pick<ListenSessionOptions, 'forward' | 'subscribe' | 'inspect'> {
  return {
    forward:
      plan.forwardTo.length === 0
        ? undefined
        : {
            routes: plan.forwardTo.map((route) => ({
              ...route,
              queueFile: queueFileFor(
                {
                  queueDir: flags.queueDir === undefined ? undefined : resolve(ctx.cwd, flags.queueDir),
                  logFile,
                  target: route.target,
                  others: route.others,
                },
                ctx.env,
              ),
            })),
            lockWaitMs: lockWaitFromEnv(ctx.env),
            timeoutMs: plan.forwardTimeoutMs,
          },
    subscribe:
      events !== undefined && (plan.publicUrl || plan.tunnel) && api
        ? { api, events, publicUrl: plan.publicUrl, saveKey: (key) => saveKeyInProfile(key, ctx) }
        : undefined,
    inspect:
      plan.inspectPort === undefined ? undefined : { port: plan.inspectPort, program: invocation(ctx.env) },
  };
}

/**
 * What is shown of accepted events (those of --events: the receiver ignores the others), after their --fetch/--exec; with
 * --once, the first one, which then ends the session (`firstEvent`).
 */
class EventShowing {
  /** Events shown. */
  count = 0;
  private onceDone = false;
  private resolveOnce: () => void = () => undefined;
  /** Resolves once the first event is shown (--once ends the session with it). */
  readonly firstEvent = new Promise<void>((r) => {
    this.resolveOnce = r;
  });

  constructor(
    private readonly flags: ListenFlags,
    private readonly out: ListenConsole,
    readonly followUps: FollowUpChain | undefined,
  ) {}

  present(event: AcceptedEvent): void {
    const { flags, out, followUps } = this;
    if (flags.once && this.onceDone) {
      out.note(
        `${event.receivedAt.slice(11, 23)}  ${event.event ?? 'event'} accepted after --once was satisfied (logged, not shown)`,
      );
      return;
    }
    if (flags.once) this.onceDone = true;
    if (!followUps) {
      out.event(event);
      this.count++;
      if (flags.once) this.resolveOnce();
      return;
    }
    void followUps.add(event, (result, skipped) => {
      out.event(event, result);
      this.count++;
      if (skipped) out.note('  (--fetch/--exec skipped: too many events waiting for them)');
      if (flags.once) this.resolveOnce();
    });
  }
}

function summary(result: ListenResult, shown: number): string {
  const ignored = result.ignored > 0 ? `, ${result.ignored} ignored (not in --events)` : '';
  let text = `Stopped: ${result.accepted} accepted (${shown} shown)${ignored}, ${result.rejected} rejected`;
  const forwarding = result.forwarding;
  if (forwarding) {
    text += `; forwarded ${forwarding.delivered}, refused by the application ${forwarding.refused}`;
    const waiting = forwarding.waiting.map((queue) => `${queue.count} waiting in ${queue.queueFile}`);
    text += waiting.length > 0 ? `, ${waiting.join(', ')} (sent on the next start)` : ', none waiting';
  }
  return `${text}.`;
}
