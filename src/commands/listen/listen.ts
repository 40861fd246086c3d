/** `listen`: the local webhook receiver, until Ctrl-C (or the first event with --once). */
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import type { ApiClient } from '../../api/client.js';
import type { Context } from '../../cli/context.js';
import { formatDuration, parseDuration } from '../../config/duration.js';
import { configDir } from '../../config/profiles.js';
import { IncompleteError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { isLoopbackHost } from '../../core/url.js';
import { lockWaitFromEnv } from '../../io/file-lock.js';
import { writeNote } from '../../io/wrap.js';
import { EventLog } from '../../webhooks/event-log.js';
import { ForwardQueue } from '../../webhooks/forward-queue.js';
import { type AcceptedEvent, startWebhookReceiver, type WebhookReceiver } from '../../webhooks/receiver.js';
import { subscribeWebhook } from '../../webhooks/subscription.js';
import { keyFingerprint, WebhookKeyVerifier } from '../../webhooks/verify.js';
import { ListenConsole } from './console.js';
import { FollowUpChain } from './follow-up.js';
import type { ListenFlags } from './index.js';

export interface ListenPlan {
  port: number;
  host: string;
  path: string;
  /** How long --once waits (--wait), in ms; undefined waits for ever. */
  onceWaitMs: number | undefined;
  forwardTo: URL | undefined;
  publicUrl: URL | undefined;
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
  if ((flags.subscribe === undefined) !== (flags.publicUrl === undefined)) {
    throw new UsageError(
      "--subscribe and --public-url go together: the service must be told where to reach this listener (e.g. a tunnel's https:// address).",
    );
  }
  if (flags.queueDir !== undefined && flags.forwardTo === undefined) {
    throw new UsageError('--queue-dir only matters with --forward-to.');
  }
  let onceWaitMs: number | undefined;
  if (flags.wait !== undefined) {
    if (!flags.once) {
      throw new UsageError('--wait only bounds --once: add --once, or leave --wait out.');
    }
    onceWaitMs = parseDuration(flags.wait, { name: '--wait', bare: 's', minMs: 1, maxMs: 7 * 86_400_000 });
  } else if (flags.once && ctx.globalFlags.timeout !== undefined) {
    // --timeout once meant "seconds to wait" here; it is the per-request timeout everywhere now.
    ctx.io.err(
      'note: --timeout is the per-request timeout (of --fetch and --subscribe), not how long --once waits: to stop waiting after a while, use --wait (e.g. --wait 30s). Waiting without a limit.\n',
    );
  }
  return {
    port,
    host: flags.host,
    path: flags.path,
    onceWaitMs,
    forwardTo: flags.forwardTo === undefined ? undefined : httpUrl(flags.forwardTo, '--forward-to'),
    publicUrl: flags.publicUrl === undefined ? undefined : httpUrl(flags.publicUrl, '--public-url'),
  };
}

function httpUrl(value: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `${flag} must be a URL such as http://127.0.0.1:3000/webhooks, not ${JSON.stringify(value)}.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an http:// or https:// URL, not ${url.protocol}//.`);
  }
  return url;
}

/** Where the forwarding queue lives: --queue-dir, beside --log, or in the config folder per target. */
export function queueFileFor(flags: ListenFlags, target: URL, ctx: Context): string {
  if (flags.queueDir !== undefined) return join(resolve(ctx.cwd, flags.queueDir), 'forward-queue.ndjson');
  if (flags.log !== undefined) {
    const log = resolve(ctx.cwd, flags.log);
    return join(
      dirname(log),
      `${basename(log).replace(/\.(ndjson|jsonl|json|log)$/i, '')}.forward-queue.ndjson`,
    );
  }
  const id = createHash('sha256').update(target.href).digest('hex').slice(0, 12);
  return join(configDir(ctx.env), 'forward-queues', `${id}.ndjson`);
}

interface KeyChoice {
  key: string | undefined;
  source: string;
}

async function chooseKey(flags: ListenFlags, ctx: Context): Promise<KeyChoice> {
  const settings = await ctx.settings();
  let choice: KeyChoice;
  if (flags.key !== undefined && flags.key !== '') choice = { key: flags.key, source: '--key' };
  else if (ctx.env.ORDERCLI_WEBHOOK_KEY)
    choice = { key: ctx.env.ORDERCLI_WEBHOOK_KEY, source: 'ORDERCLI_WEBHOOK_KEY' };
  else if (settings.webhookKey)
    choice = { key: settings.webhookKey, source: `profile "${settings.profileName}"` };
  else choice = { key: undefined, source: 'none' };
  if (choice.key !== undefined) {
    ctx.io.redactor.addSecret(choice.key);
    if (choice.key.trim() !== choice.key) {
      // HTTP strips spaces around header values, so a key with them could never match.
      ctx.io.err(
        `warning: the key from ${choice.source} has surrounding white space; checking it without.\n`,
      );
      choice.key = choice.key.trim();
    }
    if (choice.key === '') choice = { key: undefined, source: 'none' };
  }
  if (choice.key !== undefined && settings.token !== undefined && choice.key === settings.token) {
    ctx.io.err(
      `warning: the key from ${choice.source} is the API token; the webhook key is a different value.\n`,
    );
  }
  return choice;
}

export async function run(flags: ListenFlags, ctx: Context): Promise<void> {
  const plan = planListen(flags, ctx);
  const { io } = ctx;
  const keyChoice = await chooseKey(flags, ctx);
  if (keyChoice.key === undefined && flags.verify && flags.subscribe === undefined) {
    throw new UsageError(
      'listen needs the webhook key to check X-WEBHOOK-KEY: pass --key, set ORDERCLI_WEBHOOK_KEY, or save it with ordercli webhooks subscribe --save-key. --no-verify accepts any request.',
    );
  }
  if (!isLoopbackHost(plan.host)) {
    io.err(`warning: listen binds ${plan.host}, reachable from other machines.\n`);
  }
  const settings = await ctx.settings();
  // Fail before listening when the service cannot be reached for --fetch or --subscribe.
  const api: ApiClient | undefined = flags.fetch || flags.subscribe ? await ctx.api() : undefined;
  const out = new ListenConsole(io, ctx.json);

  let log: EventLog | undefined;
  let queue: ForwardQueue | undefined;
  let receiver: WebhookReceiver | undefined;
  const followUps =
    flags.fetch || flags.exec
      ? new FollowUpChain({
          api: flags.fetch ? api : undefined,
          exec: flags.exec,
          cwd: ctx.cwd,
          env: ctx.env,
          signal: ctx.signal,
        })
      : undefined;

  let onceDone = false;
  let resolveOnce: () => void = () => undefined;
  const firstEvent = new Promise<void>((r) => {
    resolveOnce = r;
  });
  let shown = 0;

  const present = (event: AcceptedEvent): void => {
    if (flags.event !== undefined && event.event !== flags.event) {
      out.skipped(event, flags.event);
      return;
    }
    if (flags.once && onceDone) {
      out.note(
        `${event.receivedAt.slice(11, 23)}  ${event.event ?? 'event'} accepted after --once was satisfied (logged, not shown)`,
      );
      return;
    }
    if (flags.once) onceDone = true;
    if (!followUps) {
      out.event(event);
      shown++;
      if (flags.once) resolveOnce();
      return;
    }
    void followUps.add(event, (result, skipped) => {
      out.event(event, result);
      shown++;
      if (skipped) out.note('  (--fetch/--exec skipped: too many events waiting for them)');
      if (flags.once) resolveOnce();
    });
  };

  try {
    if (flags.log !== undefined) {
      const path = resolve(ctx.cwd, flags.log);
      log = await EventLog.open(path).catch(fileError(`the log ${path}`, '--log'));
    }
    if (plan.forwardTo) {
      const file = queueFileFor(flags, plan.forwardTo, ctx);
      queue = await ForwardQueue.open({
        file,
        target: plan.forwardTo.href,
        key: keyChoice.key,
        onAttempt: (attempt) => out.forward(attempt, plan.forwardTo!.href),
        lockWaitMs: lockWaitFromEnv(ctx.env),
        onLockWait: (message) => ctx.io.err(`${message}\n`),
        signal: ctx.signal,
      }).catch(fileError(`the forwarding queue ${file}`, '--queue-dir'));
    }
    const persist = persistWith(log, queue);

    const verifier =
      keyChoice.key !== undefined && flags.verify
        ? new WebhookKeyVerifier(keyChoice.key, { apiToken: settings.token })
        : flags.verify
          ? 'pending'
          : 'off';
    try {
      receiver = await startWebhookReceiver({
        host: plan.host,
        port: plan.port,
        path: plan.path,
        verifier,
        persist,
        onAccepted: present,
        onRejected: (rejection) => out.rejected(rejection),
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') {
        throw new UsageError(
          `Port ${plan.port} on ${plan.host} is already in use: pick another with --port (0 picks a free one).`,
        );
      }
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES') {
        throw new UsageError(
          `Cannot listen on ${plan.host}:${plan.port} (${code}): check --host and --port.`,
        );
      }
      throw error;
    }
    if (plan.forwardTo && sameEndpoint(plan.forwardTo, receiver.url)) {
      throw new UsageError(
        '--forward-to points at this listener itself: give the address of your application.',
      );
    }

    if (flags.subscribe !== undefined && plan.publicUrl && api) {
      const answer = await subscribeWebhook(
        api,
        { event: flags.subscribe, url: plan.publicUrl.href },
        { redactor: io.redactor, signal: ctx.signal },
      );
      io.err(
        `Subscribed ${plan.publicUrl.href} to ${flags.subscribe} (PUT /api/v1/webhooks: ${answer.status}).\n`,
      );
      if (normalize(plan.publicUrl.pathname) !== normalize(plan.path)) {
        io.err(
          `warning: --public-url has the path ${plan.publicUrl.pathname} but listen serves ${plan.path}: notifications would get 404.\n`,
        );
      }
      if (answer.key !== undefined && keyChoice.key === undefined) {
        keyChoice.key = answer.key;
        keyChoice.source = 'the subscription answer';
        queue?.useKey(answer.key);
      } else if (answer.key !== undefined && answer.key !== keyChoice.key) {
        io.err(
          `warning: the service's key for this subscription (${keyFingerprint(answer.key)}) differs from the key from ${keyChoice.source} (${keyFingerprint(keyChoice.key!)}): its notifications will be refused with 401.\n`,
        );
      }
      if (keyChoice.key === undefined && flags.verify) {
        throw new UsageError(
          'The subscription answer holds no key and none was given: pass --key or set ORDERCLI_WEBHOOK_KEY (or --no-verify).',
        );
      }
      if (flags.verify)
        receiver.setVerifier(new WebhookKeyVerifier(keyChoice.key!, { apiToken: settings.token }));
    }

    if (log) io.err(`Logging accepted events to ${log.path}\n`);
    if (queue) {
      const resumed =
        queue.resumed > 0
          ? `; resuming ${queue.resumed} undelivered event${queue.resumed === 1 ? '' : 's'}`
          : '';
      io.err(`Forwarding to ${plan.forwardTo!.href} (queue ${queue.file}${resumed})\n`);
      queue.start();
    }
    if (flags.once) {
      const what = flags.event ?? 'notification';
      const until = plan.onceWaitMs === undefined ? '' : ` (up to ${formatDuration(plan.onceWaitMs)})`;
      io.err(`Waiting for one ${what}${until}.\n`);
    }
    const checked =
      flags.verify && keyChoice.key !== undefined
        ? `X-WEBHOOK-KEY checked (key from ${keyChoice.source}, ${keyFingerprint(keyChoice.key)})`
        : 'X-WEBHOOK-KEY NOT checked (--no-verify)';
    io.err(`Ready: listening on ${receiver.url} - ${checked}. Press Ctrl-C to quit.\n`);

    const outcome = await waitForEnd(ctx.signal, flags.once ? firstEvent : undefined, plan.onceWaitMs);
    // Ctrl-C: 130 like every interrupted command, also what the shell sees through `npx ordercli`
    // (npm runs it under sh, which dash ends with the same SIGINT).
    if (outcome === 'interrupted') ctx.exitCode = ExitCode.Interrupted;
    if (outcome === 'timeout') {
      throw new IncompleteError(
        `No ${flags.event ?? 'notification'} was accepted within ${formatDuration(plan.onceWaitMs!)} (listen --once --wait).`,
        ExitCode.Failure,
      );
    }
  } finally {
    await receiver?.close();
    await followUps?.idle();
    await queue?.close();
    await log?.close();
    await out.drain();
    if (receiver) writeNote(io, `${summary(receiver, shown, queue)}\n`);
  }
}

/** A file listen cannot create or open is a usage error (exit 2) naming the file and the flag. */
function fileError(what: string, flag: string): (error: unknown) => never {
  return (error) => {
    const { code, syscall } = error as NodeJS.ErrnoException;
    if (code === undefined || syscall === undefined) throw error;
    throw new UsageError(`Cannot write ${what} (${code}): choose another place with ${flag}.`);
  };
}

/**
 * What makes an event durable before its 200: the log line, the forwarding queue entry, or both
 * (the answer waits for both; the first failure is the one reported).
 */
function persistWith(
  log: EventLog | undefined,
  queue: ForwardQueue | undefined,
): ((event: AcceptedEvent, done: (error?: Error) => void) => void) | undefined {
  const toLog = (e: AcceptedEvent, done: (error?: Error) => void) => log!.append(e.line, done);
  const toQueue = (e: AcceptedEvent, done: (error?: Error) => void) =>
    queue!.enqueue(e.line).then(() => done(), done);
  if (log && queue) {
    return (event, done) => {
      let waiting = 2;
      let failure: Error | undefined;
      const one = (error?: Error) => {
        failure ??= error;
        if (--waiting === 0) done(failure);
      };
      toLog(event, one);
      toQueue(event, one);
    };
  }
  return log ? toLog : queue ? toQueue : undefined;
}

function waitForEnd(
  signal: AbortSignal,
  firstEvent: Promise<void> | undefined,
  waitMs: number | undefined,
): Promise<'interrupted' | 'once' | 'timeout'> {
  return new Promise((resolvePromise) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: 'interrupted' | 'once' | 'timeout') => {
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolvePromise(outcome);
    };
    const onAbort = () => finish('interrupted');
    if (signal.aborted) return finish('interrupted');
    signal.addEventListener('abort', onAbort, { once: true });
    if (firstEvent) void firstEvent.then(() => finish('once'));
    if (firstEvent && waitMs !== undefined) timer = setTimeout(() => finish('timeout'), waitMs);
  });
}

function summary(receiver: WebhookReceiver, shown: number, queue: ForwardQueue | undefined): string {
  let accepted = 0;
  let rejected = 0;
  for (const [status, n] of receiver.counts) {
    if (status === 200) accepted += n;
    else rejected += n;
  }
  let text = `Stopped: ${accepted} accepted (${shown} shown), ${rejected} rejected`;
  if (queue) {
    text += `; forwarded ${queue.counts.delivered}, refused by the application ${queue.counts.rejected}`;
    text +=
      queue.waiting > 0
        ? `, ${queue.waiting} waiting in ${queue.file} (sent on the next start)`
        : ', none waiting';
  }
  return `${text}.`;
}

function normalize(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function sameEndpoint(target: URL, listening: string): boolean {
  const own = new URL(listening);
  const host = (h: string) => (isLoopbackHost(h) ? 'loopback' : h.toLowerCase());
  return (
    host(target.hostname) === host(own.hostname) &&
    target.port === own.port &&
    normalize(target.pathname) === normalize(own.pathname)
  );
}
