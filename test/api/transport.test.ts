/**
 * transport.ts loads undici's Agent and request() from their own modules, not from undici's
 * index: this fails the moment an undici release moves them or they stop being what its index
 * exports.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { Agent, request } from '../../src/api/transport.js';

const require = createRequire(import.meta.url);

it("loads the Agent and request() that undici's index exports, and a request goes through them", async () => {
  const undici = require('undici') as typeof import('undici');
  expect(Agent).toBe(undici.Agent);
  // undici.request and every dispatcher's request() are this function (the index copies it onto Dispatcher).
  expect(require('undici/lib/api/api-request.js')).toBe(undici.Dispatcher.prototype.request);

  const server = createServer((req, res) => res.end(`${req.method} ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new Agent();
  try {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const answer = await request(agent, origin, '/orders?page=2', { method: 'GET' });
    expect(answer.statusCode).toBe(200);
    expect(await answer.body.text()).toBe('GET /orders?page=2');
  } finally {
    await agent.close();
    server.close();
  }
});
