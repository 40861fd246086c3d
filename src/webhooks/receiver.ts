/**
 * The local webhook receiver behind `listen`: a node:http server that checks each request in a
 * fixed order and answers with a precise status, like octokit/webhooks.js's middleware.
 *
 *   1. method   — anything but POST: 405 (with `Allow: POST`)
 *   2. path     — not the served path: 404 (the query string is ignored)
 *   3. key      — `X-WEBHOOK-KEY` missing, repeated, or not the key: 401 naming only the header
 *                 (missing or wrong); the exact reason goes to `onRejected`, the operator's console
 *   4. size     — a body over 1 MiB: 413 (from `Content-Length` before reading, or while reading)
 *   5. body     — empty or not JSON: 400
 *   6. record   — the accepted event is made durable (`persist`: log, forwarding queue); if that
 *                 fails the answer is 500, so the sender keeps the notification and retries
 *   7. 200
 *
 * The key is checked before the body is read, so an unauthenticated client cannot make the
 * receiver buffer anything. Rejected requests are answered with `Connection: close`.
 *
 * Abuse: header and whole-request time-outs close slow or half-open clients (408), malformed HTTP
 * gets 400/431 from the `clientError` handler, bodies are bounded, and so are connections.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { statusText } from '../core/http-status.js';
import { isoNow } from '../io/iso-time.js';
import { formatEventLine, recordedHeaders } from './event-record.js';
import { WEBHOOK_EVENT_HEADER, type WebhookKeyVerifier } from './verify.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** An accepted notification, built once as the receiver hands it on. */
export interface AcceptedEvent {
  receivedAt: string;
  event: string | null;
  /** As recorded (`recordedHeaders`): lower-case names, the key redacted. */
  headers: Record<string, string>;
  body: unknown;
  /** The event as one JSON line (`formatEventLine`): what the log holds and `--json` prints. */
  line: string;
  /** The body bytes exactly as received. */
  raw: Buffer;
  /** Its entry in the forwarding queue, once queued (`listen --forward-to`). */
  forwardSeq?: number;
}

export interface Rejection {
  receivedAt: string;
  status: number;
  /** For the operator: as precise as it gets (for a 401, more than the caller is told). */
  reason: string;
  method?: string;
  path?: string;
  event?: string | null;
  /** With `describeRejections`: the request's headers as recorded (the key redacted). */
  headers?: Record<string, string>;
  /** With `describeRejections`: the body of a 400 (not JSON), as text. */
  body?: string;
}

export interface ReceiverOptions {
  host: string;
  port: number;
  /** The one path notifications are accepted on, e.g. `/` or `/hooks/orders`. */
  path: string;
  /**
   * Checks `X-WEBHOOK-KEY`; `off` accepts any request (`--no-verify`); `pending` answers 503 until
   * `setVerifier` is called (`listen --subscribe` learns the key from the service after binding).
   */
  verifier: WebhookKeyVerifier | 'off' | 'pending';
  maxBodyBytes?: number;
  /** Makes an accepted event durable, then calls `done`; the 200 is sent only after `done()`. */
  persist?: (event: AcceptedEvent, done: (error?: Error) => void) => void;
  /** Called after the 200 has been written. */
  onAccepted?: (event: AcceptedEvent) => void;
  /** Called for every refused request (and malformed HTTP). */
  onRejected?: (rejection: Rejection) => void;
  /** Rejections carry the request's headers and a 400's body (`listen --inspect` shows them). */
  describeRejections?: boolean;
  /** Time allowed for the request headers (default 10 s). */
  headersTimeoutMs?: number;
  /** Time allowed for a whole request, body included (default 30 s). */
  requestTimeoutMs?: number;
  /** Open connections at most (default 1024). */
  maxConnections?: number;
}

export interface WebhookReceiver {
  /** `http://host:port/path` as it listens (the real port when 0 was asked). */
  readonly url: string;
  readonly port: number;
  /** Requests answered, by status. */
  readonly counts: Map<number, number>;
  setVerifier(verifier: WebhookKeyVerifier | 'off'): void;
  /**
   * Stops accepting (later requests on open connections get 503), waits for the requests in
   * flight to be answered (at most `graceMs`), then closes every connection.
   */
  close(graceMs?: number): Promise<void>;
}

// A string, not a Buffer: Node then sends head and body in one write instead of a writev.
const OK_BODY = '{"received":true}\n';

/** Starts the receiver; resolves once it listens. */
export async function startWebhookReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const servedPath = normalizePath(options.path);
  const { persist, onAccepted, onRejected, describeRejections } = options;
  let verifier = options.verifier;
  const counts = new Map<number, number>();
  let accepting = true;
  let inFlight = 0;
  let drained: (() => void) | undefined;

  const count = (status: number): void => {
    counts.set(status, (counts.get(status) ?? 0) + 1);
  };

  const finish = (): void => {
    inFlight--;
    if (inFlight === 0) drained?.();
  };

  const reject = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    reason: string,
    extraHeaders: Record<string, string> = {},
    /** What the operator's console is told instead of `reason` (a refused key's diagnosis). */
    diagnosis?: string,
    /** The body read, for `describeRejections`. */
    body?: string,
  ): void => {
    count(status);
    const payload = JSON.stringify({ status, error: reason });
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      connection: 'close',
      ...extraHeaders,
    });
    res.end(payload);
    // Whatever body is still coming is read and dropped (so the client sees the answer rather than a
    // reset); the connection closes once the answer is out.
    req.resume();
    const rejection: Rejection = {
      receivedAt: new Date().toISOString(),
      status,
      reason: diagnosis ?? reason,
      method: req.method,
      path: pathOf(req.url),
      event: headerValue(req, WEBHOOK_EVENT_HEADER),
    };
    if (describeRejections) {
      rejection.headers = recordedHeaders(req.rawHeaders);
      if (body !== undefined) rejection.body = body;
    }
    onRejected?.(rejection);
  };

  const ok = (res: ServerResponse, accepted: AcceptedEvent): void => {
    count(200);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': OK_BODY.length,
      // Once stopping, the connection is not kept for another request.
      ...(accepting ? {} : { connection: 'close' }),
    });
    res.end(OK_BODY);
    onAccepted?.(accepted);
  };

  const accept = (req: IncomingMessage, res: ServerResponse, raw: Buffer): void => {
    const receivedAt = isoNow();
    const text = raw.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      const reason =
        text.trim() === ''
          ? 'body is empty (a notification carries JSON)'
          : `body is not JSON: ${(error as Error).message}`;
      reject(req, res, 400, reason, {}, undefined, text);
      return;
    }
    const headers = recordedHeaders(req.rawHeaders);
    const event = headers[WEBHOOK_EVENT_HEADER] ?? null;
    const line = formatEventLine(receivedAt, event, headers, raw, text, body);
    const accepted: AcceptedEvent = { receivedAt, event, headers, body, line, raw };
    if (!persist) {
      ok(res, accepted);
      return;
    }
    persist(accepted, (error) => {
      if (error) reject(req, res, 500, `could not record the event: ${error.message}`);
      else ok(res, accepted);
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    inFlight++;
    res.on('close', finish);
    if (!accepting) {
      reject(req, res, 503, 'listen is stopping', { 'retry-after': '5' });
      return;
    }
    if (req.method !== 'POST') {
      reject(req, res, 405, `method ${req.method} not allowed (notifications are POSTs)`, {
        allow: 'POST',
      });
      return;
    }
    const path = pathOf(req.url);
    if (normalizePath(path) !== servedPath) {
      reject(req, res, 404, `path ${path} is not served (listen serves ${servedPath})`);
      return;
    }
    if (verifier === 'pending') {
      reject(req, res, 503, 'listen is not ready yet', { 'retry-after': '1' });
      return;
    }
    if (verifier !== 'off') {
      const verdict = verifier.verify(req.rawHeaders);
      if (!verdict.ok) {
        reject(req, res, 401, verdict.message, {}, verdict.diagnosis);
        return;
      }
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBody) {
      reject(req, res, 413, `body of ${declared} bytes is over the limit of ${maxBody} bytes`);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBody) {
        refused = true;
        chunks.length = 0;
        reject(req, res, 413, `body is over the limit of ${maxBody} bytes`);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      accept(req, res, raw);
    });
  };

  const server: Server = createServer(
    {
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: 5_000,
      // How often time-outs are checked (Node's default, 30 s, would let a slow client linger).
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
    },
    handle,
  );
  server.maxHeadersCount = 100;
  server.maxConnections = options.maxConnections ?? 1024;

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const code = error.code ?? '';
    // A client that vanished is not worth a line.
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const reason =
      status === 408
        ? 'request not completed in time (slow or stalled client)'
        : status === 431
          ? 'request headers too large'
          : `malformed HTTP request (${code || error.message})`;
    count(status);
    onRejected?.({ receivedAt: new Date().toISOString(), status, reason });
    socket.end(`HTTP/1.1 ${status} ${statusText(status)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.destroySoon();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}${servedPath}`;
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));

  return {
    url,
    port: address.port,
    counts,
    setVerifier(next) {
      verifier = next;
    },
    async close(graceMs = 10_000): Promise<void> {
      if (!accepting) return closed;
      accepting = false;
      server.close();
      server.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          drained = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      server.closeAllConnections();
      await closed;
    },
  };
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** `/hooks/` and `/hooks` are the same path; `/` stays `/`. */
function normalizePath(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function headerValue(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}
