/**
 * Typed errors of the API client. Each renders as one sentence (what failed, why, what to do)
 * with the service's own details below it, whatever their shape.
 */
import { CliError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { statusLine } from '../core/http-status.js';
import { redactSecretFields, redactSecretFieldsInText } from '../core/redact.js';

/** The request an error is about, without credentials. */
export interface RequestInfo {
  method: string;
  /** Path below the base URL, e.g. `/api/v1/orders`. */
  path: string;
}

/** An HTTP answer with an error status. */
export class ApiError extends CliError {
  readonly status: number;
  readonly body: unknown;
  readonly request: RequestInfo;
  readonly requestId: string | undefined;
  readonly attempts: number;

  constructor(
    message: string,
    init: { status: number; body: unknown; request: RequestInfo; requestId?: string; attempts?: number },
  ) {
    const exit = init.status === 401 || init.status === 403 ? ExitCode.Auth : ExitCode.Failure;
    super(message, exit, describeServiceDetails(init.body));
    this.status = init.status;
    this.body = init.body;
    this.request = init.request;
    this.requestId = init.requestId;
    this.attempts = init.attempts ?? 1;
  }
}

export class AuthError extends ApiError {}
export class NotFoundError extends ApiError {}
export class ValidationApiError extends ApiError {}
export class RateLimitError extends ApiError {}
export class ServerError extends ApiError {}
/** A 1xx or 3xx answer where a result was expected: ordercli never follows a redirect. */
export class RedirectError extends ApiError {}

/** Builds the typed error for an HTTP error status. */
export function apiErrorFor(init: {
  status: number;
  body: unknown;
  request: RequestInfo;
  requestId?: string;
  attempts?: number;
  /** A redirect's Location, and the base URL it was asked at (for the hint). */
  location?: string | undefined;
  baseUrl?: string;
}): ApiError {
  const { status, request } = init;
  const what = `${request.method} ${request.path}`;
  const after = init.attempts && init.attempts > 1 ? ` after ${init.attempts} attempts` : '';
  const line = statusLine(status);
  if (status === 401) {
    return new AuthError(
      `The service refused the credentials for ${what} (${line}): check --token, ORDERCLI_TOKEN or your profile (ordercli login).`,
      init,
    );
  }
  if (status === 403) {
    return new AuthError(
      `The service refused ${what} (${line}): the token does not have the rights this request needs.`,
      init,
    );
  }
  if (status === 404) return new NotFoundError(`Not found: ${what} (${line}).`, init);
  if (status === 422 || status === 400) {
    return new ValidationApiError(`The service rejected ${what} as invalid (${line}).`, init);
  }
  if (status === 429) {
    return new RateLimitError(
      `The service is limiting the request rate and still refused ${what}${after} (${line}); try again later or lower --concurrency.`,
      init,
    );
  }
  if (status >= 500) return new ServerError(`The service failed ${what}${after} (${line}).`, init);
  if (status < 400) {
    const error = new RedirectError(
      `The service answered ${what} with ${line} instead of a result; ordercli does not follow redirects.`,
      init,
    );
    const where = init.location ? `: the service points to ${init.location.slice(0, 200)}` : '';
    error.hint = `check --base-url${init.baseUrl ? ` (${init.baseUrl})` : ''}${where}; it must be the service's root, with its scheme.`;
    return error;
  }
  return new ApiError(`The service refused ${what} (${line}).`, init);
}

/** Whether a request may have reached the service before the connection failed. */
export type Outcome = 'not-sent' | 'unknown';

/** The network failed: nothing, or no complete answer, came back. */
export class ConnectionError extends CliError {
  readonly request: RequestInfo;
  readonly outcome: Outcome;
  readonly code: string | undefined;

  constructor(
    message: string,
    init: { request: RequestInfo; outcome: Outcome; code?: string; details?: string[] },
  ) {
    super(message, ExitCode.Failure, init.details ?? []);
    this.request = init.request;
    this.outcome = init.outcome;
    this.code = init.code;
  }
}

/** No answer within `--timeout`. */
export class TimeoutError extends ConnectionError {}

/**
 * Lines describing an error body of any shape: problem+json, `{errors: [...]}`, `{message}`, text;
 * secret-named fields (a key, a token) masked.
 */
export function describeServiceDetails(answer: unknown): string[] {
  if (answer === undefined || answer === null || answer === '')
    return ['The service sent no details (empty body).'];
  const body =
    typeof answer === 'string' ? redactSecretFieldsInText(answer) : redactSecretFields(answer).value;
  if (typeof body === 'string') {
    const lines = body.trim().split(/\r?\n/).slice(0, 20);
    return ['The service said:', ...lines.map((line) => `  ${truncate(line, 300)}`)];
  }
  if (typeof body !== 'object') return [`The service said: ${JSON.stringify(body)}`];
  const record = body as Record<string, unknown>;
  const lines: string[] = [];
  for (const key of ['title', 'message', 'error', 'detail', 'error_description']) {
    const value = record[key];
    if (typeof value === 'string' && value.trim() !== '') lines.push(`  ${truncate(value, 300)}`);
  }
  const fieldErrors = collectFieldErrors(record.errors ?? record.violations ?? record.invalid_params);
  lines.push(...fieldErrors.map((line) => `  - ${line}`));
  if (lines.length === 0) {
    const json = JSON.stringify(body, null, 2).split('\n');
    lines.push(...json.slice(0, 30).map((line) => `  ${line}`));
    if (json.length > 30) lines.push('  …');
  }
  return ['The service said:', ...lines];
}

function collectFieldErrors(value: unknown): string[] {
  if (Array.isArray(value)) {
    return value.slice(0, 50).map((entry) => {
      if (typeof entry === 'string') return entry;
      if (entry && typeof entry === 'object') {
        const e = entry as Record<string, unknown>;
        const field = e.field ?? e.propertyPath ?? e.path ?? e.name ?? e.pointer;
        const message = e.message ?? e.title ?? e.detail ?? e.reason;
        if (field !== undefined && message !== undefined) return `${String(field)}: ${String(message)}`;
        if (message !== undefined) return String(message);
      }
      return JSON.stringify(entry);
    });
  }
  if (value && typeof value === 'object') {
    // `{ "field": ["message", ...] }` as some frameworks answer.
    return Object.entries(value as Record<string, unknown>).map(
      ([field, messages]) => `${field}: ${Array.isArray(messages) ? messages.join('; ') : String(messages)}`,
    );
  }
  return [];
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
