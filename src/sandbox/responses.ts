/**
 * What a route answers, as a value: the server decides afterwards whether to send it or, for a
 * `reset-after` fault, to drop the connection instead. Errors are RFC 9457 problem documents.
 */
import type { ValidationProblem } from '../schemas/problems.js';

export interface SandboxResponse {
  status: number;
  /** A value to JSON-encode. */
  body?: unknown;
  /** JSON already encoded (the cached seed lists); sent instead of `body`. */
  json?: Buffer;
  contentType?: string;
  headers?: Record<string, string>;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const PROBLEM_BASE = 'https://ordercli.dev/problems/';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  errors?: ValidationProblem[];
  [field: string]: unknown;
}

export function ok(body: unknown, status = 200): SandboxResponse {
  return { status, body };
}

export function okJson(json: Buffer): SandboxResponse {
  return { status: 200, json };
}

/** A problem document; `kind` becomes the last segment of its `type` URI. */
export function problem(
  status: number,
  kind: string,
  title: string,
  extra: Omit<Problem, 'type' | 'title' | 'status'> = {},
  headers?: Record<string, string>,
): SandboxResponse {
  const body: Problem = { type: PROBLEM_BASE + kind, title, status, ...extra };
  return { status, body, contentType: PROBLEM_CONTENT_TYPE, ...(headers ? { headers } : {}) };
}

/** The 422 every validation failure answers, listing each field's problem. */
export function validationProblem(errors: ValidationProblem[], title: string): SandboxResponse {
  return problem(422, 'validation', title, { errors });
}

export function notFound(detail: string): SandboxResponse {
  return problem(404, 'not-found', 'Not found', { detail });
}

export function methodNotAllowed(method: string, allowed: readonly string[]): SandboxResponse {
  return problem(
    405,
    'method-not-allowed',
    'Method not allowed',
    { detail: `${method} is not allowed here; use ${allowed.join(' or ')}` },
    { allow: allowed.join(', ') },
  );
}

/** Encodes the response body once, for both the content length and the write. */
export function encodeBody(response: SandboxResponse): Buffer {
  if (response.json !== undefined) return response.json;
  return Buffer.from(response.body === undefined ? '' : JSON.stringify(response.body));
}
