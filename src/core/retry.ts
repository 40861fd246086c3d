/**
 * Waiting between attempts: exponential back-off with jitter, the server's `Retry-After`, and a
 * `sleep` that an AbortSignal cuts short. Used by the API client, the forwarding queue and the
 * sandbox's webhook deliveries.
 */

import { setTimeout as wait } from 'node:timers/promises';

/** A wait (or a request) ended because its signal aborted without a reason of its own. */
export class AbortedError extends Error {
  constructor() {
    super('aborted');
    this.name = 'AbortError';
  }
}

/** Waits `ms`; rejects with the signal's reason (else an AbortedError) as soon as it aborts. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await wait(ms, undefined, { signal });
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? new AbortedError();
    throw error;
  }
}

export interface BackOff {
  /** Delay before the first retry, doubled for each next one. */
  baseMs: number;
  /** Longest delay. */
  maxMs: number;
}

/**
 * The delay before retry number `attempt` (1 for the first): `baseMs` doubled per attempt up to
 * `maxMs`, with "equal jitter" (half fixed, half random), so that retries of many clients spread
 * out but never collapse to 0.
 */
export function backOffDelay(attempt: number, { baseMs, maxMs }: BackOff): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt, 1) - 1, 30));
  return exponential / 2 + Math.random() * (exponential / 2);
}

/**
 * `Retry-After` as seconds or an HTTP date, in milliseconds (undefined when absent or
 * unreadable); of a repeated header, the first.
 */
export function parseRetryAfter(value: string | readonly string[] | undefined): number | undefined {
  const first = typeof value === 'string' ? value : value?.[0];
  if (first === undefined || first.trim() === '') return undefined;
  const seconds = Number(first);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(first);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
