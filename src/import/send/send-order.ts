/**
 * Sending one order with `POST /api/v1/orders`, as `orders create` and `orders new` both do: an
 * order with an externalId is checked against the service's order ledger first (refused when
 * already created or in doubt, unless `force`) and recorded in it; only a 2xx is a creation.
 */

import type { ApiClient, ApiResponse } from '../../api/client.js';
import { ApiError, ConnectionError, TimeoutError } from '../../api/errors.js';
import { UsageError } from '../../core/errors.js';
import { statusLine } from '../../core/http-status.js';
import { shellWord } from '../../io/quote.js';
import { type LedgerPlace, openLedger } from '../../ledger/open.js';
import { bodyHash, describeOwner, type RecordSource } from '../../ledger/record.js';
import type { Claim, ClaimRefusal, LedgerStore } from '../../ledger/store.js';
import { describeEntry } from './describe-entry.js';
import { serviceIds } from './submit.js';

export const ORDERS_PATH = '/api/v1/orders';

export interface SendOrderOptions {
  api: ApiClient;
  /** Where the order ledger is (the config folder's, a folder, or PostgreSQL). */
  ledger: LedgerPlace;
  /** Who sends it, recorded in the ledger. */
  source: RecordSource;
  /**
   * Send even when the ledger says the externalId was already created or is in doubt; also through
   * a ledger that has no record of the service although the default ledger has (the move check).
   */
  force?: boolean;
  /** Only the move check's part of `force`: a ledger new to the service may be used (`orders new --force`). */
  allowNewLedger?: boolean;
  signal?: AbortSignal;
  /** A warning for stderr (what `force` overrode). */
  warn(text: string): void;
  /** How to send it anyway, as the refusal's hint says it (default: run the same command with --force). */
  forceAdvice?: string;
}

/** Sends the order and returns the service's 2xx answer; throws (recording the outcome) otherwise. */
export async function sendOrder(
  body: Record<string, unknown>,
  options: SendOrderOptions,
): Promise<ApiResponse> {
  const { api } = options;
  const externalId = typeof body.externalId === 'string' ? body.externalId : undefined;
  // Without an externalId there is nothing to claim or record: the contract does not require one.
  const ledger =
    externalId === undefined
      ? undefined
      : await openLedger(options.ledger, {
          baseUrl: api.baseUrl,
          kind: 'orders',
          source: options.source,
          signal: options.signal,
          allowNewLedger: options.allowNewLedger ?? options.force,
        });
  const json = JSON.stringify(body);
  try {
    let claim: Claim | undefined;
    if (ledger && externalId !== undefined) claim = await claimOrder(ledger, externalId, json, options);
    let response: ApiResponse;
    try {
      response = await api.request('POST', ORDERS_PATH, {
        rawBody: json,
        contentType: 'application/json',
        signal: options.signal,
        // A redirect is worded below, as an order not created.
        acceptRedirects: true,
      });
    } catch (error) {
      if (ledger && claim) recordError(ledger, claim, error);
      throw error;
    }
    if (response.status < 200 || response.status >= 300) {
      // A redirect (or any other answer that is not a 2xx) did not create the order.
      const message = `the service answered ${statusLine(response.status)} instead of creating the order`;
      if (claim) ledger?.failed(claim, { httpStatus: response.status, message });
      const error = new ApiError(
        `The service answered ${statusLine(response.status)} to POST ${ORDERS_PATH} instead of creating the order, so no order was created.`,
        { status: response.status, body: response.body, request: { method: 'POST', path: ORDERS_PATH } },
      );
      const location = response.headers.location;
      error.hint = `check --base-url (${api.baseUrl})${location ? `: the service points to ${location}` : ''}; it must be the service's root, with its scheme.`;
      throw error;
    }
    const { id, code } = serviceIds(response.body);
    if (claim) ledger?.created(claim, { httpStatus: response.status, id, code });
    return response;
  } finally {
    await ledger?.close();
  }
}

/** Claims the order in the ledger (durable before it returns), or throws the refusal (exit 2). */
async function claimOrder(
  ledger: LedgerStore,
  externalId: string,
  json: string,
  options: SendOrderOptions,
): Promise<Claim> {
  const hash = bodyHash(json);
  const first = await ledger.claim({ externalId, bodyHash: hash });
  if (first.claimed) return first.claim;
  const { refusal } = first;
  if (!options.force || refusal.reason === 'claimed') {
    throw alreadyKnownError(externalId, refusal, options.api.baseUrl, options.forceAdvice);
  }
  const forced = await ledger.claim({ externalId, bodyHash: hash, takeOverAny: true });
  if (!forced.claimed)
    throw alreadyKnownError(externalId, forced.refusal, options.api.baseUrl, options.forceAdvice);
  options.warn(
    `warning: --force: sending ${JSON.stringify(externalId)} although the order ledger says it was ${describeEntry(refusal.entry)}.\n`,
  );
  return forced.claim;
}

/** What `--await validated` matches a created order's notification by: its externalId, code and id. */
export function createdOrder(
  sent: Record<string, unknown>,
  answer: unknown,
): { externalId?: string; code?: string; id?: string | number } {
  const { id, code } = serviceIds(answer);
  const externalId = typeof sent.externalId === 'string' ? sent.externalId : undefined;
  return {
    ...(externalId !== undefined ? { externalId } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(id !== undefined ? { id } : {}),
  };
}

/** `Created order SO-2026-000001 (id 10001).`, with what the service's answer tells. */
export function createdSummary(status: number, body: unknown): string {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof record.code === 'string' && record.code !== '' ? record.code : undefined;
  const id = typeof record.id === 'string' || typeof record.id === 'number' ? record.id : undefined;
  if (code === undefined && id === undefined) {
    return `Created the order (${statusLine(status)}); the service's answer names no id or code (see it with --json).`;
  }
  return `Created order${code ? ` ${code}` : ''}${id !== undefined ? ` (id ${id})` : ''}.`;
}

/** Records in the ledger what a failed request means for the order. */
function recordError(ledger: LedgerStore, claim: Claim, error: unknown): void {
  if (error instanceof ApiError) {
    ledger.failed(claim, { httpStatus: error.status, message: error.message });
  } else if (error instanceof ConnectionError && error.outcome === 'not-sent') {
    ledger.notSent(claim, error.message);
  } else {
    const reason =
      error instanceof TimeoutError
        ? 'no answer within --timeout'
        : error instanceof ConnectionError
          ? `the connection broke before the answer (${error.code ?? 'no answer'})`
          : `interrupted or failed after sending (${error instanceof Error ? error.message : String(error)})`;
    ledger.unknown(claim, reason);
  }
}

/** Exit 2: the ledger says this externalId exists, may exist, or is being sent right now. */
function alreadyKnownError(
  externalId: string,
  refusal: ClaimRefusal,
  baseUrl: string,
  forceAdvice = 'run the same command with --force',
): UsageError {
  const id = JSON.stringify(externalId);
  const known = refusal.entry;
  if (refusal.reason === 'claimed') {
    return new UsageError(
      `The order ${id} is being sent to ${baseUrl} by another ordercli (${describeOwner(known)}); nothing was sent.`,
      ['Wait for that command to end, then run this one again: the order ledger then holds its outcome.'],
    );
  }
  if (refusal.reason === 'created') {
    return new UsageError(
      `The order ${id} already exists at ${baseUrl}: ${describeEntry(known)}; nothing was sent.`,
      [
        `To create it once more anyway, ${forceAdvice}.`,
        ...(known.id !== undefined ? [`See it with: ordercli orders get ${known.id}`] : []),
      ],
    );
  }
  const resolve = `ordercli --base-url ${shellWord(baseUrl)} orders resolve`;
  const key = shellWord(externalId);
  return new UsageError(
    `The order ${id} may already exist at ${baseUrl}: ${describeEntry(known)}; nothing was sent.`,
    [
      'Check at the service whether it was created, then record what you found in the order ledger:',
      `  ${resolve} --created ${key}[=<id>]   if it was: no command sends it again;`,
      `  ${resolve} --not-created ${key}   if it was not: the next send goes through.`,
      `Or, if it was not created, ${forceAdvice} (which records nothing).`,
    ],
  );
}
