/**
 * One `listen` session: the receiver, what makes each event durable before its 200 (the log, the
 * forwarding queue, or both), the optional subscription, and the wait for its end (Ctrl-C, the
 * caller's `until`, or its time limit). It reports what happens through `on` and ends with the
 * counts of a `ListenResult`; the command renders both.
 */
import { createHash } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { ApiClient } from '../api/client.js';
import { configDir } from '../config/profiles.js';
import { CliError, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import type { Redactor } from '../core/redact.js';
import { withoutTrailingSlashes } from '../core/url.js';
import type { WebhookKeyChoice } from '../core/webhook-key.js';
import { ReadyFile } from '../io/ready-file.js';
import { EventLog } from './event-log.js';
import { type ForwardAttempt, ForwardQueue } from './forward-queue.js';
import { type DamagedLines, damagedLinesWarning } from './forward-queue-file.js';
import { describeRoute, type ForwardRoute, routeFor } from './forward-routes.js';
import type { Inspector } from './inspector.js';
import {
  type AcceptedEvent,
  type Rejection,
  startWebhookReceiver,
  type WebhookReceiver,
} from './receiver.js';
import { forwardLoopOf, newHopId } from './self-forward.js';
import { subscribeWebhook } from './subscription.js';
import type { Tunnel, TunnelKind } from './tunnel.js';
import { keyFingerprint, WebhookKeyVerifier } from './verify.js';

export interface ListenSessionOptions {
  host: string;
  port: number;
  /** The one path notifications are accepted on. */
  path: string;
  /** Whether X-WEBHOOK-KEY is checked (false with --no-verify). */
  verify: boolean;
  /** The key checked and added back when forwarding; with `verify` and none, the subscription must give one. */
  key: WebhookKeyChoice;
  /** The API token of this run: a notification carrying it instead of the key is named as such. */
  apiToken: string | undefined;
  /** `--events`: only these events are accepted; others are answered 200 and ignored (`on.ignored`). */
  events?: string[];
  /** Every accepted event is appended to this file before its 200. */
  logFile?: string;
  /**
   * Each accepted event is forwarded on its route (`forward-routes.ts`: the one naming it, else the
   * default), through the route's own queue kept in `queueFile`; an event no route takes is not.
   */
  forward?: {
    routes: QueuedRoute[];
    lockWaitMs?: number;
    /** How long each attempt waits for the application's answer (`--forward-timeout`; default 10 s). */
    timeoutMs?: number;
  };
  /**
   * `publicUrl` (else the tunnel's address) is subscribed to each of `events` once the receiver
   * listens; a key the service returns, when none was given, is checked and passed to `saveKey`.
   */
  subscribe?: {
    api: ApiClient;
    events: string[];
    publicUrl?: URL;
    /** Keeps the key the service returned (in the profile); says where. */
    saveKey?: (key: string) => Promise<string>;
  };
  /** `listen --tunnel`: the tunnel started (or found) for the receiver's port, its output passed on. */
  tunnel?: {
    kind: TunnelKind;
    onOutput?: (line: string) => void;
    /** The environment the program runs in, and whose PATH finds it. */
    env: NodeJS.ProcessEnv;
    /** Where a running ngrok agent's API is (ORDERCLI_NGROK_API; default 127.0.0.1:4040). */
    ngrokApi?: string;
  };
  /** Masks the key a subscription answer carries. */
  redactor: Redactor;
  /** Ctrl-C: ends the session as 'interrupted' (and ends a wait for the queue's lock). */
  signal: AbortSignal;
  /** Ends the session as 'done' once it resolves (the first event of --once, the count of --expect). */
  until?: Promise<void>;
  /** With `until`: ends the session as 'timeout' when `until` has not resolved within this many ms. */
  untilMs?: number;
  /** `listen --inspect`: the inspector page on 127.0.0.1 at this port (0 picks a free one); `program` starts its commands. */
  inspect?: { port: number; program: string };
  /**
   * `listen --ready-file`: written (`ready-file.ts`) just before `ready` is told, once the port
   * accepts and the tunnel's address is known; removed first thing when the session ends.
   */
  readyFile?: string;
  on: ListenSessionEvents;
}

/** What a session tells as it runs, in this order: `subscribed`, `ready`, events, `stopped`. */
export interface ListenSessionEvents {
  /** After its 200 has been written. */
  accepted(event: AcceptedEvent): void;
  rejected(rejection: Rejection): void;
  /** `--events` leaves this one out: answered 200, not recorded, forwarded nor counted as accepted. */
  ignored?(event: AcceptedEvent): void;
  forwardAttempt(attempt: ForwardAttempt): void;
  /**
   * An event this run forwarded came back to it (a forwarding loop): answered 200, neither
   * recorded, forwarded nor counted as accepted.
   */
  looped?(event: string | null): void;
  /** The forwarding queue's lock is held by another process: waiting for it. */
  lockWait(message: string): void;
  subscribed(subscription: ListenSubscription): void;
  /** `--tunnel`: its public address is known (before any subscription). */
  tunnel?(tunnel: ListenTunnel): void;
  ready(ready: ListenReady): void;
  /**
   * Once everything is closed, after `ready` (also when the session then ends with an error); a
   * session that fails before it is ready (a tunnel that does not start, a refused subscription)
   * ends with its error alone.
   */
  stopped(result: ListenResult): void;
}

/** A `--forward-to` route and the file of its queue. */
export interface QueuedRoute extends ForwardRoute {
  queueFile: string;
}

export interface ListenSubscription {
  publicUrl: string;
  event: string;
  status: number;
  /** The path of the public URL is not the one served: the service's notifications would get 404. */
  pathMismatch: boolean;
  /** The key the session now checks came from the answer (none was given). */
  keyFromAnswer: boolean;
  /** Where that key was kept (the profile), when it was. */
  keySavedIn?: string;
  /** The answer's key differs from the one given: the service's notifications will get 401. */
  keyMismatch?: { answerFingerprint: string; givenFingerprint: string; givenSource: string };
}

export interface ListenTunnel {
  kind: TunnelKind;
  /** The tunnel's address with the receiver's path: where the service sends. */
  publicUrl: string;
  /** False for an ngrok agent that was already running (it is left running at the end). */
  started: boolean;
}

export interface ListenReady {
  url: string;
  /** The key checked; undefined when X-WEBHOOK-KEY is not checked. */
  checkedKey: { source: string; fingerprint: string } | undefined;
  logFile: string | undefined;
  /** One per `--forward-to` target, in the order given; empty without --forward-to. */
  forwarding: ReadyForwarding[];
  /** The inspector page's address to open (`--inspect`), with its secret: for the terminal only. */
  inspectorUrl?: string;
}

export interface ReadyForwarding {
  target: string;
  /** What it receives: `every event`, `sales_order_validated`, `every other event`. */
  receives: string;
  queueFile: string;
  resumed: number;
  /** Lines of the queue that were not entries, kept aside in a file. */
  damaged?: DamagedLines | undefined;
}

export type ListenEnding = 'interrupted' | 'done' | 'timeout';

export interface ListenResult {
  /** Undefined when it ended with an error. */
  ending: ListenEnding | undefined;
  accepted: number;
  rejected: number;
  /** Answered 200 but left out by `--events`. */
  ignored: number;
  /** Summed over the targets of --forward-to. */
  forwarding?: {
    delivered: number;
    /** Refused by the application (a final 3xx or 4xx). */
    refused: number;
    /** Still in a queue, sent on the next start: each queue that holds some, and how many. */
    waiting: { queueFile: string; count: number }[];
  };
}

/**
 * Where a target's forwarding queue lives: in `queueDir`, beside the log, or in the config folder
 * (there always named by the target). The default target (`others`) keeps the plain name; a target
 * of named events only gets its own file, named by its address, so that what one holds is sent
 * where it was routed even if the routes change between runs.
 */
export function queueFileFor(
  where: { queueDir?: string; logFile?: string; target: URL; others: boolean },
  env: NodeJS.ProcessEnv,
): string {
  const id = createHash('sha256').update(where.target.href).digest('hex').slice(0, 12);
  const suffix = where.others ? '' : `.${id}`;
  if (where.queueDir !== undefined) return join(where.queueDir, `forward-queue${suffix}.ndjson`);
  if (where.logFile !== undefined) {
    const name = basename(where.logFile).replace(/\.(ndjson|jsonl|json|log)$/i, '');
    return join(dirname(where.logFile), `${name}.forward-queue${suffix}.ndjson`);
  }
  return join(configDir(env), 'forward-queues', `${id}.ndjson`);
}

/** Runs a session until its end; resolves with how it ended, or throws (a usage error for a busy port). */
export async function runListenSession(options: ListenSessionOptions): Promise<ListenEnding> {
  const session = new ListenSession(options);
  try {
    return await session.run();
  } finally {
    await session.close();
  }
}

/** One session's parts, opened in order by `run` and closed by `close`, whatever was opened. */
class ListenSession {
  private on: ListenSessionEvents;
  /** The key checked and added back when forwarding: the one given, or the subscription answer's. */
  private key: { key: string; source: string; profile?: string | undefined } | undefined;
  private log: EventLog | undefined;
  /** One queue per --forward-to target, in the order of `options.forward.routes`. */
  private queues: { route: QueuedRoute; queue: ForwardQueue }[] = [];
  private receiver: WebhookReceiver | undefined;
  private inspector: Inspector | undefined;
  private tunnel: Tunnel | undefined;
  private readyFile: ReadyFile | undefined;
  private ending: ListenEnding | undefined;
  /** Whether `ready` was told (then `stopped` is too). */
  private wasReady = false;
  /** This run's id in the hop header of what it forwards (`self-forward.ts`). */
  private readonly hopId = newHopId();

  constructor(private readonly options: ListenSessionOptions) {
    this.on = options.on;
    const { key, source, profile } = options.key;
    this.key = key === undefined ? undefined : { key, source, profile };
  }

  /** Inspector, log, queue, receiver, subscription, then the wait for the end. */
  async run(): Promise<ListenEnding> {
    const { options } = this;
    if (options.readyFile !== undefined)
      this.readyFile = await ReadyFile.prepare(options.readyFile, process.cwd(), 'nothing was received');
    if (options.inspect) await this.startInspector(options.inspect);
    if (options.logFile !== undefined) {
      const file = options.logFile;
      this.log = await EventLog.open(file).catch(fileError(`the log ${file}`, '--log'));
    }
    for (const route of options.forward?.routes ?? []) await this.openQueue(route, options.forward!);
    const queues = this.queues;
    const receiver = await startReceiver(options, this.on, {
      verifier: !options.verify ? 'off' : this.key ? this.verifier(this.key) : 'pending',
      persist: persistWith(this.log, queues.length === 0 ? undefined : (event) => this.queueFor(event)),
      describeRejections: this.inspector !== undefined,
      hopId: queues.length === 0 ? undefined : this.hopId,
    });
    this.receiver = receiver;
    for (const { route } of queues) await refuseForwardLoop(route.target, receiver.url);
    const publicUrl = options.tunnel ? await this.startTunnel(options.tunnel, receiver) : undefined;
    if (options.subscribe) {
      for (const event of options.subscribe.events)
        await this.subscribe(options.subscribe, event, receiver, publicUrl);
    }
    const reachedAt = options.subscribe?.publicUrl ?? publicUrl;
    await this.readyFile?.write({ url: receiver.url, ...(reachedAt ? { publicUrl: reachedAt.href } : {}) });
    this.on.ready(this.ready(receiver));
    this.wasReady = true;
    for (const { queue } of queues) queue.start();
    this.ending = await waitForEnd(options.signal, options.until, options.untilMs, this.tunnel);
    return this.ending;
  }

  /** Closes what was opened; tells `stopped` when the session had been ready. */
  async close(): Promise<void> {
    await this.readyFile?.remove();
    await this.tunnel?.stop();
    await this.receiver?.close();
    for (const { queue } of this.queues) await queue.close();
    await this.log?.close();
    await this.inspector?.close();
    if (this.receiver && this.wasReady) this.on.stopped(resultOf(this.ending, this.receiver, this.queues));
  }

  /** The queue of the route an event is forwarded on; undefined when no route takes it. */
  private queueFor(event: string | null): { queue: ForwardQueue } | undefined {
    const route = routeFor(
      this.queues.map(({ route }) => route),
      event,
    );
    return this.queues.find((q) => q.route === route);
  }

  private verifier(choice: { key: string }): WebhookKeyVerifier {
    return new WebhookKeyVerifier(choice.key, { apiToken: this.options.apiToken });
  }

  private async startInspector(inspect: { port: number; program: string }): Promise<void> {
    // Loaded only with --inspect; started first, so that its history from the log ends where this run begins.
    const { startInspector } = await import('./inspector.js');
    const routes = this.options.forward?.routes ?? [];
    const inspector = await startInspector({
      port: inspect.port,
      redactor: this.options.redactor,
      forwarding: routes.map((route) => ({
        target: route.target.href,
        receives: describeRoute(route, routes),
      })),
      forwardTarget: (event) => routeFor(routes, event)?.target.href,
      logFile: this.options.logFile,
      key: () => this.key?.key,
      keyProfile: () => this.key?.profile,
      program: inspect.program,
    });
    this.inspector = inspector;
    this.on = teeToInspector(this.on, inspector);
  }

  private async openQueue(
    route: QueuedRoute,
    { lockWaitMs, timeoutMs }: NonNullable<ListenSessionOptions['forward']>,
  ): Promise<void> {
    const { target, queueFile } = route;
    const queue = await ForwardQueue.open({
      file: queueFile,
      target: target.href,
      key: this.key?.key,
      forwardedBy: this.hopId,
      onAttempt: (attempt) => this.on.forwardAttempt(attempt),
      lockWaitMs,
      timeoutMs,
      onLockWait: (message) => this.on.lockWait(message),
      signal: this.options.signal,
    }).catch(fileError(`the forwarding queue ${queueFile}`, '--queue-dir'));
    this.queues.push({ route, queue });
    if (queue.damaged) this.inspector?.warn(damagedLinesWarning(queue.damaged));
  }

  /** Starts (or finds) the tunnel to the receiver's port: its address with the receiver's path. */
  private async startTunnel(
    tunnel: NonNullable<ListenSessionOptions['tunnel']>,
    receiver: WebhookReceiver,
  ): Promise<URL> {
    const { startTunnel, TunnelError } = await import('./tunnel.js');
    try {
      this.tunnel = await startTunnel(tunnel.kind, {
        port: Number(new URL(receiver.url).port),
        onOutput: tunnel.onOutput,
        signal: this.options.signal,
        env: tunnel.env,
        path: tunnel.env.PATH ?? '',
        ngrokApi: tunnel.ngrokApi,
      });
    } catch (error) {
      if (error instanceof TunnelError) throw new CliError(error.message, ExitCode.Failure);
      throw error;
    }
    const publicUrl = new URL(this.options.path.replace(/^\//, ''), this.tunnel.publicUrl);
    const told: ListenTunnel = { kind: tunnel.kind, publicUrl: publicUrl.href, started: this.tunnel.started };
    this.on.tunnel?.(told);
    this.inspector?.tunnel(told);
    return publicUrl;
  }

  /** Subscribes the public URL; a key in the answer is checked from now on when none was given. */
  private async subscribe(
    subscribe: NonNullable<ListenSessionOptions['subscribe']>,
    event: string,
    receiver: WebhookReceiver,
    tunnelUrl: URL | undefined,
  ): Promise<void> {
    const { options } = this;
    const { api } = subscribe;
    const publicUrl = subscribe.publicUrl ?? tunnelUrl!;
    const answer = await subscribeWebhook(
      api,
      { event, url: publicUrl.href },
      { redactor: options.redactor, signal: options.signal },
    );
    const subscription: ListenSubscription = {
      publicUrl: publicUrl.href,
      event,
      status: answer.status,
      pathMismatch: withoutTrailingSlashes(publicUrl.pathname) !== withoutTrailingSlashes(options.path),
      keyFromAnswer: false,
    };
    if (answer.key !== undefined && this.key === undefined) {
      this.key = { key: answer.key, source: 'the subscription answer' };
      subscription.keyFromAnswer = true;
      for (const { queue } of this.queues) queue.useKey(answer.key);
      if (subscribe.saveKey) subscription.keySavedIn = await subscribe.saveKey(answer.key);
    } else if (answer.key !== undefined && this.key !== undefined && answer.key !== this.key.key) {
      subscription.keyMismatch = {
        answerFingerprint: keyFingerprint(answer.key),
        givenFingerprint: keyFingerprint(this.key.key),
        givenSource: this.key.source,
      };
    }
    this.on.subscribed(subscription);
    this.inspector?.subscribed(subscription);
    if (!options.verify) return;
    if (this.key === undefined) {
      throw new UsageError(
        'The subscription answer holds no key and none was given: pass --key or set ORDERCLI_WEBHOOK_KEY (or --no-verify).',
      );
    }
    receiver.setVerifier(this.verifier(this.key));
  }

  private ready(receiver: WebhookReceiver): ListenReady {
    const { options, key, queues, inspector } = this;
    const routes = queues.map(({ route }) => route);
    return {
      url: receiver.url,
      checkedKey:
        options.verify && key ? { source: key.source, fingerprint: keyFingerprint(key.key) } : undefined,
      logFile: this.log?.path,
      forwarding: queues.map(({ route, queue }) => ({
        target: route.target.href,
        receives: describeRoute(route, routes),
        queueFile: queue.file,
        resumed: queue.resumed,
        damaged: queue.damaged,
      })),
      ...(inspector ? { inspectorUrl: inspector.openUrl } : {}),
    };
  }
}

/** The session's events, each told to the console as before, then to the inspector. */
function teeToInspector(on: ListenSessionEvents, inspector: Inspector): ListenSessionEvents {
  return {
    ...on,
    accepted: (event) => {
      on.accepted(event);
      inspector.accepted(event);
    },
    rejected: (rejection) => {
      on.rejected(rejection);
      inspector.rejected(rejection);
    },
    ignored: (event) => {
      on.ignored?.(event);
      inspector.ignored(event);
    },
    forwardAttempt: (attempt) => {
      on.forwardAttempt(attempt);
      inspector.forwardAttempt(attempt);
    },
  };
}

async function startReceiver(
  options: ListenSessionOptions,
  on: ListenSessionEvents,
  parts: Pick<
    Parameters<typeof startWebhookReceiver>[0],
    'verifier' | 'persist' | 'describeRejections' | 'hopId'
  >,
): Promise<WebhookReceiver> {
  const { host, port, path } = options;
  try {
    return await startWebhookReceiver({
      host,
      port,
      path,
      ...parts,
      onAccepted: (event) => on.accepted(event),
      onRejected: (rejection) => on.rejected(rejection),
      onLooped: (event) => on.looped?.(event),
      ...(options.events && {
        accepts: (event: string | null) => event !== null && options.events!.includes(event),
        onIgnored: (event: AcceptedEvent) => on.ignored?.(event),
      }),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new UsageError(
        `Port ${port} on ${host} is already in use: pick another with --port (0 picks a free one).`,
      );
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EACCES') {
      throw new UsageError(`Cannot listen on ${host}:${port} (${code}): check --host and --port.`);
    }
    throw error;
  }
}

/** A file the session cannot create or open is a usage error (exit 2) naming the file and the flag. */
function fileError(what: string, flag: string): (error: unknown) => never {
  return (error) => {
    const { code, syscall } = error as NodeJS.ErrnoException;
    if (code === undefined || syscall === undefined) throw error;
    throw new UsageError(`Cannot write ${what} (${code}): choose another place with ${flag}.`);
  };
}

type Persist = (event: AcceptedEvent, done: (error?: Error) => void) => void;

/**
 * What makes an event durable before its 200: the log line, the entry in its route's forwarding
 * queue (`queueOf`; none when no route takes it), or both (the answer waits for both; the first
 * failure is the one reported).
 */
function persistWith(
  log: EventLog | undefined,
  queueOf: ((event: string | null) => { queue: ForwardQueue } | undefined) | undefined,
): Persist | undefined {
  if (!log && !queueOf) return undefined;
  return (event, done) => {
    const queue = queueOf?.(event.event)?.queue;
    const parts: Persist[] = [];
    if (log) parts.push((e, one) => log.append(e.line, one));
    if (queue) {
      parts.push((e, one) =>
        queue.enqueue(e.line).then((seq) => {
          e.forwardSeq = seq;
          e.forwardTarget = queue.target;
          one();
        }, one),
      );
    }
    if (parts.length === 0) return done();
    let waiting = parts.length;
    let failure: Error | undefined;
    const one = (error?: Error) => {
      failure ??= error;
      if (--waiting === 0) done(failure);
    };
    for (const part of parts) part(event, one);
  };
}

/**
 * Resolves with how the session ends: Ctrl-C, `until`, its time limit. A tunnel started for it that
 * ends on its own ends the session with an error (exit 1): the service can no longer reach it.
 */
function waitForEnd(
  signal: AbortSignal,
  until: Promise<void> | undefined,
  untilMs: number | undefined,
  tunnel: Tunnel | undefined,
): Promise<ListenEnding> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (ending: ListenEnding | Error) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (ending instanceof Error) reject(ending);
      else resolve(ending);
    };
    const onAbort = () => finish('interrupted');
    if (signal.aborted) return finish('interrupted');
    signal.addEventListener('abort', onAbort, { once: true });
    if (until) void until.then(() => finish('done'));
    if (until && untilMs !== undefined) timer = setTimeout(() => finish('timeout'), untilMs);
    void tunnel?.ended.then((how) =>
      finish(
        new CliError(
          `The ${tunnel.kind} tunnel ${how}, so the service can no longer reach this listener: listen stopped. Run it again (with --verbose to see the tunnel's output).`,
          ExitCode.Failure,
        ),
      ),
    );
  });
}

function resultOf(
  ending: ListenEnding | undefined,
  receiver: WebhookReceiver,
  queues: readonly { queue: ForwardQueue }[],
): ListenResult {
  let accepted = 0;
  let rejected = 0;
  for (const [status, n] of receiver.counts) {
    if (status === 200) accepted += n;
    else rejected += n;
  }
  const result: ListenResult = { ending, accepted, rejected, ignored: receiver.ignored.count };
  if (queues.length > 0) {
    result.forwarding = { delivered: 0, refused: 0, waiting: [] };
    for (const { queue } of queues) {
      result.forwarding.delivered += queue.counts.delivered;
      result.forwarding.refused += queue.counts.rejected;
      if (queue.waiting > 0) result.forwarding.waiting.push({ queueFile: queue.file, count: queue.waiting });
    }
  }
  return result;
}

/** Exit 2 when `target` leads back to the receiver listening at `listening` (see self-forward.ts). */
async function refuseForwardLoop(target: URL, listening: string): Promise<void> {
  const address = await forwardLoopOf(target, listening);
  if (address === undefined) return;
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const reaches = address === host ? host : `${host} → ${address}`;
  throw new UsageError(
    `--forward-to ${target.href} points at this listener itself (${reaches} reaches this machine, where listen receives on ${listening}): give the address of your application.`,
  );
}
