/**
 * undici's Agent and request(), loaded from their own modules rather than from undici's index,
 * which also loads fetch, WebSocket, the mocks and the cache: a cost every API command would pay
 * at start-up (figures in docs/ENGINEERING.md). test/api/transport.test.ts fails the moment an
 * undici release moves these modules or they stop being what its index exports.
 */
import './wasm-flags.js';
import type { Dispatcher } from 'undici';
import apiRequest from 'undici/lib/api/api-request.js';
import Agent from 'undici/lib/dispatcher/agent.js';

export { Agent };

/** `undici.request` bound to a dispatcher, for a path below an origin (no URL parsing per call). */
export function request(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>,
): Promise<Dispatcher.ResponseData> {
  return apiRequest.call(dispatcher, { ...options, origin, path } as Dispatcher.RequestOptions);
}
