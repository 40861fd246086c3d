import { Readable } from 'node:stream';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { call, fullAccessOrder, partnerOrder, useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 20, deliveryBackoffMs: 20 });
let partner: string;
let full: string;

beforeAll(() => {
  partner = sandbox.tokens.partner;
  full = sandbox.tokens.full;
});

describe('POST /api/v1/orders', () => {
  it('creates a pending order (201) that becomes validated after the delay', async () => {
    const response = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      body: partnerOrder('EXT-1'),
    });
    expect(response.status).toBe(201);
    const order = response.body as Record<string, unknown>;
    expect(order).toMatchObject({
      status: 'pending',
      externalId: 'EXT-1',
      externalReference: 'CMD-EXT-1',
      contact: { internalReferenceId: 301 },
      items: [
        { internalReferenceId: 401, orderedQuantity: 2 },
        { internalReferenceId: 403, orderedQuantity: 1 },
      ],
    });
    expect(order.code).toMatch(/^SO-\d{4}-000001$/);
    expect(Object.keys(order).slice(0, 5)).toEqual([
      'id',
      'code',
      'status',
      'externalId',
      'externalReference',
    ]);
    expect(typeof order.id).toBe('number');
    expect(Date.parse(order.createdAt as string)).not.toBeNaN();

    await waitFor(() => sandbox.orders()[0]?.status === 'validated', 10_000, 'the validation');
    const fetched = await call(sandbox, 'GET', `/api/v1/orders/${order.id}`, { token: partner });
    expect(fetched.body).toMatchObject({ id: order.id, code: order.code, status: 'validated' });
    expect((fetched.body as { validatedAt?: string }).validatedAt).toBeDefined();
  });

  it('ignores client values for the fields the service owns, and keeps unknown fields', async () => {
    const body = {
      ...partnerOrder('EXT-2'),
      id: 5,
      code: 'MINE',
      status: 'validated',
      shippingMode: { id: 2 },
    };
    const response = await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body });
    expect(response.body).toMatchObject({ status: 'pending', shippingMode: { id: 2 } });
    expect((response.body as { id: number }).id).not.toBe(5);
    expect((response.body as { code: string }).code).not.toBe('MINE');
  });

  it('numbers codes in sequence and accepts a duplicate externalId (the interface does not refuse it)', async () => {
    const first = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      body: partnerOrder('DUP'),
    });
    const second = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      body: partnerOrder('DUP'),
    });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect((second.body as { code: string }).code).toMatch(/-000002$/);
    expect(sandbox.orders().filter((order) => order.externalId === 'DUP')).toHaveLength(2);
  });

  it('answers 422 problem+json listing every field problem', async () => {
    const body = {
      externalId: 'BAD-1',
      contact: { externalReference: 'C-1', email: 'not-an-email' },
      items: [{ internalReferenceId: 401, orderedQuantity: 0 }, { orderedQuantity: 1 }],
    };
    const response = await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body });
    expect(response.status).toBe(422);
    expect(response.headers['content-type']).toBe('application/problem+json');
    const problem = response.body as {
      type: string;
      title: string;
      status: number;
      errors: Array<{ field: string }>;
    };
    expect(problem).toMatchObject({
      type: 'https://ordercli.dev/problems/validation',
      title: 'The order is invalid',
      status: 422,
    });
    expect(problem.errors.map((error) => error.field).sort()).toEqual(
      [
        'contact.email',
        'contact.firstName',
        'contact.lastName',
        'customer.name',
        'items[0].orderedQuantity',
        'items[1]',
      ].sort(),
    );
    for (const error of problem.errors)
      expect(error).toEqual({ field: error.field, message: expect.any(String) });
    expect(sandbox.orders()).toHaveLength(0);
  });

  it('refuses unknown and inactive references with 422', async () => {
    const body = {
      ...partnerOrder('BAD-2'),
      contact: { internalReferenceId: 399 },
      items: [
        { internalReferenceId: 417, orderedQuantity: 1 },
        { internalReferenceId: 9999, orderedQuantity: 1 },
      ],
    };
    const response = await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body });
    expect(response.status).toBe(422);
    const errors = (response.body as { errors: Array<{ field: string; message: string }> }).errors;
    expect(errors).toEqual([
      {
        field: 'contact.internalReferenceId',
        message: expect.stringMatching(/no contact reference has id 399/),
      },
      { field: 'items[0].internalReferenceId', message: expect.stringMatching(/417 .*is inactive/) },
      {
        field: 'items[1].internalReferenceId',
        message: expect.stringMatching(/no packaging reference has id 9999/),
      },
    ]);
  });

  it('enforces the access rules: contact.id needs CRM, item.packaging needs catalog', async () => {
    const asPartner = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      body: fullAccessOrder(),
    });
    expect(asPartner.status).toBe(422);
    expect((asPartner.body as { errors: Array<{ field: string; message: string }> }).errors).toEqual([
      { field: 'contact.id', message: expect.stringMatching(/CRM access/) },
      { field: 'items[0].packaging', message: expect.stringMatching(/catalog access/) },
    ]);

    const asFull = await call(sandbox, 'POST', '/api/v1/orders', { token: full, body: fullAccessOrder() });
    expect(asFull.status).toBe(201);

    const unknown = {
      ...fullAccessOrder('F-2'),
      contact: { id: 999 },
      items: [{ packaging: 42, orderedQuantity: 1 }],
    };
    const refused = await call(sandbox, 'POST', '/api/v1/orders', { token: full, body: unknown });
    expect((refused.body as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual([
      'contact.id',
      'items[0].packaging',
    ]);
  });

  it('accepts external references and the contact-data form as they are', async () => {
    const byExternal = {
      externalId: 'X-1',
      contact: { externalReferenceId: 'MY-CONTACT-7' },
      items: [{ externalReferenceId: 'MY-SKU-1', orderedQuantity: 3 }],
    };
    expect((await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body: byExternal })).status).toBe(
      201,
    );
    const byData = {
      externalId: 'X-2',
      contact: {
        externalReference: 'MY-CONTACT-8',
        firstName: 'Éloïse',
        lastName: 'Crêpin',
        email: 'eloise@example.fr',
      },
      customer: { name: 'Crêperie Éloïse' },
      items: [{ internalReferenceId: 431, orderedQuantity: 24 }],
    };
    expect((await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body: byData })).status).toBe(
      201,
    );
  });

  it('answers 400 to a malformed or empty body and 413 to one over 1 MiB', async () => {
    const malformed = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      raw: '{"externalId": ',
    });
    expect(malformed.status).toBe(400);
    expect((malformed.body as { detail: string }).detail).toMatch(/not valid JSON/);
    const empty = await call(sandbox, 'POST', '/api/v1/orders', { token: partner, raw: '' });
    expect(empty.status).toBe(400);
    const huge = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      raw: JSON.stringify({ ...partnerOrder('BIG'), padding: 'x'.repeat(1024 * 1024) }),
    });
    expect(huge.status).toBe(413);
    expect(sandbox.orders()).toHaveLength(0);
  });

  it('answers 413 to a chunked body that grows over 1 MiB, without reading it all', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const body = new Readable({
      read() {
        this.push(sent++ < 32 ? chunk : null);
      },
    });
    const response = await request(`${sandbox.url}/api/v1/orders`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${partner}`, 'content-type': 'application/json' },
    });
    expect(response.headers['transfer-encoding']).toBeUndefined();
    expect(response.statusCode).toBe(413);
    expect(JSON.parse(await response.body.text())).toMatchObject({ status: 413 });
  });

  it('lists created orders with GET /orders', async () => {
    await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body: partnerOrder('L-1') });
    await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body: partnerOrder('L-2') });
    const list = await call(sandbox, 'GET', '/api/v1/orders', { token: partner });
    expect((list.body as Array<{ externalId: string }>).map((order) => order.externalId)).toEqual([
      'L-1',
      'L-2',
    ]);
  });
});

describe('GET /api/v1/orders/{id}', () => {
  it('shows a created order as stored, not validated yet: validated false, validatedAt null', async () => {
    // Validation an hour away: the order stays pending for the whole test.
    const slow = await startSandbox({ port: 0, quiet: true, validationDelayMs: 3_600_000 });
    try {
      const created = await call(slow, 'POST', '/api/v1/orders', {
        token: slow.tokens.partner,
        body: partnerOrder('GET-1'),
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ status: 'pending', validated: false, validatedAt: null });
      const { id } = created.body as { id: number };
      for (const token of [slow.tokens.partner, slow.tokens.full]) {
        const fetched = await call(slow, 'GET', `/api/v1/orders/${id}`, { token });
        expect(fetched.status).toBe(200);
        expect(fetched.body).toEqual(created.body);
      }
      expect(slow.pending().validations).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it('shows it validated once the delay has passed: validated true and validatedAt', async () => {
    const created = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      body: partnerOrder('GET-2'),
    });
    const order = created.body as Record<string, unknown>;
    await waitFor(() => sandbox.pending().validations === 0, 10_000, 'the validation');
    const fetched = await call(sandbox, 'GET', `/api/v1/orders/${order.id}`, { token: partner });
    expect(fetched.status).toBe(200);
    const shown = fetched.body as Record<string, unknown>;
    expect(shown).toEqual({
      ...order,
      status: 'validated',
      validated: true,
      validatedAt: expect.any(String),
    });
    expect(Date.parse(shown.validatedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(order.createdAt as string),
    );
    // The validation state comes last, after the order as stored.
    expect(Object.keys(shown).slice(-3)).toEqual(['createdAt', 'validated', 'validatedAt']);
    const list = await call(sandbox, 'GET', '/api/v1/orders', { token: full });
    expect(list.body).toEqual([shown]);
  });

  it('answers 404 to an unknown id and 401 without a token', async () => {
    const created = await call(sandbox, 'POST', '/api/v1/orders', {
      token: partner,
      body: partnerOrder('GET-3'),
    });
    const { id } = created.body as { id: number };
    const unknown = await call(sandbox, 'GET', `/api/v1/orders/${id + 1}`, { token: partner });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ status: 404, detail: `no orders record has id "${id + 1}"` });
    const anonymous = await call(sandbox, 'GET', `/api/v1/orders/${id}`);
    expect(anonymous.status).toBe(401);
    const wrong = await call(sandbox, 'GET', `/api/v1/orders/${id}`, { token: 'not-a-token' });
    expect(wrong.status).toBe(401);
  });
});

describe('contact references', () => {
  it('lists the seeded references and adds one (201) that orders can then use', async () => {
    const list = await call(sandbox, 'GET', '/api/v1/contact_references', { token: partner });
    expect((list.body as unknown[]).length).toBe(8);
    expect((list.body as unknown[])[0]).toEqual({
      id: 301,
      contact: {
        externalReference: 'PART-C-0001',
        firstName: 'Camille',
        lastName: 'Rousseau',
        email: 'camille.rousseau@maison-rousseau.fr',
      },
      customer: { name: 'Maison Rousseau' },
    });

    const body = {
      contact: {
        externalReference: 'NEW-1',
        firstName: 'Aurélie',
        lastName: 'Vasseur',
        email: 'aurelie@vasseur.fr',
      },
      customer: { name: 'Vasseur Traiteur' },
    };
    const created = await call(sandbox, 'POST', '/api/v1/contact_references', { token: partner, body });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: 309, ...body });
    const order = { ...partnerOrder('CR-1'), contact: { internalReferenceId: 309 } };
    expect((await call(sandbox, 'POST', '/api/v1/orders', { token: partner, body: order })).status).toBe(201);
    expect((await call(sandbox, 'GET', '/api/v1/contact_references/309', { token: partner })).body).toEqual({
      id: 309,
      ...body,
    });
  });

  it('answers 422 to an invalid contact reference', async () => {
    const response = await call(sandbox, 'POST', '/api/v1/contact_references', {
      token: partner,
      body: { contact: { externalReference: 'X', firstName: 'A', lastName: 'B', email: 'nope' } },
    });
    expect(response.status).toBe(422);
    expect((response.body as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual([
      'contact.email',
      'customer',
    ]);
  });
});
