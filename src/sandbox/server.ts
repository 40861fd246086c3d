/**
 * The sandbox: a local implementation of the order service for development and tests
 * (`ordercli sandbox`, the test suite's fixture, `ordercli demo`). This module owns the HTTP
 * server and the life of one request: log, fault, latency, body, authentication, route, answer.
 */
import { once, setMaxListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { acquireFileLock, type FileLock } from '../io/file-lock.js';
import { authenticate, DEFAULT_TOKENS, generateWebhookKey, rightsOf, type SandboxTokens } from './auth.js';
import { checkBackoff, checkRetries, type DeliveryLogEntry, WebhookDeliverer } from './delivery.js';
import {
  DEFAULT_FAULTS,
  type FaultDecision,
  type FaultOptions,
  FaultPlan,
  type FaultRule,
  faultResponse,
} from './faults.js';
import { JOURNAL_FILE } from './journal.js';
import { type RequestLogEntry, trimLog } from './request-log.js';
import { encodeBody, JSON_CONTENT_TYPE, notFound, problem, type SandboxResponse } from './responses.js';
import { handleApiRequest, type RouteContext } from './routes.js';
import { loadSeed } from './seed.js';
import { SandboxStore, type StoredOrder } from './store.js';
import { OrderValidation } from './validation.js';

export type { SandboxTokens } from './auth.js';
export type { DeliveryLogEntry } from './delivery.js';
export type { FaultKind, FaultOptions, FaultRule } from './faults.js';
export type { RequestLogEntry } from './request-log.js';
export type { StoredOrder } from './store.js';
export { isNeverValidated } from './validation.js';

export const DEFAULT_SANDBOX_PORT = 4780;
export const DEFAULT_SANDBOX_HOST = '127.0.0.1';
export const DEFAULT_VALIDATION_DELAY_MS = 300;
/** The largest request body accepted; larger ones get 413 (the `listen` receiver uses the same). */
export const MAX_BODY_BYTES = 1024 * 1024;
const API_PREFIX = '/api/v1';

export interface SandboxOptions {
  /** Default 4780; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the sandbox never listens beyond loopback unless told to. */
  host?: string;
  /** Keeps created orders, contact references and subscriptions in this folder across runs. */
  dataDir?: string;
  /** Longest wait for the lock of `dataDir` when its owner cannot be checked (default: the lock's). */
  lockWaitMs?: number;
  /** Told when that lock is waited for. */
  onLockWait?: (message: string) => void;
  /** Time from a request's arrival to its answer, processing included (a service answering in N ms). */
  latencyMs?: number;
  /** Share of API requests answered 500 (0..1). */
  failRate?: number;
  /** Share of API requests answered 429 with `Retry-After` (0..1). */
  throttleRate?: number;
  /** Share of API requests whose connection is reset (0..1). */
  resetRate?: number;
  /** `Retry-After` of throttled answers, in seconds; default 1. */
  retryAfterSeconds?: number;
  /** Time from creation to validation (and the webhook); default 300 ms. */
  validationDelayMs?: number;
  /**
   * Share of created orders never validated nor notified (0..1; default 0), picked by a hash of
   * their `externalId` so that the same ones are picked in every run (`isNeverValidated`).
   */
  validationFailRate?: number;
  tokens?: Partial<SandboxTokens>;
  /** The key of every subscription; default: random per sandbox. */
  webhookKey?: string;
  /** Generated packaging references appended to the seed (benchmarks). */
  extraPackagingReferences?: number;
  /** Folder of the seed files; default: the package's `fixtures/sandbox`. */
  seedDir?: string;
  /** Silences `logger`, `onRequest` and `onDelivery`. */
  quiet?: boolean;
  /**
   * Receives one readable line per request and per delivery attempt (never a token or key). The
   * sandbox writes nothing by itself: the `sandbox` command decides where its console goes.
   */
  logger?: (line: string) => void;
  /** Called once per request when it is finished (answered, reset or abandoned). */
  onRequest?: (entry: RequestLogEntry) => void;
  /** Called once per delivery attempt. */
  onDelivery?: (entry: DeliveryLogEntry) => void;
  /** Keeps at most about this many entries in `requests` and `deliveries`; default unlimited. */
  logLimit?: number;
  /**
   * Attempts after a notification's first one failed (no answer, 5xx, 408, 425, 429); default 3.
   * 0: one attempt only.
   */
  deliveryRetries?: number;
  /** The wait before the first retry, doubled for each next one up to 60 s; default 500 ms. */
  deliveryBackoffMs?: number;
}

export interface Sandbox {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  tokens: SandboxTokens;
  webhookKey: string;
  /** Every request, in arrival order. */
  requests: RequestLogEntry[];
  /** Every delivery attempt, in completion order. */
  deliveries: DeliveryLogEntry[];
  /** Created orders, in creation order. */
  orders(): StoredOrder[];
  /** Changes latency and random fault rates at run time. */
  setFaults(faults: Partial<FaultOptions>): void;
  /** Adds deterministic faults for the next matching requests. */
  scriptFaults(rules: FaultRule[]): void;
  /**
   * The work still to come: validations scheduled, and deliveries in flight or waiting for a retry.
   * Once both are 0, nothing more happens until the next request (what tests wait for).
   */
  pending(): { validations: number; deliveries: number };
  /** Back to the seed: orders, contact references, subscriptions, logs, faults; pending work dropped. */
  reset(): void;
  /** Closes the server, its open connections, pending validations and deliveries. */
  close(): Promise<void>;
}

/** Starts a sandbox and resolves once it listens. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const port = options.port ?? DEFAULT_SANDBOX_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new RangeError(`port must be 0..65535, not ${port}`);
  const host = options.host ?? DEFAULT_SANDBOX_HOST;
  checkWorkOptions(options);
  const initialFaults = initialFaultsOf(options);
  const faults = new FaultPlan(initialFaults);
  const tokens: SandboxTokens = { ...DEFAULT_TOKENS, ...definedTokens(options.tokens) };
  if (tokens.full === tokens.partner) throw new Error('the full and partner tokens must differ');
  const webhookKey = options.webhookKey ?? generateWebhookKey();

  const parts = await openParts(options, webhookKey, faults, initialFaults);
  const server = createServer(requestListener(parts, tokens, options));
  try {
    await listen(server, port, host);
  } catch (error) {
    parts.store.close();
    await parts.deliverer.close();
    await parts.dataLock?.release();
    throw error;
  }
  const actualPort = (server.address() as { port: number }).port;
  // Orders left pending by a previous run (data folder) still get validated and notified.
  for (const order of parts.store.pendingOrders()) parts.validation.schedule(order);

  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost(host)}:${actualPort}`,
    port: actualPort,
    tokens,
    webhookKey,
    requests: parts.requests,
    deliveries: parts.deliveries,
    orders: () => parts.store.orders(),
    setFaults: (changes) => faults.set(changes),
    scriptFaults: (rules) => faults.script(rules),
    pending: () => ({ validations: parts.validation.pending, deliveries: parts.deliverer.pending }),
    reset() {
      resetParts(parts);
    },
    close() {
      closed ??= closeParts(parts, server);
      return closed;
    },
  };
}

/** What a sandbox runs on behind its server: state, logs, faults and the work pending. */
interface SandboxParts {
  faults: FaultPlan;
  /** What `reset()` sets the faults back to. */
  initialFaults: FaultOptions;
  /** The lock of `dataDir`, when there is one. */
  dataLock: FileLock | undefined;
  store: SandboxStore;
  requests: RequestLogEntry[];
  deliveries: DeliveryLogEntry[];
  deliverer: WebhookDeliverer;
  validation: OrderValidation;
  routes: RouteContext;
  /** Aborted by close(): ends latency waits of requests still in progress. */
  closing: AbortController;
}

/** Refuses out-of-range validation and delivery options before anything is opened (a lock, a port). */
function checkWorkOptions(options: SandboxOptions): void {
  const failRate = options.validationFailRate ?? 0;
  if (!(failRate >= 0 && failRate <= 1))
    throw new RangeError(`validationFailRate must be between 0 and 1, not ${failRate}`);
  if (options.deliveryRetries !== undefined) checkRetries(options.deliveryRetries);
  if (options.deliveryBackoffMs !== undefined) checkBackoff(options.deliveryBackoffMs);
}

/** The faults of the options, each defaulted. */
function initialFaultsOf(options: SandboxOptions): FaultOptions {
  return {
    latencyMs: options.latencyMs ?? DEFAULT_FAULTS.latencyMs,
    failRate: options.failRate ?? DEFAULT_FAULTS.failRate,
    throttleRate: options.throttleRate ?? DEFAULT_FAULTS.throttleRate,
    resetRate: options.resetRate ?? DEFAULT_FAULTS.resetRate,
    retryAfterSeconds: options.retryAfterSeconds ?? DEFAULT_FAULTS.retryAfterSeconds,
  };
}

/** Loads the seed, opens the store (on its locked data folder) and the workers that use it. */
async function openParts(
  options: SandboxOptions,
  webhookKey: string,
  faults: FaultPlan,
  initialFaults: FaultOptions,
): Promise<SandboxParts> {
  const seed = loadSeed({
    seedDir: options.seedDir,
    extraPackagingReferences: options.extraPackagingReferences,
  });
  // Two sandboxes on one data folder would both append to its journal, reuse each other's order
  // ids and wipe each other's state on reset: one per folder.
  const dataLock = options.dataDir === undefined ? undefined : await lockDataDir(options);
  let store: SandboxStore;
  try {
    store = await SandboxStore.open(seed, options.dataDir);
  } catch (error) {
    await dataLock?.release();
    throw error;
  }
  const deliveries: DeliveryLogEntry[] = [];
  const deliverer = new WebhookDeliverer({
    log: deliveries,
    logLimit: options.logLimit ?? Number.POSITIVE_INFINITY,
    retries: options.deliveryRetries,
    backoffMs: options.deliveryBackoffMs,
    logger: options.quiet ? undefined : options.logger,
    onDelivery: options.quiet ? undefined : options.onDelivery,
  });
  const delayMs = options.validationDelayMs ?? DEFAULT_VALIDATION_DELAY_MS;
  const validation = new OrderValidation({
    store,
    deliverer,
    webhookKey,
    delayMs,
    failRate: options.validationFailRate,
    logger: options.quiet ? undefined : options.logger,
  });
  const routes: RouteContext = { store, webhookKey, onOrderCreated: (order) => validation.schedule(order) };
  const closing = new AbortController();
  // One abort listener per request in progress: many are normal under load.
  setMaxListeners(0, closing.signal);
  return {
    faults,
    initialFaults,
    dataLock,
    store,
    requests: [],
    deliveries,
    deliverer,
    validation,
    routes,
    closing,
  };
}

/** Each request: logged on arrival, served, then told to `logger` and `onRequest` once finished. */
function requestListener(
  parts: SandboxParts,
  tokens: SandboxTokens,
  options: SandboxOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { requests, faults, routes, closing } = parts;
  const logger = options.quiet ? undefined : options.logger;
  const onRequest = options.quiet ? undefined : options.onRequest;
  const logLimit = options.logLimit ?? Number.POSITIVE_INFINITY;
  return (req, res) => {
    const entry = logArrival(req, tokens);
    requests.push(entry);
    trimLog(requests, logLimit);
    const started = performance.now();
    serveRequest({ req, res, entry, faults, routes, signal: closing.signal })
      .catch((error: unknown) => {
        // A bug in a handler must not take the sandbox down; the client gets a 500 it can report.
        if (!res.headersSent && !res.destroyed) send(res, entry, internalError(error));
      })
      .finally(() => {
        logger?.(requestLine(entry, performance.now() - started));
        onRequest?.(entry);
      });
  };
}

/** Back to the seed: orders, contact references, subscriptions, logs, faults; pending work dropped. */
function resetParts(parts: SandboxParts): void {
  parts.validation.cancelAll();
  parts.deliverer.cancelAll();
  parts.store.reset();
  parts.faults.reset(parts.initialFaults);
  parts.requests.length = 0;
  parts.deliveries.length = 0;
}

/** Closes the server, its open connections, pending validations and deliveries, the store and the lock. */
async function closeParts(parts: SandboxParts, server: Server): Promise<void> {
  parts.closing.abort();
  parts.validation.cancelAll();
  const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
  // close() alone waits for idle keep-alive connections to time out; end them now.
  server.closeAllConnections();
  await Promise.all([serverClosed, parts.deliverer.close()]);
  parts.store.close();
  await parts.dataLock?.release();
}

interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  entry: RequestLogEntry;
  faults: FaultPlan;
  routes: RouteContext;
  signal: AbortSignal;
}

/** The life of one request, after it has been logged. */
async function serveRequest(context: RequestContext): Promise<void> {
  const { req, res, entry, faults, signal } = context;
  const path = normalizePath(entry.path);
  const isApi = path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
  const fault = isApi ? faults.decide(entry.method, path) : undefined;
  if (fault) entry.fault = fault.kind;
  if (fault?.kind === 'reset-before-read') {
    resetConnection(req);
    return;
  }
  // Latency is the time an answer takes from the request's arrival, processing included, like a
  // service that answers in N ms: so concurrency ÷ latency is the rate a client can reach at best.
  const arrived = performance.now();
  const delayMs = isApi ? faults.current.latencyMs + (fault?.kind === 'delay' ? fault.delayMs : 0) : 0;
  const response = await respond(context, path, isApi, fault);
  if (response === undefined) return;
  const remainingMs = delayMs - (performance.now() - arrived);
  if (remainingMs > 0 && !(await wait(remainingMs, signal))) return;
  if (fault?.kind === 'delay' && fault.until !== undefined && !(await settled(fault.until, signal))) return;
  if (fault?.kind === 'reset-after') {
    entry.computedStatus = response.status;
    resetConnection(req);
    return;
  }
  send(res, entry, response);
}

/** Computes the answer; undefined when the client went away while sending its body. */
async function respond(
  context: RequestContext,
  path: string,
  isApi: boolean,
  fault: FaultDecision | undefined,
): Promise<SandboxResponse | undefined> {
  const { req, entry } = context;
  if (!isApi) return notFound(`no endpoint ${entry.path}; the API is under ${API_PREFIX}/`);
  let body: unknown;
  if (METHODS_WITH_BODY.has(entry.method)) {
    const read = await readBody(req, MAX_BODY_BYTES);
    if (read.kind === 'aborted') return undefined;
    if (read.kind === 'too-large') return tooLarge();
    const parsed = parseJson(read.bytes);
    if (!parsed.ok) return parsed.response;
    body = parsed.value;
    entry.body = body;
  }
  if (fault?.kind === 'status') return faultResponse(fault);
  if (entry.auth === 'none') return unauthorized(req);
  const segments = decodeSegments(path.slice(API_PREFIX.length));
  if (segments === undefined) return notFound(`malformed path ${entry.path}`);
  return handleApiRequest(context.routes, {
    method: entry.method,
    segments,
    body,
    auth: entry.auth,
    rights: rightsOf(entry.auth),
  });
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

function logArrival(req: IncomingMessage, tokens: SandboxTokens): RequestLogEntry {
  const { path, query } = splitUrl(req.url ?? '/');
  return {
    at: new Date().toISOString(),
    method: (req.method ?? 'GET').toUpperCase(),
    path,
    query,
    auth: authenticate(req.headers, tokens),
  };
}

function splitUrl(raw: string): { path: string; query: Record<string, string> } {
  // Origin-form (`/api/v1/orders?x=1`) is what clients send; new URL() is only for the rare rest.
  if (raw.startsWith('/')) {
    const mark = raw.indexOf('?');
    if (mark === -1) return { path: raw, query: {} };
    return { path: raw.slice(0, mark), query: Object.fromEntries(new URLSearchParams(raw.slice(mark + 1))) };
  }
  try {
    const url = new URL(raw);
    return { path: url.pathname, query: Object.fromEntries(url.searchParams) };
  } catch {
    return { path: raw, query: {} };
  }
}

/** `/api/v1/orders/` and `/api/v1/orders` are the same endpoint. */
function normalizePath(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function decodeSegments(rest: string): string[] | undefined {
  try {
    return rest
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

type BodyRead = { kind: 'ok'; bytes: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/** Reads the whole body up to `limit` bytes; stops reading as soon as it is over. */
function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  if (Number(req.headers['content-length']) > limit) return Promise.resolve({ kind: 'too-large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve({ kind: 'ok', bytes: Buffer.concat(chunks, size) }));
    req.once('error', () => resolve({ kind: 'aborted' }));
    req.once('close', () => {
      if (!req.complete) resolve({ kind: 'aborted' });
    });
  });
}

function parseJson(bytes: Buffer): { ok: true; value: unknown } | { ok: false; response: SandboxResponse } {
  const text = bytes.toString('utf8');
  if (text.trim() === '') {
    return {
      ok: false,
      response: problem(400, 'malformed-body', 'Bad request', {
        detail: 'The body is empty; send a JSON object.',
      }),
    };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return {
      ok: false,
      response: problem(400, 'malformed-body', 'Bad request', {
        detail: `The body is not valid JSON: ${(error as Error).message}`,
      }),
    };
  }
}

function tooLarge(): SandboxResponse {
  return problem(
    413,
    'payload-too-large',
    'Payload too large',
    { detail: `The body exceeds ${MAX_BODY_BYTES} bytes.` },
    // The rest of the body is not read, so the connection cannot carry another request.
    { connection: 'close' },
  );
}

function unauthorized(req: IncomingMessage): SandboxResponse {
  const sent = req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined;
  const detail = sent
    ? 'The token is not one this sandbox accepts (or Authorization does not use the Bearer scheme).'
    : 'No token was sent: use "Authorization: Bearer <token>" or the X-API-Key header.';
  return problem(
    401,
    'unauthorized',
    'Unauthorized',
    { detail },
    { 'www-authenticate': 'Bearer realm="ordercli-sandbox"' },
  );
}

function internalError(error: unknown): SandboxResponse {
  return problem(500, 'internal', 'Internal sandbox error', {
    detail: (error as Error)?.message ?? String(error),
  });
}

let requestCounter = 0;

function send(res: ServerResponse, entry: RequestLogEntry, response: SandboxResponse): void {
  const bytes = encodeBody(response);
  res.writeHead(response.status, {
    'content-type': response.contentType ?? JSON_CONTENT_TYPE,
    'content-length': bytes.length,
    'x-request-id': `req_${++requestCounter}`,
    ...response.headers,
  });
  res.end(bytes);
  entry.status = response.status;
}

/** A TCP reset, not a graceful close: what a crashed server or a cut network looks like. */
function resetConnection(req: IncomingMessage): void {
  req.socket.resetAndDestroy();
}

/** Resolves true after `ms`, or false as soon as the sandbox closes. */
async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** Waits for `promise` to settle; false when `signal` aborts first (the sandbox closes). */
async function settled(promise: PromiseLike<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  let onAbort = (): void => undefined;
  const aborted = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const done = Promise.resolve(promise).then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([done, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  server.listen(port, host);
  return once(server, 'listening').then(() => undefined);
}

/** Wildcard hosts accept loopback connections, so the printed URL uses loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function definedTokens(tokens: Partial<SandboxTokens> | undefined): Partial<SandboxTokens> {
  const out: Partial<SandboxTokens> = {};
  if (tokens?.full) out.full = tokens.full;
  if (tokens?.partner) out.partner = tokens.partner;
  return out;
}

function requestLine(entry: RequestLogEntry, ms: number): string {
  const outcome = entry.status !== undefined ? String(entry.status) : 'no answer';
  const fault = entry.fault ? ` [fault: ${entry.fault}]` : '';
  return `${entry.method} ${entry.path} ${outcome} ${Math.round(ms)} ms (${entry.auth})${fault}`;
}

/** The lock of the data folder's journal, taken before the journal is read. */
async function lockDataDir(options: SandboxOptions): Promise<FileLock> {
  const dataDir = options.dataDir!;
  mkdirSync(dataDir, { recursive: true });
  const journal = join(dataDir, JOURNAL_FILE);
  return acquireFileLock(`${journal}.lock`, {
    what: `the sandbox data folder ${dataDir}`,
    busyAdvice: 'stop that sandbox, or give this one another --data folder.',
    waitMs: options.lockWaitMs,
    onWait: options.onLockWait,
    command: 'sandbox',
  });
}
