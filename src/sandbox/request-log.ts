/** The sandbox's logs, kept in memory for tests to count what really crossed the wire. */
import type { AuthLevel } from './auth.js';

export interface RequestLogEntry {
  at: string;
  method: string;
  /** Path without the query. */
  path: string;
  query: Record<string, string>;
  /** The status sent; absent when the connection was reset (a fault) or broke before the answer. */
  status?: number;
  /** For a `reset-after` fault: the status the request was processed to but never sent. */
  computedStatus?: number;
  auth: AuthLevel;
  /** The parsed JSON body of POST/PUT/PATCH requests. */
  body?: unknown;
  /** The injected fault, if any: `reset-before-read`, `reset-after`, `status` or `delay`. */
  fault?: string;
}

/** Drops the oldest entries, in batches so that a long run does not shift the array per entry. */
export function trimLog<T>(log: T[], limit: number): void {
  if (log.length > limit + Math.max(1, Math.floor(limit / 10))) log.splice(0, log.length - limit);
}
