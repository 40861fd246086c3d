/**
 * undici's Agent and request(), loaded from their own modules rather than from undici's index:
 * the index also loads fetch, WebSocket, the mocks and the cache (about 100 ms at every start-up,
 * measured by bench/startup); these two load in a third of that. undici is pinned to an exact
 * version in package.json, so these paths cannot move under us unnoticed: every API test uses them.
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
