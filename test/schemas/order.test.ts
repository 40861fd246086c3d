// The order resource's rules, as validateOrder reports them: every problem at once, each by its field.
import { describe, expect, it } from 'vitest';
import { validateOrder } from '../../src/schemas/order.js';

const ITEM = { internalReferenceId: 401, orderedQuantity: 2 };
const ORDER = { contact: { internalReferenceId: 301 }, items: [ITEM] };

function problems(order: unknown, requireExternalId = false): string[] {
  return validateOrder(order, { requireExternalId }).map(({ field, message }) => `${field}: ${message}`);
}

describe('validateOrder', () => {
  it('accepts an order whose contact and items are each named one way, unknown fields kept', () => {
    expect(problems(ORDER)).toEqual([]);
    expect(problems({ ...ORDER, shippingMode: { id: 3 }, contact: { id: 'CRM-17' } })).toEqual([]);
    expect(problems({ ...ORDER, items: [{ packaging: 1101, orderedQuantity: 1 }] })).toEqual([]);
  });

  it('requires the contact and at least one item', () => {
    expect(problems({})).toEqual(['contact: is required', 'items: is required']);
    expect(problems({ ...ORDER, items: [] })).toEqual(['items: must list at least one item']);
  });

  it('names a contact or an item named in no way, or in two', () => {
    expect(problems({ contact: {}, items: [{ orderedQuantity: 1 }] })).toEqual([
      'contact: name the contact with one of id, externalReferenceId, internalReferenceId, externalReference',
      'items[0]: name the packaging with one of packaging, externalReferenceId, internalReferenceId',
    ]);
    expect(
      problems({ contact: { id: 1, internalReferenceId: 301 }, items: [{ ...ITEM, packaging: 1101 }] }),
    ).toEqual([
      'contact: name the contact in exactly one way, not with both id and internalReferenceId',
      'items[0]: name the packaging in exactly one way, not with both packaging and internalReferenceId',
    ]);
  });

  it('says what a value must be, and what it is', () => {
    expect(
      problems({
        externalId: '  ',
        contact: { internalReferenceId: '301' },
        items: [
          { internalReferenceId: 401, orderedQuantity: 0 },
          { internalReferenceId: 402, orderedQuantity: 1.5 },
        ],
      }),
    ).toEqual([
      'externalId: must not be empty',
      'contact.internalReferenceId: must be a whole number, not the text "301"',
      'items[0].orderedQuantity: must be a whole number above zero, not 0',
      'items[1].orderedQuantity: must be a whole number, not number 1.5',
    ]);
    expect(problems({ ...ORDER, contact: { id: -3 } })).toEqual([
      'contact.id: must be a whole number above zero, not -3',
    ]);
    expect(problems({ ...ORDER, contact: { id: true } })).toEqual([
      'contact.id: must be a positive whole number or a non-empty text',
    ]);
    expect(problems([ORDER])).toEqual(['(body): must be an object, not a list']);
  });

  it('requires the contact data and the customer name with contact.externalReference', () => {
    expect(problems({ ...ORDER, contact: { externalReference: 'C-1', firstName: 'Ana' } })).toEqual([
      'contact.lastName: is required when the contact is sent as data (contact.externalReference)',
      'contact.email: is required when the contact is sent as data (contact.externalReference)',
      'customer.name: is required when the contact is sent as data (contact.externalReference)',
    ]);
    const complete = {
      ...ORDER,
      contact: { externalReference: 'C-1', firstName: 'Ana', lastName: 'Ré', email: 'ana@re.fr' },
      customer: { name: 'Ré' },
    };
    expect(problems(complete)).toEqual([]);
    expect(problems({ ...complete, contact: { ...complete.contact, email: 'ana at re.fr' } })).toEqual([
      'contact.email: must be an e-mail address such as name@example.com',
    ]);
  });

  it('checks the country code, and the postal code against it', () => {
    expect(problems({ ...ORDER, deliveryAddress: { country: 'fr', zipCode: '1000' } })).toEqual([
      'deliveryAddress.country: must be a two-letter upper-case country code such as FR',
    ]);
    expect(problems({ ...ORDER, deliveryAddress: { country: 'FR', zipCode: '01000' } })).toEqual([]);
    expect(problems({ ...ORDER, deliveryAddress: { country: 'FR', zipCode: '1000' } })).toHaveLength(1);
  });

  it('requires an externalId only when asked, before the other problems', () => {
    expect(problems(ORDER, true)).toEqual(['externalId: is required: it is the key that makes re-runs safe']);
    expect(problems({ ...ORDER, externalId: 'E-1' }, true)).toEqual([]);
    expect(problems({ items: [ITEM] }, true)[0]).toBe(
      'externalId: is required: it is the key that makes re-runs safe',
    );
  });
});
