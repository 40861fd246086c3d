/**
 * Sends one webhook notification exactly as the service does (interface, "Delivery"): a POST with
 * no credentials, `Content-Type: application/json`, `X-WEBHOOK-EVENT`, `X-WEBHOOK-KEY` and a
 * `User-Agent` of the form `<product>/<version>`. The sandbox's deliveries, `webhooks trigger` and
 * `webhooks replay` all go through `sendNotification`, so a receiver sees the same request from each.
 */
import type { Dispatcher } from 'undici';
import { VERSION } from '../version.js';

/** The product name the sandbox announces in `User-Agent`. */
export const SANDBOX_PRODUCT = 'ordercli-sandbox';
/** Default per-notification time-out: a receiver should answer quickly and do its work later. */
export const DEFAULT_NOTIFICATION_TIMEOUT_MS = 10_000;

export type NotificationHeaders = Record<string, string | string[] | undefined>;

export interface SendNotificationOptions {
  url: string | URL;
  event: string;
  /**
   * The subscription's key; it is sent in `X-WEBHOOK-KEY` and never logged. Left out only by
   * `listen --no-verify --forward-to` when no key is known: the header is then not sent.
   */
  key: string | undefined;
  /** Bytes or text are sent unchanged (replay keeps the original bytes); anything else is JSON-encoded. */
  body: string | Uint8Array | object;
  /** Original headers to replay; hop-by-hop headers are dropped and the given event and key always win. */
  headers?: NotificationHeaders;
  /** Overrides the `User-Agent`, including one found in `headers`. */
  userAgent?: string;
  timeoutMs?: number;
  dispatcher?: Dispatcher;
  /** Aborts the request (the sandbox aborts deliveries in flight when it closes). */
  signal?: AbortSignal;
  /** Reads at most this many bytes of the receiver's answer (the rest is discarded); default: all. */
  maxResponseBytes?: number;
}

export interface NotificationResult {
  status: number;
  headers: NotificationHeaders;
  bodyText: string;
  durationMs: number;
}

/**
 * Whether a receiver's answer may change by sending the same notification again: a 5xx, or 408,
 * 425 and 429. Any other answer is the receiver's word (a 2xx delivered, a 4xx such as a wrong key
 * final). The one rule of `listen --forward-to` and of the sandbox's deliveries.
 */
export function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 425 || status === 429;
}

/**
 * Headers that describe one connection, not the message; replaying them would corrupt the new
 * request (a stale `content-length`, say), so they are never forwarded.
 */
const HOP_BY_HOP = new Set([
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
]);

/** `User-Agent` value for a product at this package's version, e.g. `ordercli-sandbox/0.1.0`. */
export function userAgentFor(product: string = SANDBOX_PRODUCT): string {
  return `${product}/${VERSION}`;
}

/** Shared by callers that bring no dispatcher; undici unrefs idle sockets, so it never holds the process. */
let defaultDispatcher: Dispatcher | undefined;

/** POSTs one notification and returns the receiver's answer; network errors and time-outs reject. */
export async function sendNotification(options: SendNotificationOptions): Promise<NotificationResult> {
  // Loaded here, not at module load, so that commands which never send stay fast to start; the
  // API client's transport loads only the parts of undici it needs.
  const { request, Agent } = await import('../api/transport.js');
  const timeoutMs = options.timeoutMs ?? DEFAULT_NOTIFICATION_TIMEOUT_MS;
  const started = performance.now();
  defaultDispatcher ??= new Agent();
  const url = new URL(String(options.url));
  const response = await request(
    options.dispatcher ?? defaultDispatcher,
    url.origin,
    `${url.pathname}${url.search}`,
    {
      method: 'POST',
      headers: notificationHeaders(options),
      body: encodeNotificationBody(options.body),
      signal: combineSignals(options.signal, AbortSignal.timeout(timeoutMs)),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    },
  );
  const bodyText =
    options.maxResponseBytes === undefined
      ? await response.body.text()
      : await readAtMost(response.body, options.maxResponseBytes);
  return {
    status: response.statusCode,
    headers: response.headers,
    bodyText,
    durationMs: Math.round(performance.now() - started),
  };
}

/** Builds the header set: defaults, then the replayed headers, then the explicit user agent, event and key. */
export function notificationHeaders(
  options: Pick<SendNotificationOptions, 'event' | 'key' | 'headers' | 'userAgent'>,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {
    'content-type': 'application/json',
    'user-agent': userAgentFor(),
  };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower)) continue;
    headers[lower] = value;
  }
  if (options.userAgent !== undefined) headers['user-agent'] = options.userAgent;
  // A recorded event that came without the header is sent again without it (not with an empty one).
  if (options.event !== '') headers['x-webhook-event'] = options.event;
  if (options.key !== undefined) headers['x-webhook-key'] = options.key;
  else delete headers['x-webhook-key'];
  return headers;
}

/** The first `limit` bytes of a response body as text; the rest is read and dropped, never kept. */
async function readAtMost(body: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size >= limit) continue;
    const buffer = Buffer.from(chunk);
    chunks.push(size + buffer.length > limit ? buffer.subarray(0, limit - size) : buffer);
    size += buffer.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Bytes and text pass unchanged so that a replay is byte-for-byte; other values become JSON. */
export function encodeNotificationBody(body: SendNotificationOptions['body']): string | Uint8Array {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  return JSON.stringify(body);
}

function combineSignals(first: AbortSignal | undefined, second: AbortSignal): AbortSignal {
  return first === undefined ? second : AbortSignal.any([first, second]);
}

/** What an order looks like to the notification builder; the sandbox's stored orders fit it. */
export interface SalesOrderSnapshot {
  id: number | string;
  code: string;
  externalId?: string;
  externalReference?: string;
  contact?: Record<string, unknown>;
  customer?: Record<string, unknown>;
  invoicingAddress?: Record<string, unknown>;
  deliveryAddress?: Record<string, unknown>;
  items?: ReadonlyArray<Record<string, unknown>>;
  createdAt?: string;
  validatedAt?: string;
  [field: string]: unknown;
}

/** The body of a `sales_order_validated` notification, as the sandbox sends it. */
export interface SalesOrderValidatedBody {
  id: number | string;
  code: string;
  externalId: string | null;
  externalReference: string | null;
  status: 'validated';
  createdAt: string;
  validatedAt: string;
  contact: Record<string, unknown> | null;
  customer: Record<string, unknown> | null;
  invoicingAddress: Record<string, unknown> | null;
  deliveryAddress: Record<string, unknown> | null;
  items: Array<Record<string, unknown>>;
  [field: string]: unknown;
}

/**
 * Builds a realistic `sales_order_validated` body from an order: the interface only promises
 * `code`, the contract adds `id`; the rest mirrors the order so a receiver has something to show.
 * Fields the order carries beyond the seed's (a shipping mode, say) are kept.
 */
export function buildSalesOrderValidatedBody(
  order: SalesOrderSnapshot,
  now: Date = new Date(),
): SalesOrderValidatedBody {
  const {
    id,
    code,
    externalId,
    externalReference,
    status: _status,
    createdAt,
    validatedAt = now.toISOString(),
    contact,
    customer,
    invoicingAddress,
    deliveryAddress,
    items,
    ...extraFields
  } = order;
  return {
    id,
    code,
    externalId: externalId ?? null,
    externalReference: externalReference ?? null,
    status: 'validated',
    createdAt: createdAt ?? validatedAt,
    validatedAt,
    contact: contact ?? null,
    customer: customer ?? null,
    invoicingAddress: invoicingAddress ?? null,
    deliveryAddress: deliveryAddress ?? null,
    items: (items ?? []).map((item, index) => ({ line: index + 1, ...item })),
    ...extraFields,
  };
}
