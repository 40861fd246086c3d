/** `api <METHOD> <path>`: the raw escape hatch for what the interface does not show. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { HttpMethod } from '../../api/client.js';
import type { Context } from '../../command-support/context.js';
import { InputError, UsageError } from '../../core/errors.js';
import { statusLine } from '../../core/http-status.js';
import { redactSecretFieldsInText } from '../../core/redact.js';
import { readStream } from '../../io/input.js';
import { writeAnswerJson } from '../../io/service-answer.js';
import type { ApiFlags } from './index.js';

/** `api`'s arguments and flags. */
export type ApiOptions = ApiFlags & { method: string; path: string };

const METHODS = new Set<HttpMethod>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']);

export async function run(options: ApiOptions, ctx: Context): Promise<void> {
  const method = options.method.toUpperCase() as HttpMethod;
  if (!METHODS.has(method)) {
    throw new UsageError(`Unknown method "${options.method}": use one of ${[...METHODS].join(', ')}.`);
  }
  const path = normalizePath(options.path);
  const headers = parseHeaders(options.header);
  const body = options.data === undefined ? undefined : await readBody(options.data, ctx);

  const api = await ctx.api();
  const response = await api.request(method, path, {
    rawBody: body,
    contentType: body === undefined ? undefined : 'application/json',
    headers,
    signal: ctx.signal,
  });
  if (options.include) {
    ctx.io.out(`HTTP ${statusLine(response.status)}\n`);
    for (const [name, value] of Object.entries(ctx.io.redactor.redactHeaders(response.headers))) {
      ctx.io.out(`${name}: ${String(value)}\n`);
    }
    ctx.io.out('\n');
  }
  if (response.body === null) return;
  if (typeof response.body === 'string') {
    const text = response.body.endsWith('\n') ? response.body : `${response.body}\n`;
    if (options.showSecrets) ctx.io.outUnredacted(text);
    else ctx.io.out(redactSecretFieldsInText(text));
  } else writeAnswerJson(ctx.io, response.body, { showSecrets: options.showSecrets });
}

/** `/api/v1/x` and `/x` are taken as written; a bare `contacts` means `/api/v1/contacts`. */
function normalizePath(path: string): string {
  const trimmed = path.trim();
  if (trimmed === '') throw new UsageError('The path must not be empty.');
  if (/^https?:\/\//i.test(trimmed)) {
    throw new UsageError('Give a path below the base URL (e.g. /api/v1/contacts), not a full URL.');
  }
  return trimmed.startsWith('/') ? trimmed : `/api/v1/${trimmed}`;
}

function parseHeaders(values: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    const name = colon > 0 ? value.slice(0, colon).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new UsageError(`--header takes "Name: value", not ${JSON.stringify(value)}.`);
    }
    headers[name.toLowerCase()] = value.slice(colon + 1).trim();
  }
  return headers;
}

/** The body given to --data: JSON text, @file or - (stdin); checked to be JSON, sent as written. */
async function readBody(data: string, ctx: Context): Promise<string> {
  let text: string;
  let source: string;
  if (data === '-') {
    text = await readStream(ctx.io.stdin);
    source = 'stdin';
  } else if (data.startsWith('@')) {
    source = data.slice(1);
    try {
      text = await readFile(resolve(ctx.cwd, source), 'utf8');
    } catch (error) {
      throw new UsageError(
        `Cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
      );
    }
  } else {
    text = data;
    source = '--data';
  }
  try {
    JSON.parse(text);
  } catch (error) {
    throw new InputError(`The request body from ${source} is not valid JSON; nothing was sent.`, [
      { file: source, message: (error as Error).message },
    ]);
  }
  return text;
}
