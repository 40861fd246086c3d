/**
 * Sending one order with `POST /api/v1/orders`, as `orders create` and `orders new` both do: an
 * order with an externalId is checked against the service's order ledger first (refused when
 * already created or in doubt, unless `force`) and recorded in it; only a 2xx is a creation.
 */

import type { ApiClient, ApiResponse } from '../api/client.js';
import { ApiError, ConnectionError, TimeoutError } from '../api/errors.js';
import { UsageError } from '../core/errors.js';
import { statusLine } from '../core/http-status.js';
import { bodyHash } from './journal.js';
import { describeEntry, type LedgerEntry, type LedgerSource, OrderLedger } from './ledger.js';
import { serviceIds } from './submit.js';

export const ORDERS_PATH = '/api/v1/orders';

export interface SendOrderOptions {
  api: ApiClient;
  /** The config folder, which holds the order ledger. */
  configFolder: string;
  /** Who sends it, recorded in the ledger. */
  source: LedgerSource;
  /** Send even when the ledger says the externalId was already created or is in doubt. */
  force?: boolean;
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
  // Without an externalId there is nothing to check or record: the contract does not require one.
  const ledger =
    externalId === undefined
      ? undefined
      : await OrderLedger.open(options.configFolder, api.baseUrl, options.source);
  const json = JSON.stringify(body);
  try {
    if (ledger && externalId !== undefined) {
      const known = await ledger.lookup(externalId);
      if (known && known.status !== 'not-created') {
        if (!options.force) throw alreadyKnownError(externalId, known, api.baseUrl, options.forceAdvice);
        options.warn(
          `warning: --force: sending ${JSON.stringify(externalId)} although the order ledger says it was ${describeEntry(known)}.\n`,
        );
      }
      await ledger.sending(externalId, bodyHash(json));
    }
    let response: ApiResponse;
    try {
      response = await api.request('POST', ORDERS_PATH, {
        rawBody: json,
        contentType: 'application/json',
        signal: options.signal,
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
    return response;
  } finally {
    await ledger?.close();
  }
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
function alreadyKnownError(
  externalId: string,
  known: LedgerEntry,
  baseUrl: string,
  forceAdvice = 'run the same command with --force',
): UsageError {
  const id = JSON.stringify(externalId);
  if (known.status === 'created') {
    return new UsageError(
      `The order ${id} already exists at ${baseUrl}: ${describeEntry(known)}; nothing was sent.`,
      [
        `To create it once more anyway, ${forceAdvice}.`,
        ...(known.id !== undefined ? [`See it with: ordercli orders get ${known.id}`] : []),
      ],
    );
  }
  return new UsageError(
    `The order ${id} may already exist at ${baseUrl}: ${describeEntry(known)}; nothing was sent.`,
    [`Check at the service whether it was created; if it was not, ${forceAdvice}.`],
  );
}
