/**
 * `orders create --file <path|->`: one order from JSON, validated locally with the same rules as
 * an import (nothing is sent when it is invalid), `item.productCode` resolved from the packaging
 * references, then `POST /api/v1/orders`. `--dry-run` prints the body that would be sent.
 * An order with an externalId is checked against the service's order ledger first (refused when
 * already created or in doubt, unless `--force`) and recorded in it; only a 2xx is a creation.
 */
import { resolve } from 'node:path';
import { ApiError, ConnectionError, TimeoutError } from '../../api/errors.js';
import type { Context } from '../../cli/context.js';
import { configDir } from '../../config/profiles.js';
import { InputError, UsageError } from '../../core/errors.js';
import { statusLine } from '../../core/http-status.js';
import { bodyHash } from '../../import/journal.js';
import { parseJson } from '../../import/json-syntax.js';
import { describeEntry, type LedgerEntry, OrderLedger } from '../../import/ledger.js';
import { inputLimits } from '../../import/limits.js';
import { readOrderText } from '../../import/read.js';
import { ReferenceCatalog } from '../../import/references.js';
import { namesProduct } from '../../import/resolve-products.js';
import { serviceIds } from '../../import/submit.js';
import type { SourceOrder } from '../../import/types.js';
import { prepareOrder } from '../../import/validate.js';
import { writeJson } from '../../io/output.js';
import { writeAnswerJson } from '../../io/service-answer.js';

export interface CreateOptions {
  /** A path, or `-` for standard input. */
  file: string;
  dryRun?: boolean;
  /** `--max-order-bytes`, `--max-cell-bytes`: sizes such as `2MiB` (default 1 MiB and 64 KiB). */
  maxOrderBytes?: string;
  maxCellBytes?: string;
  /** Send even when the ledger says the externalId was already created or is in doubt. */
  force?: boolean;
}

const ORDERS_PATH = '/api/v1/orders';

export async function run(options: CreateOptions, ctx: Context): Promise<void> {
  const limits = inputLimits(options);
  const { file, text } = await readOrderText(options.file, ctx, limits);
  const order = parseOrder(text, file);
  const references = new ReferenceCatalog(() => ctx.api(), ctx.signal);
  const prepared = await prepareOrder(order, references, { limits });
  if (prepared.problems.length > 0) {
    const count = prepared.problems.length;
    throw new InputError(
      `${file} is not a valid order (${count} ${count === 1 ? 'problem' : 'problems'}); nothing was sent.`,
      // One order per file: the field says where, a line would add nothing.
      prepared.problems.map(({ line: _line, ...problem }) => problem),
    );
  }
  if (options.dryRun) {
    writeJson(ctx.io, prepared.body);
    ctx.io.err(
      'Dry run: the order is valid; above is the body POST /api/v1/orders would send. Nothing was sent.\n',
    );
    return;
  }
  const api = await ctx.api();
  const externalId = typeof prepared.body.externalId === 'string' ? prepared.body.externalId : undefined;
  // Without an externalId there is nothing to check or record: the contract does not require one.
  const ledger =
    externalId === undefined
      ? undefined
      : await OrderLedger.open(configDir(ctx.env), api.baseUrl, {
          by: 'orders create',
          input: options.file === '-' ? '(stdin)' : resolve(ctx.cwd, options.file),
        });
  const json = JSON.stringify(prepared.body);
  try {
    if (ledger && externalId !== undefined) {
      const known = await ledger.lookup(externalId);
      if (known && known.status !== 'not-created') {
        if (!options.force) throw alreadyKnownError(externalId, known, api.baseUrl);
        ctx.io.err(
          `warning: --force: sending ${JSON.stringify(externalId)} although the order ledger says it was ${describeEntry(known)}.\n`,
        );
      }
      await ledger.sending(externalId, bodyHash(json));
    }
    let response: Awaited<ReturnType<typeof api.request>>;
    try {
      response = await api.request('POST', ORDERS_PATH, {
        rawBody: json,
        contentType: 'application/json',
        signal: ctx.signal,
      });
    } catch (error) {
      if (ledger && externalId !== undefined) recordError(ledger, externalId, error);
      throw error;
    }
    if (response.status < 200 || response.status >= 300) {
      // A redirect (or any other answer that is not a 2xx) did not create the order.
      const message = `the service answered ${statusLine(response.status)} instead of creating the order`;
      ledger?.failed(externalId!, { httpStatus: response.status, message });
      const error = new ApiError(
        `The service answered ${statusLine(response.status)} to POST ${ORDERS_PATH} instead of creating the order, so no order was created.`,
        { status: response.status, body: response.body, request: { method: 'POST', path: ORDERS_PATH } },
      );
      const location = response.headers.location;
      error.hint = `check --base-url (${api.baseUrl})${location ? `: the service points to ${location}` : ''}; it must be the service's root, with its scheme.`;
      throw error;
    }
    const { id, code } = serviceIds(response.body);
    ledger?.created(externalId!, { httpStatus: response.status, id, code });
    if (ctx.json)
      writeAnswerJson(ctx.io, response.body, { showWith: 'ordercli get orders <id> --show-secrets' });
    else ctx.io.out(`${summary(response.status, response.body)}\n`);
  } finally {
    await ledger?.close();
  }
}

/** Records in the ledger what a failed request means for the order. */
function recordError(ledger: OrderLedger, externalId: string, error: unknown): void {
  if (error instanceof ApiError) {
    ledger.failed(externalId, { httpStatus: error.status, message: error.message });
  } else if (error instanceof ConnectionError && error.outcome === 'not-sent') {
    ledger.notSent(externalId, error.message);
  } else {
    const reason =
      error instanceof TimeoutError
        ? 'no answer within --timeout'
        : error instanceof ConnectionError
          ? `the connection broke before the answer (${error.code ?? 'no answer'})`
          : `interrupted or failed after sending (${error instanceof Error ? error.message : String(error)})`;
    ledger.unknown(externalId, reason);
  }
}

/** Exit 2: the ledger says this externalId exists (or may exist) at the service. */
function alreadyKnownError(externalId: string, known: LedgerEntry, baseUrl: string): UsageError {
  const id = JSON.stringify(externalId);
  if (known.status === 'created') {
    return new UsageError(
      `The order ${id} already exists at ${baseUrl}: ${describeEntry(known)}; nothing was sent.`,
      [
        'To create it once more anyway, run the same command with --force.',
        ...(known.id !== undefined ? [`See it with: ordercli orders get ${known.id}`] : []),
      ],
    );
  }
  return new UsageError(
    `The order ${id} may already exist at ${baseUrl}: ${describeEntry(known)}; nothing was sent.`,
    ['Check at the service whether it was created; if it was not, run the same command with --force.'],
  );
}

/** The one order of a JSON text, placed at its file for problems. */
function parseOrder(text: string, file: string): SourceOrder {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const parsed = parseJson(body);
  if (!parsed.ok) {
    const { line, column, message } = parsed.error;
    throw new InputError(`${file} is not valid JSON (line ${line}, column ${column}); nothing was sent.`, [
      { file, line, message: `column ${column}: ${message}` },
    ]);
  }
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError(`${file} must hold one order, a JSON object; nothing was sent.`, [
      {
        file,
        message: Array.isArray(value)
          ? 'it holds a list: import several orders with ordercli orders import'
          : `it holds ${value === null ? 'null' : typeof value}`,
      },
    ]);
  }
  const order = value as Record<string, unknown>;
  const firstLine = body.slice(0, body.indexOf('{')).split('\n').length;
  return {
    index: 0,
    externalId: typeof order.externalId === 'string' ? order.externalId : undefined,
    order,
    location: { file, line: firstLine, endLine: body.split('\n').length },
    raw: order,
    problems: [],
    needsProductResolution: Array.isArray(order.items) && order.items.some(namesProduct),
  };
}

/** `Created order SO-2026-000001 (id 10001).`, with what the service's answer tells. */
function summary(status: number, body: unknown): string {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof record.code === 'string' && record.code !== '' ? record.code : undefined;
  const id = typeof record.id === 'string' || typeof record.id === 'number' ? record.id : undefined;
  if (code === undefined && id === undefined) {
    return `Created the order (${statusLine(status)}); the service's answer names no id or code (see it with --json).`;
  }
  return `Created order${code ? ` ${code}` : ''}${id !== undefined ? ` (id ${id})` : ''}.`;
}
