// `POST /api/v1/contact_references` in the sandbox: one contact reference per external reference.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { call, useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox();

function body(externalReference: string, firstName = 'Jeanne') {
  return {
    contact: { externalReference, firstName, lastName: 'Roux', email: 'jeanne.roux@epicerie-roux.fr' },
    customer: { name: 'Épicerie Roux' },
  };
}

describe('POST /api/v1/contact_references', () => {
  it('creates one (201, the new id) and answers a second with the same external reference 409, creating nothing', async () => {
    const token = sandbox.tokens.partner;
    const created = await call(sandbox, 'POST', '/api/v1/contact_references', {
      token,
      body: body('PART-C-0042'),
    });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    const again = await call(sandbox, 'POST', '/api/v1/contact_references', {
      token,
      body: body('PART-C-0042', 'Jeannette'),
    });
    expect(again.status).toBe(409);
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(again.body).toMatchObject({
      status: 409,
      title: 'Conflict',
      detail: `contact.externalReference "PART-C-0042" is already the contact reference ${id}`,
      existingId: id,
    });
    const list = (await call(sandbox, 'GET', '/api/v1/contact_references', { token })).body as {
      contact: { externalReference: string };
    }[];
    expect(list.filter((record) => record.contact.externalReference === 'PART-C-0042')).toHaveLength(1);
  });

  it('refuses a seed reference’s external reference, compares exactly, and forgets created ones on reset', async () => {
    const token = sandbox.tokens.full;
    const seed = await call(sandbox, 'POST', '/api/v1/contact_references', {
      token,
      body: body('PART-C-0001'),
    });
    expect(seed.status).toBe(409);
    expect(seed.body).toMatchObject({ existingId: 301 });
    const otherCase = await call(sandbox, 'POST', '/api/v1/contact_references', {
      token,
      body: body('part-c-0001'),
    });
    expect(otherCase.status).toBe(201);
    sandbox.reset();
    const afterReset = await call(sandbox, 'POST', '/api/v1/contact_references', {
      token,
      body: body('part-c-0001'),
    });
    expect(afterReset.status).toBe(201);
  });

  it('still refuses the duplicate after a restart on the same data folder', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'ordercli-sandbox-'));
    try {
      const first = await startSandbox({ port: 0, quiet: true, dataDir });
      const token = first.tokens.partner;
      expect(
        (await call(first, 'POST', '/api/v1/contact_references', { token, body: body('PART-C-0077') }))
          .status,
      ).toBe(201);
      await first.close();
      const second = await startSandbox({ port: 0, quiet: true, dataDir });
      try {
        const again = await call(second, 'POST', '/api/v1/contact_references', {
          token,
          body: body('PART-C-0077'),
        });
        expect(again.status).toBe(409);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
