import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { call, useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 20, deliveryBackoffMs: 20 });

describe('sandbox authentication', () => {
  it('answers 401 with a JSON problem when no token is sent', async () => {
    const response = await call(sandbox, 'GET', '/api/v1/packaging_references');
    expect(response.status).toBe(401);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    expect((response.body as { detail: string }).detail).toMatch(/No token was sent/);
    expect(sandbox.requests.at(-1)).toMatchObject({ auth: 'none', status: 401 });
  });

  it('answers 401 to an unknown token, in either form', async () => {
    expect((await call(sandbox, 'GET', '/api/v1/orders', { token: 'nope' })).status).toBe(401);
    expect(
      (await call(sandbox, 'GET', '/api/v1/orders', { token: 'nope', header: 'X-API-Key' })).status,
    ).toBe(401);
  });

  it('refuses a known token sent in Authorization without the Bearer scheme', async () => {
    const response = await call(sandbox, 'GET', '/api/v1/orders', {
      token: sandbox.tokens.full,
      header: 'Authorization',
    });
    expect(response.status).toBe(401);
  });

  it('accepts both tokens as Bearer and as a raw X-API-Key header in any case', async () => {
    for (const token of [sandbox.tokens.full, sandbox.tokens.partner]) {
      expect((await call(sandbox, 'GET', '/api/v1/packaging_references', { token })).status).toBe(200);
      for (const header of ['X-API-Key', 'x-api-key', 'X-API-KEY']) {
        expect((await call(sandbox, 'GET', '/api/v1/packaging_references', { token, header })).status).toBe(
          200,
        );
      }
    }
    expect(sandbox.requests.map((entry) => entry.auth)).toEqual([
      'full',
      'full',
      'full',
      'full',
      'partner',
      'partner',
      'partner',
      'partner',
    ]);
  });

  it('gives the partner token 403 on CRM and catalog endpoints, naming the missing right', async () => {
    const token = sandbox.tokens.partner;
    for (const [path, right] of [
      ['/api/v1/contacts', 'crm'],
      ['/api/v1/contacts/101', 'crm'],
      ['/api/v1/customers', 'crm'],
      ['/api/v1/packagings', 'catalog'],
      ['/api/v1/packagings/1101', 'catalog'],
    ] as const) {
      const response = await call(sandbox, 'GET', path, { token });
      expect(response.status, path).toBe(403);
      expect(response.body, path).toMatchObject({ status: 403, missingRight: right });
      expect((response.body as { detail: string }).detail, path).toMatch(
        right === 'crm' ? /CRM access/ : /catalog access/,
      );
    }
  });

  it('gives the full token CRM and catalog access', async () => {
    const token = sandbox.tokens.full;
    expect((await call(sandbox, 'GET', '/api/v1/contacts', { token })).status).toBe(200);
    expect((await call(sandbox, 'GET', '/api/v1/packagings/1101', { token })).body).toMatchObject({
      id: 1101,
      productCode: 'CRF-30',
    });
  });

  it('accepts configured tokens', async () => {
    const custom = await startSandbox({ port: 0, quiet: true, tokens: { full: 'f-123', partner: 'p-456' } });
    try {
      expect(custom.tokens).toEqual({ full: 'f-123', partner: 'p-456' });
      expect((await call(custom, 'GET', '/api/v1/contacts', { token: 'f-123' })).status).toBe(200);
      expect((await call(custom, 'GET', '/api/v1/contacts', { token: 'p-456' })).status).toBe(403);
      expect((await call(custom, 'GET', '/api/v1/contacts', { token: sandbox.tokens.full })).status).toBe(
        401,
      );
    } finally {
      await custom.close();
    }
  });
});
