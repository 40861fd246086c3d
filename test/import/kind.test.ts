// What an import sends, as the pipeline asks it: contact references read, keyed and reported.
import { describe, expect, it } from 'vitest';
import { validateImport } from '../../src/import/check/validate.js';
import { CONTACT_REFERENCE_IMPORT, ORDER_IMPORT } from '../../src/import/kind.js';
import { reportRecord } from '../../src/import/report/report.js';
import { openOrderSource } from '../../src/import/source.js';
import { lines, readAll, rejection, sourceContext, writeInput } from '../support/import-input.js';

const HEADER = 'contact.externalReference,contact.firstName,contact.lastName,contact.email,customer.name';

describe('contact references from CSV', () => {
  it('makes one record of each row, even adjacent rows with the same key, keyed by contact.externalReference', async () => {
    const ctx = sourceContext();
    writeInput(
      ctx.cwd,
      'contacts.csv',
      `${HEADER}\nPART-C-1,Jeanne,Roux,jeanne@roux.fr,Épicerie Roux\nPART-C-1,Jeanne,Roux,jeanne@roux.fr,Épicerie Roux\n`,
    );
    const source = await openOrderSource('contacts.csv', { kind: CONTACT_REFERENCE_IMPORT }, ctx);
    const records = await readAll(source);
    expect(records.map((record) => [record.key, record.location.line])).toEqual([
      ['PART-C-1', 2],
      ['PART-C-1', 3],
    ]);
    expect(records[0]!.body).toEqual({
      contact: {
        externalReference: 'PART-C-1',
        firstName: 'Jeanne',
        lastName: 'Roux',
        email: 'jeanne@roux.fr',
      },
      customer: { name: 'Épicerie Roux' },
    });
    const validation = await validateImport(source, { kind: CONTACT_REFERENCE_IMPORT });
    expect(lines(validation.problems)).toEqual([
      'contacts.csv:3: contact.externalReference: "PART-C-1" is also the contact.externalReference of the contact reference on line 2: each contact reference needs its own',
    ]);
  });

  it('keeps an order column out of a contact reference file, and a contact one in an order file', async () => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, 'contacts.csv', `${HEADER},externalId\nPART-C-1,Jeanne,Roux,jeanne@roux.fr,Roux,X\n`);
    const error = await rejection(openOrderSource('contacts.csv', { kind: CONTACT_REFERENCE_IMPORT }, ctx));
    expect(lines(error.problems ?? [])).toContain(
      'contacts.csv:1: externalId: is not a column ordercli knows',
    );
    // The same file is a valid header for orders: the columns come with the kind.
    await expect(openOrderSource('contacts.csv', {}, ctx)).resolves.toBeDefined();
  });

  it('suggests the contact column a header was meant to be', async () => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, 'contacts.csv', 'contact.externalReference,email\nPART-C-1,jeanne@roux.fr\n');
    const error = await rejection(openOrderSource('contacts.csv', { kind: CONTACT_REFERENCE_IMPORT }, ctx));
    expect(lines(error.problems ?? [])[0]).toBe(
      'contacts.csv:1: email: is not a column ordercli knows (did you mean contact.email?)',
    );
  });
});

describe('contact references from JSON', () => {
  it('keys each record by its contact.externalReference, and validates it with the reference schema', async () => {
    const ctx = sourceContext();
    writeInput(
      ctx.cwd,
      'contacts.ndjson',
      [
        JSON.stringify({
          contact: {
            externalReference: 'PART-C-7',
            firstName: 'Paul',
            lastName: 'Garnier',
            email: 'paul@garnier.fr',
          },
          customer: { name: 'Garnier' },
        }),
        JSON.stringify({ externalId: 'NOT-THE-KEY', contact: { firstName: 'Rose' } }),
      ].join('\n'),
    );
    const source = await openOrderSource('contacts.ndjson', { kind: CONTACT_REFERENCE_IMPORT }, ctx);
    const records = await readAll(source);
    expect(records.map((record) => record.key)).toEqual(['PART-C-7', undefined]);
    const validation = await validateImport(source, { kind: CONTACT_REFERENCE_IMPORT });
    expect(lines(validation.problems)).toEqual([
      'contacts.ndjson:2: contact.externalReference: is required',
      'contacts.ndjson:2: contact.lastName: is required',
      'contacts.ndjson:2: contact.email: is required',
      'contacts.ndjson:2: customer.name: is required',
    ]);
  });
});

describe('the report of a kind', () => {
  it('names the key column by its field and leaves out what the kind has not', () => {
    const result = {
      index: 0,
      key: 'PART-C-7',
      status: 'created' as const,
      httpStatus: 201,
      id: 312,
      location: { file: 'contacts.csv', line: 2, endLine: 2 },
    };
    expect(reportRecord(result, CONTACT_REFERENCE_IMPORT)).toEqual({
      'contact.externalReference': 'PART-C-7',
      status: 'created',
      httpStatus: 201,
      id: 312,
      message: null,
      line: 2,
    });
    expect(Object.keys(reportRecord(result))).toEqual([...ORDER_IMPORT.reportColumns]);
  });
});
