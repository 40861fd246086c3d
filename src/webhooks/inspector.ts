/**
 * `listen --inspect`: a second HTTP server, on 127.0.0.1 only, serving one page that shows every
 * request `listen` receives as it arrives (server-sent events), with Replay and Copy as command.
 *
 * Safe by construction (the page and its API are for the terminal user's browser only):
 * - bound to 127.0.0.1 whatever `--host` says, on its own port (the receiver's answers are unchanged);
 * - any request whose `Host` is not `127.0.0.1:<port>` or `localhost:<port>` is refused (403), so a
 *   page elsewhere cannot reach it through DNS rebinding; an `Origin` other than the page's is refused;
 * - the page holds no secret and no data; everything else (the event stream, Copy as command,
 *   Download body, Replay) needs the secret printed on the terminal in the `X-Ordercli-Token`
 *   header, which only the page's script sends (inspector-access.ts): no cookie, nothing a browser
 *   would send by itself to another port of 127.0.0.1; without it, 403 for every path;
 * - POST /replay also needs a JSON body; no CORS header is ever sent, so other origins can read
 *   neither the page nor the stream;
 * - every answer carries a Content-Security-Policy and the security headers of inspector-http.ts;
 * - the webhook key never reaches the page: headers are shown redacted and Replay adds the key back
 *   here, at sending.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UsageError } from '../core/errors.js';
import { describeNetworkError } from '../core/network-error.js';
import type { Redactor } from '../core/redact.js';
import { parseHttpUrl } from '../core/url.js';
import { originalBodyBytes } from './event-record.js';
import type { ForwardAttempt } from './forward-sender.js';
import { InspectorAccess } from './inspector-access.js';
import { bodyFileName, copyCommand, EXAMPLE_APP_URL } from './inspector-command.js';
import { InspectorHistory, MAX_REQUESTS, readLogTail } from './inspector-history.js';
import { readBody, refuse, SECURITY_HEADERS, sendJson, sendPage } from './inspector-http.js';
import PAGE from './inspector-page.html';
import type { AcceptedEvent, Rejection } from './receiver.js';
import { answerLine, isAccepted } from './receiver-answer.js';
import { sendRecordedEvent } from './send-recorded.js';

/** Bytes an event-stream client may leave unread before it is dropped (its page reconnects). */
const MAX_CLIENT_BACKLOG = 8 * 1024 * 1024;
const MAX_CLIENTS = 32;
const MAX_POST_BYTES = 16 * 1024;
const REPLAY_TIMEOUT_MS = 10_000;
const REPLAY_ANSWER_BYTES = 4096;
/** Warnings kept for pages opened later (the first ones: they are about the run's start). */
const MAX_NOTICES = 20;
const ROUTES = ['/', '/events', '/command', '/body', '/replay'];

export interface InspectorOptions {
  /** 0 picks a free port. */
  port: number;
  /** Masks the key, the API token and secret headers in everything the page receives. */
  redactor: Redactor;
  /** Where Replay sends an event when the page gives no URL: its `--forward-to` route's target. */
  forwardTarget: (event: string | null) => string | undefined;
  /** The `--forward-to` targets and what each receives, shown in the page's header. */
  forwarding: { target: string; receives: string }[];
  /** The `--log` file: its last events are the history at start, and Copy as command names it. */
  logFile: string | undefined;
  /** The key Replay adds back (read at each replay: `--subscribe` may learn it after start). */
  key: () => string | undefined;
  /** How Copy as command writes ordercli (`ordercli`, or `npx ordercli` under npx); default `ordercli`. */
  program?: string;
  /** The profile the key came from (`WebhookKeyChoice.profile`): Copy as command leaves out its key. */
  keyProfile?: () => string | undefined;
  /** History bounds (tests use small ones). */
  limits?: { requests: number; bytes: number };
}

export interface Inspector {
  /** `http://127.0.0.1:<port>/`: the page's address, without the secret (it answers 403 alone). */
  readonly url: string;
  /** The address to print on the terminal: `url` with `?token=<secret>`. */
  readonly openUrl: string;
  readonly port: number;
  readonly history: InspectorHistory;
  accepted(event: AcceptedEvent): void;
  rejected(rejection: Rejection): void;
  forwardAttempt(attempt: ForwardAttempt): void;
  /** A warning shown on the page (and to pages opened later), as the console shows it. */
  warn(text: string): void;
  /** `--tunnel`: the public address the service sends to, shown in the page's header. */
  tunnel(tunnel: { kind: string; publicUrl: string }): void;
  /** `--subscribe`: one subscription made, shown in the page's header. */
  subscribed(subscription: { event: string; publicUrl: string }): void;
  /** `--events`: an event answered 200 but left out, shown as ignored. */
  ignored(event: AcceptedEvent): void;
  close(): Promise<void>;
}

/** What POST /replay answers. */
export interface ReplayAnswer {
  ok: boolean;
  url?: string;
  status?: number;
  durationMs?: number;
  /** `200 OK in 12 ms`, or what went wrong. */
  text: string;
  /** The start of the answer's body. */
  answer?: string;
  error?: string;
}

/** Starts the inspector (history read from the log first); a busy port is a usage error naming --inspect. */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const history = new InspectorHistory(options.redactor, options.limits);
  if (options.logFile !== undefined) {
    // A log that cannot be read starts an empty history; opening it for --log next reports why.
    const lines = await readLogTail(options.logFile, options.limits?.requests ?? MAX_REQUESTS).catch(
      () => [],
    );
    for (const line of lines) history.addLogged(line);
  }
  const site = new InspectorSite(options, history);
  const server: Server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) =>
    site.handle(req, res),
  );
  server.maxConnections = 64;
  server.on('clientError', (_error, socket: Socket) => socket.destroy());
  await listenOn(server, options.port);
  const port = (server.address() as AddressInfo).port;
  const access = site.open(port);
  const url = `http://127.0.0.1:${port}/`;
  const heartbeat = setInterval(() => site.ping(), 15_000);
  heartbeat.unref();

  return {
    url,
    openUrl: access.openUrl(url),
    port,
    history,
    accepted: (event) => site.broadcastRequest(history.addAccepted(event)),
    rejected: (rejection) => site.broadcastRequest(history.addRejected(rejection)),
    forwardAttempt(report) {
      const added = history.addAttempt(report);
      if (added) site.broadcast('forward', { seq: added.entry.seq, attempt: added.attempt });
    },
    warn: (text) => site.warn(text),
    tunnel: (tunnel) => site.setTunnel(tunnel),
    subscribed: (subscription) => site.addSubscription(subscription),
    ignored: (event) =>
      site.broadcastRequest(
        history.addRejected({
          receivedAt: event.receivedAt,
          status: 200,
          reason: 'not in --events: answered 200, not logged nor forwarded',
          method: 'POST',
          event: event.event,
          headers: event.headers,
        }),
      ),
    async close() {
      clearInterval(heartbeat);
      site.endStreams();
      server.close();
      server.closeAllConnections();
    },
  };
}

function listenOn(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new UsageError(
              `Port ${port} on 127.0.0.1 is not free for the inspector (${error.code}): pick another with --inspect <port> (0 picks a free one).`,
            )
          : error,
      );
    });
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

/** The inspector's routes and open event streams: each request passes the gate, then its route. */
class InspectorSite {
  private readonly clients = new Set<ServerResponse>();
  private readonly notices: string[] = [];
  private tunnel: { kind: string; publicUrl: string } | null = null;
  private readonly subscriptions: { event: string; publicUrl: string }[] = [];
  private readonly access = new InspectorAccess();
  private port = 0;

  constructor(
    private readonly options: InspectorOptions,
    private readonly history: InspectorHistory,
  ) {
    options.redactor.addSecret(this.access.secret);
  }

  /** Called once the port is known (the `Host` check needs it). */
  open(port: number): InspectorAccess {
    this.port = port;
    return this.access;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== `127.0.0.1:${this.port}` && host !== `localhost:${this.port}`) {
      this.deny(
        req,
        res,
        `Host ${JSON.stringify(req.headers.host ?? '')} is not this inspector: open the address listen printed (http://127.0.0.1:${this.port}/?token=…).`,
      );
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) {
      this.deny(req, res, 'Requests from other origins are refused.');
      return;
    }
    const target = new URL(req.url ?? '/', 'http://inspector');
    const route = `${req.method} ${target.pathname}`;
    const opening = `Open the inspector with the address listen printed on its terminal (http://127.0.0.1:${this.port}/?token=…).`;
    if (route === 'GET /' || route === 'HEAD /') {
      // The page is served without the secret (it holds none: a reload works); a wrong one in the
      // address is refused, so that it never replaces the right one the tab keeps.
      if (target.searchParams.has('token') && !this.access.showsSecret(target.searchParams))
        this.deny(req, res, opening);
      else sendPage(res, PAGE);
      return;
    }
    if (!this.access.carriesSecret(req)) {
      this.deny(req, res, opening);
      return;
    }
    this.route(req, res, route, target);
  }

  private route(req: IncomingMessage, res: ServerResponse, route: string, target: URL): void {
    if (route === 'GET /events') this.serveEvents(res);
    else if (route === 'GET /command') this.serveCommand(res, target.searchParams);
    else if (route === 'GET /body') this.serveBody(res, target.searchParams);
    else if (route === 'POST /replay') void this.serveReplay(req, res);
    else if (ROUTES.includes(target.pathname)) {
      req.resume();
      refuse(res, 405, `${req.method} is not allowed here.`, {
        allow: target.pathname === '/replay' ? 'POST' : 'GET',
      });
    } else {
      req.resume();
      refuse(res, 404, 'Not found.');
    }
  }

  private deny(req: IncomingMessage, res: ServerResponse, text: string): void {
    req.resume();
    refuse(res, 403, text);
  }

  broadcast(name: string, data: unknown): void {
    if (this.clients.size === 0) return;
    const message = `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of this.clients) {
      if (client.writableLength > MAX_CLIENT_BACKLOG) {
        this.clients.delete(client);
        client.destroy();
        continue;
      }
      client.write(message);
    }
  }

  /** A request as the page shows it, with where Replay sends it by default (`forwardTarget`, or null). */
  private viewOf(entry: Parameters<InspectorHistory['view']>[0]) {
    return { ...this.history.view(entry), forwardTarget: this.options.forwardTarget(entry.event) ?? null };
  }

  broadcastRequest(entry: Parameters<InspectorHistory['view']>[0]): void {
    if (this.clients.size > 0) this.broadcast('request', this.viewOf(entry));
  }

  warn(text: string): void {
    const shown = this.options.redactor.redact(text);
    if (this.notices.length < MAX_NOTICES) this.notices.push(shown);
    this.broadcast('notice', { level: 'warning', text: shown });
  }

  setTunnel(tunnel: { kind: string; publicUrl: string }): void {
    this.tunnel = { kind: tunnel.kind, publicUrl: tunnel.publicUrl };
    this.broadcast('tunnel', this.tunnel);
  }

  addSubscription(subscription: { event: string; publicUrl: string }): void {
    this.subscriptions.push({ event: subscription.event, publicUrl: subscription.publicUrl });
    this.broadcast('subscriptions', this.subscriptions);
  }

  ping(): void {
    for (const client of this.clients) client.write(': ping\n\n');
  }

  endStreams(): void {
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private serveEvents(res: ServerResponse): void {
    if (this.clients.size >= MAX_CLIENTS) {
      refuse(res, 503, 'Too many inspector pages are open.');
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    let text = `retry: 1000\n\nevent: hello\ndata: ${JSON.stringify({
      forwarding: this.options.forwarding,
      logFile: this.options.logFile ?? null,
      maxRequests: this.options.limits?.requests ?? MAX_REQUESTS,
      notices: this.notices.map((notice) => ({ level: 'warning', text: notice })),
      tunnel: this.tunnel,
      subscriptions: this.subscriptions,
    })}\n\n`;
    for (const entry of this.history.all())
      text += `event: request\ndata: ${JSON.stringify(this.viewOf(entry))}\n\n`;
    res.write(text);
    this.clients.add(res);
    res.on('close', () => this.clients.delete(res));
  }

  private serveCommand(res: ServerResponse, query: URLSearchParams): void {
    const entry = this.history.get(Number(query.get('seq')));
    if (entry === undefined) {
      sendJson(res, 404, { error: `Request #${query.get('seq')} is no longer in the history.` });
      return;
    }
    sendJson(
      res,
      200,
      copyCommand(this.history.recordOf(entry), {
        logFile: this.options.logFile,
        url: query.get('url')?.trim() || this.options.forwardTarget(entry.event),
        seq: entry.seq,
        program: this.options.program,
        keyProfile: this.options.keyProfile?.(),
      }),
    );
  }

  /** The body of an accepted request as a file (for `webhooks trigger --data`). */
  private serveBody(res: ServerResponse, query: URLSearchParams): void {
    const entry = this.history.get(Number(query.get('seq')));
    const record = entry && this.history.recordOf(entry);
    if (entry === undefined || record === undefined) {
      refuse(res, 404, `Request #${query.get('seq')} has no recorded body here.`);
      return;
    }
    const bytes = originalBodyBytes(record);
    const text = bytes.toString('utf8');
    const shown = this.options.redactor.redact(text);
    const out = shown === text ? bytes : Buffer.from(shown);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-security-policy': "default-src 'none'",
      'content-type': 'application/json',
      'content-disposition': `attachment; filename="${bodyFileName(record, entry.seq)}"`,
      'content-length': out.length,
    });
    res.end(out);
  }

  private async serveReplay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      req.resume();
      refuse(res, 415, 'Replay takes a JSON body: {"seq": 1, "url": "…"}.');
      return;
    }
    let body: { seq?: unknown; url?: unknown };
    try {
      body = JSON.parse(await readBody(req, MAX_POST_BYTES)) as typeof body;
    } catch (error) {
      sendJson(res, 400, { ok: false, text: `Not a replay request: ${(error as Error).message}` });
      return;
    }
    const [status, answer] = await this.replay(body);
    sendJson(res, status, answer);
  }

  /** Replays one request: the HTTP status of the answer (200 once sent, 502 unreachable, 4xx refused) and its JSON. */
  private async replay(body: { seq?: unknown; url?: unknown }): Promise<[number, ReplayAnswer]> {
    const entry = typeof body.seq === 'number' ? this.history.get(body.seq) : undefined;
    if (entry === undefined) return [404, failed(`Request #${String(body.seq)} is not in the history.`)];
    const record = this.history.recordOf(entry);
    if (record === undefined)
      return [
        409,
        failed(`Request #${entry.seq} was refused by listen (${entry.status}): there is nothing to replay.`),
      ];
    const typed = typeof body.url === 'string' ? body.url.trim() : '';
    const forwardTarget = this.options.forwardTarget(entry.event);
    if (typed === '' && forwardTarget === undefined)
      return [
        400,
        failed(
          this.options.forwarding.length === 0
            ? 'listen has no --forward-to: type the URL to replay to.'
            : `listen forwards no ${entry.event ?? 'event without X-WEBHOOK-EVENT'} (no --forward-to for it): type the URL to replay to.`,
        ),
      ];
    let url: URL;
    try {
      url = typed === '' ? new URL(forwardTarget!) : parseHttpUrl(typed, 'The replay URL', EXAMPLE_APP_URL);
    } catch (error) {
      return [400, failed((error as Error).message)];
    }
    try {
      const result = await sendRecordedEvent(record, {
        url,
        key: this.options.key(),
        timeoutMs: REPLAY_TIMEOUT_MS,
        maxResponseBytes: REPLAY_ANSWER_BYTES,
      });
      const answer = this.options.redactor.redactBody(result.bodyText);
      const text = answerLine(result.status, result.durationMs);
      const ok = isAccepted(result.status);
      return [200, { ok, url: url.href, status: result.status, durationMs: result.durationMs, text, answer }];
    } catch (error) {
      const why = describeNetworkError(error);
      return [502, { ok: false, url: url.href, text: `failed: ${why}`, error: why }];
    }
  }
}

function failed(text: string): ReplayAnswer {
  return { ok: false, text, error: text };
}
