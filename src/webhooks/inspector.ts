/**
 * `listen --inspect`: a second HTTP server, on 127.0.0.1 only, serving one page that shows every
 * request `listen` receives as it arrives (server-sent events), with Replay and Copy as command.
 *
 * Safe by construction (the page and its API are for this machine's browser only):
 * - bound to 127.0.0.1 whatever `--host` says, on its own port (the receiver's answers are unchanged);
 * - any request whose `Host` is not `127.0.0.1:<port>` or `localhost:<port>` is refused (403), so a
 *   page elsewhere cannot reach it through DNS rebinding;
 * - POST /replay needs the per-run token the page holds (`X-Ordercli-Token`), a JSON body, and an
 *   `Origin` (when sent) that is the page's own; no CORS header is ever sent, so other origins can
 *   read neither the page, its token, nor the event stream;
 * - every answer carries a Content-Security-Policy (scripts and styles only with the answer's
 *   nonce), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `Cache-Control:
 *   no-store` and may not be framed;
 * - the webhook key never reaches the page: headers are shown redacted and Replay adds the key back
 *   here, at sending. The token is not in the printed address.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { UsageError } from '../core/errors.js';
import { describeNetworkError } from '../core/network-error.js';
import type { Redactor } from '../core/redact.js';
import { parseHttpUrl } from '../core/url.js';
import { type EventRecord, originalBodyBytes } from './event-record.js';
import type { ForwardAttempt } from './forward-sender.js';
import { InspectorHistory, MAX_REQUESTS, readLogTail } from './inspector-history.js';
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
const EXAMPLE_APP_URL = 'http://127.0.0.1:3000/webhooks';

export interface InspectorOptions {
  /** 0 picks a free port. */
  port: number;
  /** Masks the key, the API token and secret headers in everything the page receives. */
  redactor: Redactor;
  /** Where Replay sends when the page gives no URL (`--forward-to`). */
  forwardTarget: string | undefined;
  /** The `--log` file: its last events are the history at start, and Copy as command names it. */
  logFile: string | undefined;
  /** The key Replay adds back (read at each replay: `--subscribe` may learn it after start). */
  key: () => string | undefined;
  /** How Copy as command writes ordercli (`ordercli`, or `npx ordercli` under npx); default `ordercli`. */
  program?: string;
  /** History bounds (tests use small ones). */
  limits?: { requests: number; bytes: number };
}

export interface Inspector {
  /** `http://127.0.0.1:<port>/`: carries no secret. */
  readonly url: string;
  readonly port: number;
  readonly history: InspectorHistory;
  accepted(event: AcceptedEvent): void;
  rejected(rejection: Rejection): void;
  forwardAttempt(attempt: ForwardAttempt): void;
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
  const token = randomBytes(32).toString('base64url');
  options.redactor.addSecret(token);
  const clients = new Set<ServerResponse>();
  let port = options.port;

  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];

  const broadcast = (name: string, data: unknown): void => {
    if (clients.size === 0) return;
    const message = `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const client of clients) {
      if (client.writableLength > MAX_CLIENT_BACKLOG) {
        clients.delete(client);
        client.destroy();
        continue;
      }
      client.write(message);
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts().includes(host)) {
      refuse(
        res,
        403,
        `Host ${JSON.stringify(req.headers.host ?? '')} is not this inspector: open it at http://127.0.0.1:${port}/.`,
      );
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${host}`) {
      refuse(res, 403, 'Requests from other origins are refused.');
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    const route = `${req.method} ${path}`;
    if (route === 'GET /' || route === 'HEAD /') servePage(res, token);
    else if (route === 'GET /events') serveEvents(res);
    else if (route === 'GET /command') serveCommand(req, res);
    else if (route === 'GET /body') serveBody(req, res);
    else if (route === 'POST /replay') void serveReplay(req, res);
    else if (['/', '/events', '/command', '/body', '/replay'].includes(path ?? '')) {
      req.resume();
      refuse(res, 405, `${req.method} is not allowed here.`, { allow: path === '/replay' ? 'POST' : 'GET' });
    } else {
      req.resume();
      refuse(res, 404, 'Not found.');
    }
  };

  const serveEvents = (res: ServerResponse): void => {
    if (clients.size >= MAX_CLIENTS) {
      refuse(res, 503, 'Too many inspector pages are open.');
      return;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    let text = `retry: 1000\n\nevent: hello\ndata: ${JSON.stringify({
      forwardTarget: options.forwardTarget ?? null,
      logFile: options.logFile ?? null,
      maxRequests: options.limits?.requests ?? MAX_REQUESTS,
    })}\n\n`;
    for (const entry of history.all())
      text += `event: request\ndata: ${JSON.stringify(history.view(entry))}\n\n`;
    res.write(text);
    clients.add(res);
    res.on('close', () => clients.delete(res));
  };

  const serveCommand = (req: IncomingMessage, res: ServerResponse): void => {
    const query = new URL(req.url ?? '/', 'http://inspector').searchParams;
    const entry = history.get(Number(query.get('seq')));
    if (entry === undefined) {
      sendJson(res, 404, { error: `Request #${query.get('seq')} is no longer in the history.` });
      return;
    }
    sendJson(
      res,
      200,
      copyCommand(history.recordOf(entry), {
        logFile: options.logFile,
        url: query.get('url')?.trim() || options.forwardTarget,
        seq: entry.seq,
        program: options.program,
      }),
    );
  };

  /** The body of an accepted request as a file (for `webhooks trigger --data`). */
  const serveBody = (req: IncomingMessage, res: ServerResponse): void => {
    const query = new URL(req.url ?? '/', 'http://inspector').searchParams;
    const entry = history.get(Number(query.get('seq')));
    const record = entry && history.recordOf(entry);
    if (entry === undefined || record === undefined) {
      refuse(res, 404, `Request #${query.get('seq')} has no recorded body here.`);
      return;
    }
    const bytes = originalBodyBytes(record);
    const text = bytes.toString('utf8');
    const shown = options.redactor.redact(text);
    const out = shown === text ? bytes : Buffer.from(shown);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-security-policy': "default-src 'none'",
      'content-type': 'application/json',
      'content-disposition': `attachment; filename="${bodyFileName(record, entry.seq)}"`,
      'content-length': out.length,
    });
    res.end(out);
  };

  const serveReplay = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!tokenMatches(req.headers['x-ordercli-token'], token)) {
      req.resume();
      refuse(res, 403, 'Replay needs the token of the inspector page (X-Ordercli-Token).');
      return;
    }
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
    const [status, answer] = await replay(body);
    sendJson(res, status, answer);
  };

  /** Replays one request: the HTTP status of the answer (200 once sent, 502 unreachable, 4xx refused) and its JSON. */
  const replay = async (body: { seq?: unknown; url?: unknown }): Promise<[number, ReplayAnswer]> => {
    const entry = typeof body.seq === 'number' ? history.get(body.seq) : undefined;
    if (entry === undefined) return [404, failed(`Request #${String(body.seq)} is not in the history.`)];
    const record = history.recordOf(entry);
    if (record === undefined)
      return [
        409,
        failed(`Request #${entry.seq} was refused by listen (${entry.status}): there is nothing to replay.`),
      ];
    const typed = typeof body.url === 'string' ? body.url.trim() : '';
    if (typed === '' && options.forwardTarget === undefined)
      return [400, failed('listen has no --forward-to: type the URL to replay to.')];
    let url: URL;
    try {
      url =
        typed === ''
          ? new URL(options.forwardTarget!)
          : parseHttpUrl(typed, 'The replay URL', EXAMPLE_APP_URL);
    } catch (error) {
      return [400, failed((error as Error).message)];
    }
    try {
      const result = await sendRecordedEvent(record, {
        url,
        key: options.key(),
        timeoutMs: REPLAY_TIMEOUT_MS,
        maxResponseBytes: REPLAY_ANSWER_BYTES,
      });
      return [
        200,
        {
          ok: isAccepted(result.status),
          url: url.href,
          status: result.status,
          durationMs: result.durationMs,
          text: answerLine(result.status, result.durationMs),
          answer: options.redactor.redactBody(result.bodyText),
        },
      ];
    } catch (error) {
      const why = describeNetworkError(error);
      return [502, { ok: false, url: url.href, text: `failed: ${why}`, error: why }];
    }
  };

  const server: Server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, handle);
  server.maxConnections = 64;
  server.on('clientError', (_error, socket: Socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE' || error.code === 'EACCES'
          ? new UsageError(
              `Port ${options.port} on 127.0.0.1 is not free for the inspector (${error.code}): pick another with --inspect <port> (0 picks a free one).`,
            )
          : error,
      );
    });
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  port = address.port;
  const heartbeat = setInterval(() => {
    for (const client of clients) client.write(': ping\n\n');
  }, 15_000);
  heartbeat.unref();

  return {
    url: `http://${address.address}:${port}/`,
    port,
    history,
    accepted(event) {
      const entry = history.addAccepted(event);
      if (clients.size > 0) broadcast('request', history.view(entry));
    },
    rejected(rejection) {
      const entry = history.addRejected(rejection);
      if (clients.size > 0) broadcast('request', history.view(entry));
    },
    forwardAttempt(report) {
      const added = history.addAttempt(report);
      if (added) broadcast('forward', { seq: added.entry.seq, attempt: added.attempt });
    },
    async close() {
      clearInterval(heartbeat);
      for (const client of clients) client.end();
      clients.clear();
      server.close();
      server.closeAllConnections();
    },
  };
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function servePage(res: ServerResponse, token: string): void {
  const nonce = randomBytes(16).toString('base64');
  const html = PAGE.replaceAll('__NONCE__', nonce).replace('__TOKEN__', token);
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-security-policy': contentSecurityPolicy(nonce),
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
  });
  res.end(res.req.method === 'HEAD' ? undefined : html);
}

function refuse(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...extra,
    'content-security-policy': "default-src 'none'",
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text) + 1,
    connection: 'close',
  });
  res.end(`${text}\n`);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-security-policy': "default-src 'none'",
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function failed(text: string): ReplayAnswer {
  return { ok: false, text, error: text };
}

function tokenMatches(given: string | string[] | undefined, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`body over ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The command line that sends the same from a terminal: the key by its variable, never its value. */
export function copyCommand(
  record: EventRecord | undefined,
  where: {
    logFile: string | undefined;
    url: string | undefined;
    seq: number;
    program?: string;
  },
): { command: string; note: string } {
  const program = where.program ?? 'ordercli';
  if (record === undefined)
    return { command: '', note: 'A refused request was not recorded: there is nothing to send again.' };
  const url = where.url ?? EXAMPLE_APP_URL;
  const urlNote =
    where.url === undefined ? ` Replace ${EXAMPLE_APP_URL} with your application's address.` : '';
  const key = '--key "$ORDERCLI_WEBHOOK_KEY"';
  const event = record.event ?? '';
  if (where.logFile !== undefined && record.event !== null) {
    // --received-at picks this one line of the log (the time is recorded to the millisecond).
    return {
      command: `${program} webhooks replay ${shellQuote(where.logFile)} --url ${shellQuote(url)} ${key} --event ${shellQuote(event)} --received-at ${shellQuote(record.receivedAt)}`,
      note: `The same headers and body bytes as Replay.${urlNote}`,
    };
  }
  const file = bodyFileName(record, where.seq);
  return {
    command: `${program} webhooks trigger ${shellQuote(event || 'EVENT')} --url ${shellQuote(url)} ${key} --data ${shellQuote(file)}`,
    note: `Save the body as ${file} first (Download body). trigger sends the body bytes with the standard headers; with --log, replay would send the recorded headers too.${urlNote}`,
  };
}

/** The file name Download body gives and the trigger command reads: `<event>-<seq>.json`. */
function bodyFileName(record: EventRecord, seq: number): string {
  return `${(record.event || 'event').replace(/[^A-Za-z0-9_.-]/g, '_')}-${seq}.json`;
}

/** A word as a POSIX shell reads it: unquoted when safe, else in single quotes. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
