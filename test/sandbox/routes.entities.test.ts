import { describe, expect, it } from 'vitest';
import type { PackagingReferenceRecord as Reference } from '../../src/sandbox/seed.js';
import { packagingReferenceSchema } from '../../src/schemas/references.js';
import { call, partnerOrder, useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 20, deliveryBackoffMs: 20 }, { resetEach: false });

describe('GET /api/v1/packaging_references', () => {
  it('returns a JSON array of packaging references with exactly the interface fields', async () => {
    const response = await call(sandbox, 'GET', '/api/v1/packaging_references', {
      token: sandbox.tokens.partner,
    });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const references = response.body as Reference[];
    expect(references.length).toBeGreaterThanOrEqual(30);
    for (const reference of references) {
      expect(packagingReferenceSchema.safeParse(reference).success).toBe(true);
      expect(Object.keys(reference)).toEqual(['id', 'active', 'label', 'packaging']);
      expect(Object.keys(reference.packaging)).toEqual(['name', 'unit', 'unit_factor', 'product']);
      expect(Object.keys(reference.packaging.product)).toEqual(['code', 'label', 'taxes']);
      for (const tax of reference.packaging.product.taxes)
        expect(Object.keys(tax)).toEqual(['name', 'rate', 'vat']);
    }
  });

  it('holds what the demos and tests rely on', async () => {
    const references = (
      await call(sandbox, 'GET', '/api/v1/packaging_references', { token: sandbox.tokens.partner })
    ).body as Reference[];
    const byId = new Map(references.map((reference) => [reference.id, reference]));
    expect(byId.get(401)).toMatchObject({ active: true, label: 'Crème fraîche épaisse 30 % MG' });
    expect(byId.get(417)).toMatchObject({ active: false });
    expect(references.filter((r) => !r.active).length).toBeGreaterThanOrEqual(3);
    const byCode = (code: string) => references.filter((r) => r.packaging.product.code === code);
    expect(byCode('CRF-30').map((r) => r.id)).toEqual([401, 402]);
    expect(byCode('BIE-BLO-33').map((r) => r.packaging.name)).toEqual([
      'Bouteille 33 cl',
      'Pack de 6 bouteilles',
      'Carton de 24 bouteilles',
    ]);
    expect(byCode('PAT-CAMP').map((r) => r.id)).toEqual([403]);
    // A product with one active and one inactive packaging: resolving the code finds one.
    expect(byCode('CAF-MOU').map((r) => [r.id, r.active])).toEqual([
      [420, true],
      [421, false],
    ]);
    const taxNames = new Set(references.flatMap((r) => r.packaging.product.taxes.map((t) => t.name)));
    expect([...taxNames]).toEqual(expect.arrayContaining(['TVA 5,5 %', 'TVA 20 %', "Droits d'accise"]));
  });
});

describe('entities', () => {
  it('serves GET <entity>/{id} for every kind held', async () => {
    const token = sandbox.tokens.full;
    const created = await call(sandbox, 'POST', '/api/v1/orders', { token, body: partnerOrder('E-1') });
    const subscription = await call(sandbox, 'PUT', '/api/v1/webhooks', {
      token,
      body: { event: 'sales_order_validated', url: 'http://127.0.0.1:9/hook' },
    });
    const cases: Array<[string, string | number, Record<string, unknown>]> = [
      ['orders', (created.body as { id: number }).id, { externalId: 'E-1' }],
      ['contacts', 101, { firstName: 'Élodie', lastName: 'Lefèvre' }],
      ['customers', 501, { name: 'Épicerie fine Lefèvre' }],
      ['packagings', 1131, { productCode: 'BIE-BLO-33', unit_factor: 1 }],
      ['packaging_references', 433, { packaging: expect.objectContaining({ unit_factor: 24 }) }],
      ['contact_references', 301, { customer: { name: 'Maison Rousseau' } }],
      ['shipping_modes', 4, { code: 'RETRAIT' }],
      ['webhooks', (subscription.body as { id: number }).id, { event: 'sales_order_validated' }],
    ];
    for (const [kind, id, expected] of cases) {
      const response = await call(sandbox, 'GET', `/api/v1/${kind}/${id}`, { token });
      expect(response.status, kind).toBe(200);
      expect(response.body, kind).toMatchObject({ id, ...expected });
      const list = await call(sandbox, 'GET', `/api/v1/${kind}`, { token });
      expect(list.status, kind).toBe(200);
      expect(Array.isArray(list.body), kind).toBe(true);
    }
  });

  it('lists the seed', async () => {
    const token = sandbox.tokens.full;
    expect(((await call(sandbox, 'GET', '/api/v1/contacts', { token })).body as unknown[]).length).toBe(10);
    expect(((await call(sandbox, 'GET', '/api/v1/shipping_modes', { token })).body as unknown[]).length).toBe(
      4,
    );
    const packagings = (await call(sandbox, 'GET', '/api/v1/packagings', { token })).body as Array<{
      id: number;
    }>;
    expect(packagings[0]).toMatchObject({
      id: 1101,
      name: 'Pot 20 cl',
      productCode: 'CRF-30',
      ean: expect.any(String),
    });
  });

  it('answers 404 problem+json to unknown ids, entities and paths', async () => {
    const token = sandbox.tokens.partner;
    for (const path of [
      '/api/v1/orders/1',
      '/api/v1/widgets',
      '/api/v1/widgets/1',
      '/api/v1/orders/1/items',
      '/api/v1',
      '/',
    ]) {
      const response = await call(sandbox, 'GET', path, { token });
      expect(response.status, path).toBe(404);
      expect(response.headers['content-type'], path).toBe('application/problem+json');
      expect(response.body, path).toMatchObject({ status: 404 });
    }
  });

  it('answers 405 with Allow to a wrong method', async () => {
    const token = sandbox.tokens.partner;
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/api/v1/orders', 'GET, POST'],
      ['PUT', '/api/v1/orders', 'GET, POST'],
      ['POST', '/api/v1/packaging_references', 'GET'],
      ['POST', '/api/v1/webhooks', 'GET, PUT'],
      ['DELETE', '/api/v1/orders/10001', 'GET'],
      ['PUT', '/api/v1/webhooks/available', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const response = await call(sandbox, method, path, { token, body: {} });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.allow, `${method} ${path}`).toBe(allow);
    }
  });

  it('treats a trailing slash as the same endpoint and logs the query', async () => {
    const response = await call(sandbox, 'GET', '/api/v1/shipping_modes/?page=2', {
      token: sandbox.tokens.partner,
    });
    expect(response.status).toBe(200);
    expect(sandbox.requests.at(-1)).toMatchObject({ path: '/api/v1/shipping_modes/', query: { page: '2' } });
  });
});
