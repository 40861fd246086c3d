/**
 * The local webhook receiver behind `listen`: a node:http server that checks each request in a
 * fixed order and answers with a precise status, like octokit/webhooks.js's middleware.
 *
 *   1. method   — anything but POST: 405 (with `Allow: POST`)
 *   2. path     — not the served path: 404 (the query string is ignored)
 *   3. key      — `X-WEBHOOK-KEY` missing, repeated, or not the key: 401 naming only the header
 *                 (missing or wrong); the exact reason goes to `onRejected`, the operator's console
 *   4. loop     — a request this listen run forwarded itself (its id in `X-Ordercli-Forwarded-By`,
 *                 self-forward.ts): answered 200, neither recorded nor counted (`onLooped`)
 *   5. size     — a body over 1 MiB: 413 (from `Content-Length` before reading, or while reading)
 *   6. body     — empty or not JSON: 400
 *   7. record   — the accepted event is made durable (`persist`: log, forwarding queue); if that
 *                 fails the answer is 500, so the sender keeps the notification and retries
 *   8. 200
 *
 * Steps 1 to 5 are `REQUEST_CHECKS`, an ordered list of small functions run before the body is
 * read (with the 503s of a receiver that is stopping, first, or still waiting for its key, before
 * the key): a new header check is one entry there. The key is checked before the body is read, so
 * an unauthenticated client cannot make the receiver buffer anything. Rejected requests are
 * answered with `Connection: close`.
 *
 * Abuse: header and whole-request time-outs close slow or half-open clients (408), malformed HTTP
 * gets 400/431 from the `clientError` handler, bodies are bounded, and so are connections.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { statusText } from '../core/http-status.js';
import { isoNow } from '../io/iso-time.js';
import { formatEventLine, recordedHeaders } from './event-record.js';
import { carriesHop, FORWARDED_BY_HEADER } from './self-forward.js';
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
  /** Its entry in the forwarding queue of `forwardTarget`, once queued (`listen --forward-to`). */
  forwardSeq?: number;
  /** Where that queue forwards (each --forward-to target has its own queue and numbering). */
  forwardTarget?: string;
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
  /**
   * `listen --events`: whether an event (its X-WEBHOOK-EVENT) is one to accept. Another is answered
   * 200 (the service did nothing wrong) but neither recorded nor accepted: `onIgnored` is told.
   */
  accepts?: (event: string | null) => boolean;
  onIgnored?: (event: AcceptedEvent) => void;
  /**
   * This run's id in the hop header of what it forwards: a request carrying it came back through a
   * forwarding loop, and is answered 200 but neither recorded nor accepted (`onLooped` is told).
   */
  hopId?: string;
  onLooped?: (event: string | null) => void;
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
  /** Events answered 200 but not accepted (`accepts` said no). */
  readonly ignored: { count: number };
  setVerifier(verifier: WebhookKeyVerifier | 'off'): void;
  /**
   * Stops accepting (later requests on open connections get 503), waits for the requests in
   * flight to be answered (at most `graceMs`), then closes every connection.
   */
  close(graceMs?: number): Promise<void>;
}

// A string, not a Buffer: Node then sends head and body in one write instead of a writev.
const OK_BODY = '{"received":true}\n';

/** What the checks of a request read of the receiver. */
interface ReceiverState {
  /** False once `close()` has begun. */
  readonly accepting: boolean;
  /** The served path, normalized (`normalizePath`). */
  readonly servedPath: string;
  readonly verifier: WebhookKeyVerifier | 'off' | 'pending';
  readonly maxBodyBytes: number;
  readonly hopId: string | undefined;
}

/** Why a request is refused, as its answer and the operator's console say it. */
interface Refusal {
  status: number;
  /** What the caller is told (the answer's `error`). */
  reason: string;
  /** Added to the answer's headers (`Allow`, `Retry-After`). */
  headers?: Record<string, string>;
  /** What the operator's console is told instead of `reason` (a refused key's diagnosis). */
  diagnosis?: string;
  /** Not a refusal: a request this run forwarded, come back; answered 200 and dropped. */
  looped?: true;
}

/** One check of a request before its body is read: a refusal, or undefined to go on. */
type RequestCheck = (req: IncomingMessage, receiver: ReceiverState) => Refusal | undefined;

/** 503 once stopping: requests still arriving on open connections. */
const refuseWhileStopping: RequestCheck = (_req, { accepting }) =>
  accepting ? undefined : { status: 503, reason: 'listen is stopping', headers: { 'retry-after': '5' } };

/** 405: notifications are POSTs. */
const checkMethod: RequestCheck = (req) =>
  req.method === 'POST'
    ? undefined
    : {
        status: 405,
        reason: `method ${req.method} not allowed (notifications are POSTs)`,
        headers: { allow: 'POST' },
      };

/** 404: only the served path (the query string is ignored). */
const checkPath: RequestCheck = (req, { servedPath }) => {
  const path = pathOf(req.url);
  if (normalizePath(path) === servedPath) return undefined;
  return { status: 404, reason: `path ${path} is not served (listen serves ${servedPath})` };
};

/** 503 until the key is known (`listen --subscribe` learns it after binding). */
const refuseUntilReady: RequestCheck = (_req, { verifier }) =>
  verifier === 'pending'
    ? { status: 503, reason: 'listen is not ready yet', headers: { 'retry-after': '1' } }
    : undefined;

/** 401: X-WEBHOOK-KEY missing, repeated or wrong; the caller learns only which header. */
const checkKey: RequestCheck = (req, { verifier }) => {
  if (verifier === 'off' || verifier === 'pending') return undefined;
  const verdict = verifier.verify(req.rawHeaders);
  if (verdict.ok) return undefined;
  return { status: 401, reason: verdict.message, diagnosis: verdict.diagnosis };
};

/** 200 and dropped: a request this listen run forwarded, come back to it (a forwarding loop). */
const answerOwnForward: RequestCheck = (req, { hopId }) =>
  hopId !== undefined && carriesHop(req.headers[FORWARDED_BY_HEADER], hopId)
    ? { status: 200, reason: 'forwarded by this listener: a forwarding loop', looped: true }
    : undefined;

/** 413 from `Content-Length`, before anything is read (a streamed body is bounded as it is read). */
const checkDeclaredSize: RequestCheck = (req, { maxBodyBytes }) => {
  const declared = req.headers['content-length'];
  if (declared === undefined || Number(declared) <= maxBodyBytes) return undefined;
  return { status: 413, reason: `body of ${declared} bytes is over the limit of ${maxBodyBytes} bytes` };
};

/**
 * The checks of a request before its body is read, in this order; the first refusal answers it.
 * The key comes before anything reads the body, so an unauthenticated client cannot make the
 * receiver buffer anything. A new header check is one entry here (docs/ENGINEERING.md).
 */
const REQUEST_CHECKS: readonly RequestCheck[] = [
  refuseWhileStopping,
  checkMethod,
  checkPath,
  refuseUntilReady,
  checkKey,
  answerOwnForward,
  checkDeclaredSize,
];

/** The body as JSON, or the 400 of an empty or malformed one. */
function parseBody(text: string): { body: unknown } | { refusal: Refusal } {
  try {
    return { body: JSON.parse(text) };
  } catch (error) {
    const reason =
      text.trim() === ''
        ? 'body is empty (a notification carries JSON)'
        : `body is not JSON: ${(error as Error).message}`;
    return { refusal: { status: 400, reason } };
  }
}

/** The status and reason of malformed HTTP (`clientError`): 431, 408 or 400. */
function clientErrorRefusal(error: NodeJS.ErrnoException): Refusal {
  const code = error.code ?? '';
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, reason: 'request headers too large' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, reason: 'request not completed in time (slow or stalled client)' };
  }
  return { status: 400, reason: `malformed HTTP request (${code || error.message})` };
}

/** The receiver's requests: checked, read, recorded and answered, with their counts. */
class RequestHandler implements ReceiverState {
  readonly counts = new Map<number, number>();
  readonly ignored = { count: 0 };
  accepting = true;
  private inFlight = 0;
  private drained: (() => void) | undefined;

  constructor(
    private readonly options: ReceiverOptions,
    readonly servedPath: string,
    readonly maxBodyBytes: number,
    public verifier: WebhookKeyVerifier | 'off' | 'pending',
  ) {}

  get hopId(): string | undefined {
    return this.options.hopId;
  }

  /** One request: the checks in order, then its body, then its record and the 200. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    this.inFlight++;
    res.on('close', this.finish);
    for (const check of REQUEST_CHECKS) {
      const refusal = check(req, this);
      if (refusal?.looped) {
        this.dropLooped(req, res);
        return;
      }
      if (refusal !== undefined) {
        this.refuse(req, res, refusal);
        return;
      }
    }
    this.readBody(req, res);
  }

  /** Malformed HTTP: a bare answer on the socket, which then closes. */
  clientError(error: NodeJS.ErrnoException, socket: Socket): void {
    const code = error.code ?? '';
    // A client that vanished is not worth a line.
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, reason } = clientErrorRefusal(error);
    this.count(status);
    this.options.onRejected?.({ receivedAt: new Date().toISOString(), status, reason });
    socket.end(`HTTP/1.1 ${status} ${statusText(status)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.destroySoon();
  }

  /** Resolves once no request is in flight, or after `graceMs`. */
  async drain(graceMs: number): Promise<void> {
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      this.drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private readonly finish = (): void => {
    this.inFlight--;
    if (this.inFlight === 0) this.drained?.();
  };

  private count(status: number): void {
    this.counts.set(status, (this.counts.get(status) ?? 0) + 1);
  }

  /** Reads the body, refused with 413 as soon as it is over the limit, then accepts it. */
  private readBody(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > this.maxBodyBytes) {
        refused = true;
        chunks.length = 0;
        this.refuse(req, res, {
          status: 413,
          reason: `body is over the limit of ${this.maxBodyBytes} bytes`,
        });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      this.accept(req, res, raw);
    });
  }

  /** A body read whole: 400 unless JSON, then made durable (`persist`; 500 if that fails), then 200. */
  private accept(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
    const receivedAt = isoNow();
    const text = raw.toString('utf8');
    const parsed = parseBody(text);
    if ('refusal' in parsed) {
      this.refuse(req, res, parsed.refusal, text);
      return;
    }
    const headers = recordedHeaders(req.rawHeaders);
    const event = headers[WEBHOOK_EVENT_HEADER] ?? null;
    const line = formatEventLine(receivedAt, event, headers, raw, text, parsed.body);
    const accepted: AcceptedEvent = { receivedAt, event, headers, body: parsed.body, line, raw };
    if (this.options.accepts && !this.options.accepts(event)) {
      this.ignore(res, accepted);
      return;
    }
    const { persist } = this.options;
    if (!persist) {
      this.ok(res, accepted);
      return;
    }
    persist(accepted, (error) => {
      if (error)
        this.refuse(req, res, { status: 500, reason: `could not record the event: ${error.message}` });
      else this.ok(res, accepted);
    });
  }

  /** 200 for an event `--events` leaves out: nothing recorded, nothing forwarded. */
  private ignore(res: ServerResponse, event: AcceptedEvent): void {
    this.ignored.count++;
    this.answerOk(res);
    this.options.onIgnored?.(event);
  }

  /** 200 for a request this run forwarded, once its body is read and dropped: nothing recorded nor counted. */
  private dropLooped(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    req.on('end', () => {
      this.answerOk(res);
      this.options.onLooped?.(headerValue(req, WEBHOOK_EVENT_HEADER));
    });
  }

  private ok(res: ServerResponse, accepted: AcceptedEvent): void {
    this.count(200);
    this.answerOk(res);
    this.options.onAccepted?.(accepted);
  }

  private answerOk(res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': OK_BODY.length,
      // Once stopping, the connection is not kept for another request.
      ...(this.accepting ? {} : { connection: 'close' }),
    });
    res.end(OK_BODY);
  }

  /** Answers a refusal and tells `onRejected`; `body` is the body read, for `describeRejections`. */
  private refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal, body?: string): void {
    const { status, reason } = refusal;
    this.count(status);
    const payload = JSON.stringify({ status, error: reason });
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      connection: 'close',
      ...refusal.headers,
    });
    res.end(payload);
    // Whatever body is still coming is read and dropped (so the client sees the answer rather than a
    // reset); the connection closes once the answer is out.
    req.resume();
    const rejection: Rejection = {
      receivedAt: new Date().toISOString(),
      status,
      reason: refusal.diagnosis ?? reason,
      method: req.method,
      path: pathOf(req.url),
      event: headerValue(req, WEBHOOK_EVENT_HEADER),
    };
    if (this.options.describeRejections) {
      rejection.headers = recordedHeaders(req.rawHeaders);
      if (body !== undefined) rejection.body = body;
    }
    this.options.onRejected?.(rejection);
  }
}

/** Starts the receiver; resolves once it listens. */
export async function startWebhookReceiver(options: ReceiverOptions): Promise<WebhookReceiver> {
  const servedPath = normalizePath(options.path);
  const handler = new RequestHandler(
    options,
    servedPath,
    options.maxBodyBytes ?? MAX_BODY_BYTES,
    options.verifier,
  );
  const server: Server = createServer(
    {
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: 5_000,
      // How often time-outs are checked (Node's default, 30 s, would let a slow client linger).
      connectionsCheckingInterval: 1_000,
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => handler.handle(req, res),
  );
  server.maxHeadersCount = 100;
  server.maxConnections = options.maxConnections ?? 1024;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    handler.clientError(error, socket),
  );

  await listen(server, options.port, options.host);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const closed = new Promise<void>((resolve) => server.once('close', () => resolve()));

  return {
    url: `http://${host}:${address.port}${servedPath}`,
    port: address.port,
    counts: handler.counts,
    ignored: handler.ignored,
    setVerifier(next) {
      handler.verifier = next;
    },
    async close(graceMs = 10_000): Promise<void> {
      if (!handler.accepting) return closed;
      handler.accepting = false;
      server.close();
      server.closeIdleConnections();
      await handler.drain(graceMs);
      server.closeAllConnections();
      await closed;
    },
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
