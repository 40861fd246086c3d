// How an error answer to POST /api/v1/contact_references is read as "the service already has it":
// a 409 whatever its body, the existing id looked for leniently (docs/assumptions.md).
import { describe, expect, it } from 'vitest';
import { existingContactReference } from '../../../src/import/send/already-exists.js';

describe('existingContactReference', () => {
  it("reads the sandbox's 409: the id from existingId", () => {
    const body = {
      type: 'conflict',
      title: 'Conflict',
      status: 409,
      detail: 'contact.externalReference "PART-C-0001" is already the contact reference 301',
      existingId: 301,
    };
    expect(existingContactReference(409, body)).toEqual({ id: 301 });
  });

  it('finds the id in other fields, one level down, or in the text of the answer', () => {
    expect(existingContactReference(409, { existing_id: '302' })).toEqual({ id: 302 });
    expect(existingContactReference(409, { contactReferenceId: 'cr_77' })).toEqual({ id: 'cr_77' });
    expect(existingContactReference(409, { existing: { id: 303, contact: {} } })).toEqual({ id: 303 });
    expect(existingContactReference(409, { message: 'Already the contact reference #304.' })).toEqual({
      id: 304,
    });
    expect(existingContactReference(409, { error: 'duplicate external reference (id: 305)' })).toEqual({
      id: 305,
    });
    expect(existingContactReference(409, 'contact reference 306 already has this externalReference')).toEqual(
      {
        id: 306,
      },
    );
  });

  it('a 409 without an id in it is still "already there", with no id', () => {
    expect(existingContactReference(409, { title: 'Conflict' })).toEqual({});
    expect(existingContactReference(409, undefined)).toEqual({});
    expect(existingContactReference(409, '')).toEqual({});
  });

  it('a 400 or 422 is "already there" only when a field names the existing id; anything else is not', () => {
    expect(existingContactReference(422, { existingId: 307, detail: 'duplicate' })).toEqual({ id: 307 });
    expect(existingContactReference(400, { existing: { id: 308 } })).toEqual({ id: 308 });
    expect(existingContactReference(422, { detail: 'contact.email: id 12 is not an e-mail address' })).toBe(
      undefined,
    );
    expect(existingContactReference(500, { existingId: 309 })).toBe(undefined);
    expect(existingContactReference(404, { title: 'Not Found' })).toBe(undefined);
  });
});
