/**
 * The one request core of ordercli: keep-alive connections (undici), a per-request timeout,
 * retries with exponential back-off and jitter that honour `Retry-After`, a shared pause when
 * the service answers 429, auth, a redacted trace, and typed errors.
 *
 * Retry rule: GET, PUT, HEAD and DELETE are retried on connection errors and on 408, 429, 502, 503
 * and 504. A POST is retried only when the service cannot have processed it: the connection was
 * never made, or the service answered 429 or 503. Any other POST failure is a ConnectionError
 * with `outcome: 'unknown'`, never silently re-sent.
 */
import type { Agent as AgentType, Dispatcher } from 'undici';
import { statusLine } from '../core/http-status.js';
import { causeChain, networkErrorCodes } from '../core/network-error.js';
import type { Redactor } from '../core/redact.js';
import { AbortedError, backOffDelay, parseRetryAfter, sleep } from '../core/retry.js';
import { withoutTrailingSlashes } from '../core/url.js';
import { apiErrorFor, ConnectionError, type Outcome, type RequestInfo, TimeoutError } from './errors.js';
import { Agent, request } from './transport.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export interface ApiClientOptions {
  baseUrl: string;
  token?: string;
  /** Send the raw token in this header instead of `Authorization: Bearer`. */
  authHeader?: string;
  timeoutMs: number;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  userAgent: string;
  redactor: Redactor;
  /** Receives one line per trace event (`--verbose`); already redacted. */
  trace?: (line: string) => void;
  /** Connections kept open to the service (default 64). */
  connections?: number;
  /** First back-off delay; doubled per retry, with jitter (default 250 ms). */
  retryBaseMs?: number;
  /** Longest wait for one retry, `Retry-After` included (default 30 s). */
  maxRetryDelayMs?: number;
  /** Called before a retry, e.g. to count them in an import. */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  request: RequestInfo;
  attempt: number;
  delayMs: number;
  reason: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw bytes sent as they are (with `contentType`). */
  rawBody?: string | Buffer;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Do not throw on HTTP error statuses; return the response (the `api` command). */
  acceptErrors?: boolean;
  /**
   * Return a 1xx or 3xx answer rather than throw (a caller that words it itself). Otherwise only
   * a 2xx is a result: a redirect is never followed, and is an error naming --base-url.
   */
  acceptRedirects?: boolean;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the answer is JSON, else its text; `null` when empty. */
  body: T;
  requestId: string | undefined;
  attempts: number;
  durationMs: number;
}

const IDEMPOTENT = new Set<string>(['GET', 'HEAD', 'PUT', 'DELETE']);
const RETRY_STATUS_IDEMPOTENT = new Set([408, 429, 502, 503, 504]);
const RETRY_STATUS_POST = new Set([429, 503]);
/** Errors raised before a single byte of the request could reach the service. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const TRACE_BODY_LIMIT = 2000;

/** Encodes each value into a path template: `pathFor('/api/v1/{entity}/{id}', {entity, id})`. */
export function pathFor(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`pathFor: no value for {${name}}`);
    return encodeURIComponent(String(value));
  });
}

export class ApiClient {
  readonly baseUrl: string;
  /** `https://host:port` and the base URL's own path prefix (often empty), parsed once. */
  private readonly origin: string;
  private readonly basePath: string;
  private readonly options: ApiClientOptions;
  private readonly agent: AgentType;
  /** Shared pause: after a 429, no request of this client starts before this time. */
  private notBefore = 0;

  constructor(options: ApiClientOptions) {
    this.options = options;
    this.baseUrl = withoutTrailingSlashes(options.baseUrl);
    const base = new URL(this.baseUrl);
    this.origin = base.origin;
    this.basePath = withoutTrailingSlashes(base.pathname);
    this.agent = new Agent({
      connections: options.connections ?? 64,
      keepAliveTimeout: 10_000,
      pipelining: 1,
    });
    options.redactor.addSecret(options.token);
    options.redactor.addSecretHeader(options.authHeader);
  }

  get<T = unknown>(path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path, options);
  }

  post<T = unknown>(path: string, body: unknown, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, { ...options, body });
  }

  put<T = unknown>(path: string, body: unknown, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    return this.request<T>('PUT', path, { ...options, body });
  }

  /** Sends one request, retrying per the rule above; throws ApiError or ConnectionError. */
  async request<T = unknown>(
    method: HttpMethod,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const info: RequestInfo = { method, path };
    const target = this.pathFor(path, options.query);
    const maxRetries = this.options.maxRetries ?? 3;
    const body = encodeBody(options);
    const headers = this.headersFor(body !== undefined, options);
    const started = performance.now();

    for (let attempt = 1; ; attempt++) {
      if (this.notBefore > Date.now()) await this.waitForPause(options.signal);
      let response: RawResponse;
      try {
        response = await this.send(info, target, headers, body, options.signal);
      } catch (error) {
        const failure = this.classify(error, info, options.signal);
        const retryable =
          failure instanceof ConnectionError && (IDEMPOTENT.has(method) || failure.outcome === 'not-sent');
        if (retryable && attempt <= maxRetries) {
          await this.backOff(info, attempt, undefined, failure.message, options.signal);
          continue;
        }
        throw failure;
      }

      const retryable = IDEMPOTENT.has(method) ? RETRY_STATUS_IDEMPOTENT : RETRY_STATUS_POST;
      if (retryable.has(response.status) && attempt <= maxRetries) {
        const retryAfterMs = parseRetryAfter(response.headers['retry-after']);
        const maxDelay = this.options.maxRetryDelayMs ?? 30_000;
        if (retryAfterMs === undefined || retryAfterMs <= maxDelay) {
          if (response.status === 429) this.pauseAll(retryAfterMs ?? this.backOffDelay(attempt));
          await this.backOff(info, attempt, retryAfterMs, statusLine(response.status), options.signal);
          continue;
        }
      }

      const parsed = parseBody(response);
      const requestId = response.headers['x-request-id'] ?? response.headers['request-id'];
      const success = response.status >= 200 && response.status < 300;
      const accepted = options.acceptErrors || (options.acceptRedirects && response.status < 400);
      if (!success && !accepted) {
        throw apiErrorFor({
          status: response.status,
          body: parsed,
          request: info,
          requestId,
          attempts: attempt,
          location: response.headers.location,
          baseUrl: this.baseUrl,
        });
      }
      return {
        status: response.status,
        headers: response.headers,
        body: parsed as T,
        requestId,
        attempts: attempt,
        durationMs: performance.now() - started,
      };
    }
  }

  /** Closes the kept-alive connections so that the process can exit. */
  async close(): Promise<void> {
    // Every request of the command has been answered by now: no need to wait for a graceful close.
    await this.agent.destroy().catch(() => undefined);
  }

  /** The request target below the origin: base path, path, query. */
  private pathFor(path: string, query: RequestOptions['query']): string {
    const target = this.basePath + (path.startsWith('/') ? path : `/${path}`);
    if (!query) return target;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) params.set(key, String(value));
    }
    const search = params.toString();
    return search === '' ? target : `${target}${target.includes('?') ? '&' : '?'}${search}`;
  }

  private headersFor(hasBody: boolean, options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json;q=0.9, */*;q=0.1',
      'user-agent': this.options.userAgent,
      ...options.headers,
    };
    if (hasBody) headers['content-type'] = options.contentType ?? 'application/json';
    const { token, authHeader } = this.options;
    if (token) {
      if (authHeader) headers[authHeader.toLowerCase()] = token;
      else headers.authorization = `Bearer ${token}`;
    }
    return headers;
  }

  private async send(
    info: RequestInfo,
    target: string,
    headers: Record<string, string>,
    body: string | Buffer | undefined,
    signal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    // Our own timer rather than undici's headersTimeout: undici's fires on a half-second tick.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new TimeoutSignal()), this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
    const started = performance.now();
    this.traceRequest(info, this.origin + target, headers, body);
    try {
      const res = await request(this.agent, this.origin, target, {
        method: info.method as Dispatcher.HttpMethod,
        headers,
        body,
        signal: combined,
      });
      const text = await res.body.text();
      const response = { status: res.statusCode, headers: flattenHeaders(res.headers), text };
      this.traceResponse(response, performance.now() - started);
      return response;
    } finally {
      clearTimeout(timer);
    }
  }

  private classify(error: unknown, info: RequestInfo, signal: AbortSignal | undefined): Error {
    if (signal?.aborted) return signal.reason instanceof Error ? signal.reason : new AbortedError();
    const what = `${info.method} ${info.path}`;
    const code = decisiveCode(error);
    const outcome: Outcome = code !== undefined && NOT_SENT_CODES.has(code) ? 'not-sent' : 'unknown';
    const unknownNote =
      info.method === 'POST' && outcome === 'unknown'
        ? ' The request may have reached the service: its outcome is unknown, so it was not re-sent.'
        : '';
    this.trace(`! ${what} failed: ${code ?? (error as Error)?.message ?? String(error)}`);
    if (isTimeout(error)) {
      return new TimeoutError(
        `No answer from ${this.baseUrl} to ${what} within ${this.options.timeoutMs} ms (--timeout).${unknownNote}`,
        { request: info, outcome: 'unknown', code: 'TIMEOUT' },
      );
    }
    if (outcome === 'not-sent') {
      return new ConnectionError(
        `Could not connect to ${this.baseUrl} for ${what} (${code}): check --base-url and that the service is up.`,
        { request: info, outcome, code },
      );
    }
    return new ConnectionError(
      `The connection to ${this.baseUrl} broke during ${what} (${code ?? 'no answer'}).${unknownNote}`,
      { request: info, outcome, code },
    );
  }

  private backOffDelay(attempt: number): number {
    return backOffDelay(attempt, {
      baseMs: this.options.retryBaseMs ?? 250,
      maxMs: this.options.maxRetryDelayMs ?? 30_000,
    });
  }

  private async backOff(
    info: RequestInfo,
    attempt: number,
    retryAfterMs: number | undefined,
    reason: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const delayMs = retryAfterMs ?? this.backOffDelay(attempt);
    this.trace(`~ retrying ${info.method} ${info.path} in ${Math.round(delayMs)} ms (${reason})`);
    this.options.onRetry?.({ request: info, attempt, delayMs, reason });
    await sleep(delayMs, signal);
  }

  private pauseAll(delayMs: number): void {
    this.notBefore = Math.max(this.notBefore, Date.now() + delayMs);
  }

  private async waitForPause(signal: AbortSignal | undefined): Promise<void> {
    // Loop: under concurrency, another 429 may extend the pause while this request waits.
    for (let wait = this.notBefore - Date.now(); wait > 0; wait = this.notBefore - Date.now()) {
      await sleep(wait, signal);
    }
  }

  private trace(line: string): void {
    if (this.options.trace) this.options.trace(this.options.redactor.redact(line));
  }

  private traceRequest(
    info: RequestInfo,
    url: string,
    headers: Record<string, string>,
    body: string | Buffer | undefined,
  ): void {
    if (!this.options.trace) return;
    this.trace(`> ${info.method} ${url}`);
    for (const [name, value] of Object.entries(this.options.redactor.redactHeaders(headers))) {
      this.trace(`> ${name}: ${String(value)}`);
    }
    if (body !== undefined) this.trace(`> ${clip(this.options.redactor.redactBody(body.toString()))}`);
  }

  private traceResponse(response: RawResponse, ms: number): void {
    if (!this.options.trace) return;
    this.trace(`< ${statusLine(response.status)} (${Math.round(ms)} ms)`);
    for (const [name, value] of Object.entries(this.options.redactor.redactHeaders(response.headers))) {
      this.trace(`< ${name}: ${String(value)}`);
    }
    if (response.text !== '') this.trace(`< ${clip(this.options.redactor.redactBody(response.text))}`);
  }
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

class TimeoutSignal extends Error {
  constructor() {
    super('timeout');
    this.name = 'TimeoutSignal';
  }
}

function encodeBody(options: RequestOptions): string | Buffer | undefined {
  if (options.rawBody !== undefined) return options.rawBody;
  if (options.body === undefined) return undefined;
  return JSON.stringify(options.body);
}

function parseBody(response: RawResponse): unknown {
  if (response.text === '') return null;
  const type = response.headers['content-type'] ?? '';
  const looksJson = /json/i.test(type) || /^\s*[[{]/.test(response.text);
  if (looksJson) {
    try {
      return JSON.parse(response.text);
    } catch {
      return response.text;
    }
  }
  return response.text;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** The code that decides the outcome: one saying nothing was sent wherever it is, else the outermost. */
function decisiveCode(error: unknown): string | undefined {
  const codes = networkErrorCodes(error);
  return codes.find((code) => NOT_SENT_CODES.has(code)) ?? codes[0];
}

function isTimeout(error: unknown): boolean {
  return causeChain(error).some((link) => link instanceof TimeoutSignal);
}

function clip(text: string): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > TRACE_BODY_LIMIT
    ? `${oneLine.slice(0, TRACE_BODY_LIMIT)}… (${text.length} bytes)`
    : oneLine;
}
