/**
 * `orders create --file <path|->`: one order from JSON, validated locally with the same rules as
 * an import (nothing is sent when it is invalid), `item.productCode` resolved from the packaging
 * references, then `POST /api/v1/orders`. `--dry-run` prints the body that would be sent.
 * An order with an externalId is checked against the service's order ledger first (refused when
 * already created or in doubt, unless `--force`) and recorded in it; only a 2xx is a creation.
 */
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { InputError } from '../../core/errors.js';
import { ReferenceCatalog } from '../../import/check/references.js';
import { namesProduct } from '../../import/check/resolve-products.js';
import { prepareRecord } from '../../import/check/validate.js';
import { readOrderText } from '../../import/read/input-file.js';
import { parseJson } from '../../import/read/json-syntax.js';
import { inputLimits } from '../../import/read/limits.js';
import { createdOrder, createdSummary, sendOrder } from '../../import/send/send-order.js';
import type { SourceRecord } from '../../import/types.js';
import { writeJson } from '../../io/json-output.js';
import { writeAnswerJson } from '../../io/service-answer.js';
import { ledgerPlaceOf } from '../../ledger/open.js';
import { awaitRequest, OneOrderWait } from '../support/await.js';
import type { AwaitFlags } from '../support/await-options.js';
import type { CreateFlags } from './index.js';

export async function run(options: CreateFlags, ctx: Context): Promise<void> {
  const limits = inputLimits(options);
  const { file, text } = await readOrderText(options.file, ctx, limits);
  const order = parseOrder(text, file);
  const references = new ReferenceCatalog(() => ctx.api(), ctx.signal);
  const prepared = await prepareRecord(order, references, { limits });
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
  const source = {
    by: 'orders create',
    input: options.file === '-' ? '(stdin)' : resolve(ctx.cwd, options.file),
  } as const;
  // Receiving is ready before the order leaves: a fast validation is not missed.
  const request = await awaitRequest(options as AwaitFlags, ctx, options.file);
  const wait = request && (await OneOrderWait.start(request, ctx, source));
  let response: Awaited<ReturnType<typeof sendOrder>> | undefined;
  try {
    response = await sendOrder(prepared.body, {
      api: await ctx.api(),
      ledger: await ledgerPlaceOf(ctx),
      source,
      force: options.force,
      signal: ctx.signal,
      warn: (text) => ctx.io.err(text),
    });
    if (ctx.json)
      writeAnswerJson(ctx.io, response.body, { showWith: 'ordercli get orders <id> --show-secrets' });
    else ctx.io.out(`${createdSummary(response.status, response.body)}\n`);
  } finally {
    await wait?.end(response && createdOrder(prepared.body, response.body));
  }
}

/** The one order of a JSON text, placed at its file for problems. */
function parseOrder(text: string, file: string): SourceRecord {
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
    key: typeof order.externalId === 'string' ? order.externalId : undefined,
    body: order,
    location: { file, line: firstLine, endLine: body.split('\n').length },
    raw: order,
    problems: [],
    needsProductResolution: Array.isArray(order.items) && order.items.some(namesProduct),
  };
}
