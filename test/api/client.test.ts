import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBaseUrl } from '../../src/core/url.js';
import { runBin, runCli } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const sandbox = useSandbox();

const order = {
  externalId: 'EXT-CLIENT-1',
  contact: { internalReferenceId: 301 },
  items: [{ internalReferenceId: 401, orderedQuantity: 2 }],
};

function partner(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, ...args];
}

function requestsTo(path: string, method = 'GET') {
  return sandbox.requests.filter((r) => r.path === path && r.method === method);
}

describe('exit codes', () => {
  it('0 on success, with the record on stdout', async () => {
    const result = await runCli(partner('get', 'packaging_references', '401'));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 401 });
  });

  it('1 when the service cannot be reached', async () => {
    const result = await runCli(['--base-url', 'http://127.0.0.1:9', '--retries', '0', 'get', 'orders', '1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Could not connect to http:\/\/127\.0\.0\.1:9 .*ECONNREFUSED/);
  });

  it('1 on a 404, naming the request', async () => {
    const result = await runCli(partner('get', 'orders', '999999'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Not found: GET /api/v1/orders/999999 (404 Not Found)');
  });

  it('2 for bad usage, before anything is sent', async () => {
    const unknownOption = await runCli(partner('get', 'orders', '1', '--frobnicate'));
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("unknown option '--frobnicate'");
    const badJson = await runCli(partner('api', 'POST', '/api/v1/orders', '--data', '{oops'));
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain('not valid JSON; nothing was sent');
    expect(sandbox.requests).toHaveLength(0);
    const noUrl = await runCli(['get', 'orders', '1']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('No service address');
  });

  it('3 when the credentials are refused (401) or lack rights (403)', async () => {
    const unauthorized = await runCli([
      '--base-url',
      sandbox.url,
      '--token',
      'nope-nope',
      'get',
      'orders',
      '1',
    ]);
    expect(unauthorized.code).toBe(3);
    expect(unauthorized.stderr).toContain('refused the credentials');
    const forbidden = await runCli(partner('get', 'contacts', '101'));
    expect(forbidden.code).toBe(3);
    expect(forbidden.stderr).toContain('403');
  });

  it('130 when interrupted while a request is in flight', async () => {
    sandbox.setFaults({ latencyMs: 2000 });
    const controller = new AbortController();
    // Ctrl-C once the request has reached the sandbox, which holds its answer 2 s.
    const interrupted = waitFor(
      () => requestsTo('/api/v1/packaging_references/401').length === 1,
      10_000,
      'the request at the sandbox',
    ).then(() => controller.abort());
    const result = await runCli(partner('get', 'packaging_references', '401'), { signal: controller.signal });
    await interrupted;
    expect(result.code).toBe(130);
    expect(result.stderr).not.toContain('    at ');
  });
});

describe('retries', () => {
  it('retries a GET after 503s and succeeds, counted at the sandbox', async () => {
    sandbox.scriptFaults([
      { method: 'GET', path: '/api/v1/packaging_references/401', kind: 'status', status: 503, times: 2 },
    ]);
    const result = await runCli(partner('get', 'packaging_references', '401'));
    expect(result.code, result.stderr).toBe(0);
    expect(requestsTo('/api/v1/packaging_references/401')).toHaveLength(3);
  });

  it('retries a GET whose connection was reset before it was read', async () => {
    sandbox.scriptFaults([
      { method: 'GET', path: '/api/v1/packaging_references/401', kind: 'reset-before-read', times: 1 },
    ]);
    const result = await runCli(partner('get', 'packaging_references', '401'));
    expect(result.code, result.stderr).toBe(0);
    expect(requestsTo('/api/v1/packaging_references/401')).toHaveLength(2);
  });

  it('gives up after --retries and says how many attempts were made', async () => {
    sandbox.scriptFaults([
      { method: 'GET', path: '/api/v1/packaging_references/401', kind: 'status', status: 502, times: 10 },
    ]);
    const result = await runCli(partner('--retries', '2', 'get', 'packaging_references', '401'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('after 3 attempts');
    expect(requestsTo('/api/v1/packaging_references/401')).toHaveLength(3);
  });

  it('retries a POST answered 429 (Retry-After honoured) and creates the order once', async () => {
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 1, times: 1 },
    ]);
    const started = Date.now();
    const result = await runCli(partner('api', 'POST', '/api/v1/orders', '--data', JSON.stringify(order)));
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(requestsTo('/api/v1/orders', 'POST')).toHaveLength(2);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('never re-sends a POST whose connection broke after the service read it', async () => {
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-after', times: 1 }]);
    const result = await runCli(partner('api', 'POST', '/api/v1/orders', '--data', JSON.stringify(order)));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('outcome is unknown');
    expect(requestsTo('/api/v1/orders', 'POST')).toHaveLength(1);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('does not re-send a POST that was reset before being read either: its outcome cannot be known', async () => {
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read', times: 1 }]);
    const result = await runCli(partner('api', 'POST', '/api/v1/orders', '--data', JSON.stringify(order)));
    expect(result.code).toBe(1);
    expect(requestsTo('/api/v1/orders', 'POST')).toHaveLength(1);
    expect(sandbox.orders()).toHaveLength(0);
  });
});

describe('credentials never appear in output', () => {
  it('redacts the bearer token in --verbose traces and errors', async () => {
    const token = sandbox.tokens.full;
    const ok = await runCli([
      '--verbose',
      '--base-url',
      sandbox.url,
      '--token',
      token,
      'get',
      'contacts',
      '101',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('> authorization: [redacted]');
    expect(ok.stderr).toContain('< 200 OK');
    const failed = await runCli([
      '--verbose',
      '--base-url',
      sandbox.url,
      '--token',
      token,
      'get',
      'orders',
      '424242',
    ]);
    for (const result of [ok, failed]) expect(result.stdout + result.stderr).not.toContain(token);
  });

  it('redacts a token sent in a custom header, from the environment', async () => {
    const token = sandbox.tokens.partner;
    const result = await runCli(['--verbose', 'get', 'packaging_references', '401'], {
      env: { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: token, ORDERCLI_AUTH_HEADER: 'X-Api-Key' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('> x-api-key: [redacted]');
    expect(result.stdout + result.stderr).not.toContain(token);
  });
});

describe('plain http', () => {
  it('is refused for a host other than loopback', async () => {
    const result = await runCli([
      '--base-url',
      'http://orders.example.com',
      '--token',
      't',
      'get',
      'orders',
      '1',
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Refusing plain http:// to orders.example.com');
  });

  it('is accepted for loopback, and elsewhere only with --allow-insecure-http', () => {
    expect(() => checkBaseUrl('http://127.0.0.1:4780', false)).not.toThrow();
    expect(() => checkBaseUrl('http://localhost:4780', false)).not.toThrow();
    expect(() => checkBaseUrl('http://[::1]:4780', false)).not.toThrow();
    expect(() => checkBaseUrl('http://orders.example.com', false)).toThrow(/Refusing/);
    expect(() => checkBaseUrl('http://orders.example.com', true)).not.toThrow();
    expect(() => checkBaseUrl('https://orders.example.com', false)).not.toThrow();
  });
});

describe('error bodies of every shape', () => {
  let server: Server;
  let url: string;
  const answers: Record<string, { status: number; type?: string; body: string; location?: string }> = {
    '/api/v1/json': {
      status: 422,
      type: 'application/json',
      body: '{"errors":[{"field":"items[0].orderedQuantity","message":"must be positive"}]}',
    },
    '/api/v1/problem': {
      status: 409,
      type: 'application/problem+json',
      body: '{"type":"about:blank","title":"Conflict","detail":"externalId already used"}',
    },
    '/api/v1/text': { status: 500, type: 'text/plain', body: 'upstream database is down\nretry later' },
    '/api/v1/empty': { status: 400, body: '' },
    '/api/v1/odd': { status: 418, type: 'application/json', body: '{"teapot":{"short":true,"stout":true}}' },
    // A base URL given as http:// to a service that redirects to https://, or missing a path.
    '/api/v1/packaging_references/401': {
      status: 301,
      type: 'application/json',
      body: 'null',
      location: 'https://orders.example.com/api/v1/packaging_references/401',
    },
    '/api/v1/packaging_references': { status: 302, body: '', location: '/login' },
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const answer = answers[req.url ?? ''] ?? { status: 404, body: '' };
      res.writeHead(answer.status, {
        ...(answer.type ? { 'content-type': answer.type } : {}),
        ...(answer.location ? { location: answer.location } : {}),
      });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function failure(path: string) {
    const result = await runCli(['--base-url', url, '--retries', '0', 'api', 'GET', path]);
    expect(result.stderr).not.toContain('    at ');
    return result;
  }

  it('a redirect is never a result: get and a list exit 1 naming the status, where it points and --base-url', async () => {
    // The real binary, as a user runs it.
    const asked = (...args: string[]) =>
      runBin(['--base-url', url, '--token', 't', '--retries', '0', ...args]);
    const got = await asked('get', 'packaging_references', '401');
    expect(got.code).toBe(1);
    expect(got.stdout).toBe('');
    expect(got.stderr).toContain(
      'error: The service answered GET /api/v1/packaging_references/401 with 301 Moved Permanently instead of a result; ordercli does not follow redirects.',
    );
    expect(got.stderr).toContain(
      `hint: check --base-url (${url}): the service points to https://orders.example.com/api/v1/packaging_references/401`,
    );
    const listed = await asked('refs', 'packagings', 'list');
    expect(listed.code).toBe(1);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toContain('302 Found instead of a result');
    expect(listed.stderr).not.toContain('    at ');
  });

  it('lists field errors of a JSON body', async () => {
    const result = await failure('/api/v1/json');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'error: The service rejected GET /api/v1/json as invalid (422 Unprocessable Entity).',
    );
    expect(result.stderr).toContain('- items[0].orderedQuantity: must be positive');
  });

  it('shows title and detail of problem+json', async () => {
    const result = await failure('/api/v1/problem');
    expect(result.stderr).toContain('Conflict');
    expect(result.stderr).toContain('externalId already used');
  });

  it('shows a plain-text body line by line', async () => {
    const result = await failure('/api/v1/text');
    expect(result.stderr).toContain('(500 Internal Server Error)');
    expect(result.stderr).toContain('  upstream database is down\n');
    expect(result.stderr).toContain('  retry later');
  });

  it('says when the body is empty', async () => {
    const result = await failure('/api/v1/empty');
    expect(result.stderr).toContain('empty body');
  });

  it('prints an unknown JSON shape as JSON', async () => {
    const result = await failure('/api/v1/odd');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('"stout": true');
  });
});
