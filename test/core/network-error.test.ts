import { createServer } from 'node:net';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { causeChain, describeNetworkError, networkErrorCodes } from '../../src/core/network-error.js';

function systemError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
}

/** A loopback port where nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('causeChain and networkErrorCodes', () => {
  it('look through causes and the first error of an AggregateError, outermost first', () => {
    const inner = systemError('ECONNRESET');
    const socket = Object.assign(new Error('other side closed', { cause: inner }), {
      code: 'UND_ERR_SOCKET',
    });
    const outer = new TypeError('fetch failed', { cause: new AggregateError([socket, new Error('x')]) });
    expect(causeChain(outer)).toHaveLength(4);
    expect(networkErrorCodes(outer)).toEqual(['UND_ERR_SOCKET', 'ECONNRESET']);
  });

  it('stop on a loop of causes', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(causeChain(a).length).toBeLessThanOrEqual(5);
  });
});

describe('describeNetworkError', () => {
  it('names the system code inside undici errors, with what it means', () => {
    const wrapped = new TypeError('fetch failed', { cause: systemError('ECONNREFUSED') });
    expect(describeNetworkError(wrapped)).toBe('ECONNREFUSED (nothing listens there)');
    expect(describeNetworkError(systemError('EPIPE'))).toBe('EPIPE');
  });

  it('says a time-out in words, and falls back to the message', () => {
    const timeout = new Error('timed out');
    timeout.name = 'TimeoutError';
    expect(describeNetworkError(timeout)).toBe('no answer in time');
    expect(describeNetworkError(new Error('something else'))).toBe('something else');
    expect(describeNetworkError('text')).toBe('text');
  });

  it("finds the code of a real refused connection through undici's request", async () => {
    const port = await closedPort();
    const agent = new Agent({ connections: 1 });
    try {
      const failure = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(networkErrorCodes(failure)).toContain('ECONNREFUSED');
      expect(describeNetworkError(failure)).toBe('ECONNREFUSED (nothing listens there)');
    } finally {
      await agent.destroy();
    }
  });
});
