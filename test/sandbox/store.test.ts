// The sandbox's state: seed tables, created orders, contact references and subscriptions, reset,
// and a data folder replayed at the next start with ids that go on after the largest seen.
import { describe, expect, it } from 'vitest';
import { loadSeed } from '../../src/sandbox/seed.js';
import { ORDER_ID_OFFSET, orderCode, SandboxStore } from '../../src/sandbox/store.js';
import { tempDir } from '../support/cli.js';

const seed = loadSeed();
const NOW = new Date('2026-03-04T05:06:07.000Z');
const ORDER = { externalId: 'E-1', contact: { internalReferenceId: 301 }, items: [] };
const CONTACT = {
  contact: { externalReference: 'R-1', firstName: 'Ana', lastName: 'Ré', email: 'ana@re.fr' },
  customer: { name: 'Ré' },
};

describe('SandboxStore', () => {
  it('serves the seed tables by id, and their list as cached JSON', async () => {
    const store = await SandboxStore.open(seed);
    const reference = seed.packagingReferences[0]!;
    expect(store.get('packaging_references', String(reference.id))).toBe(reference);
    expect(store.has('packaging_references', reference.id)).toBe(true);
    expect(store.has('packaging_references', 999_999_999)).toBe(false);
    const json = store.listJson('packaging_references');
    expect(JSON.parse(json.toString())).toEqual(seed.packagingReferences);
    expect(store.listJson('packaging_references')).toBe(json);
  });

  it('creates orders with ids above the offset and yearly codes, ignoring fields the service owns', async () => {
    const store = await SandboxStore.open(seed);
    const first = store.createOrder({ ...ORDER, id: 1, code: 'MINE', status: 'validated' }, NOW);
    expect(first).toEqual({
      id: ORDER_ID_OFFSET + 1,
      code: 'SO-2026-000001',
      status: 'pending',
      externalId: 'E-1',
      externalReference: undefined,
      contact: { internalReferenceId: 301 },
      items: [],
      createdAt: '2026-03-04T05:06:07.000Z',
    });
    expect(store.createOrder(ORDER, NOW).code).toBe('SO-2026-000002');
    expect(store.pendingOrders().map((order) => order.id)).toEqual([10_001, 10_002]);
    // The list of a table that changes is encoded anew each time.
    expect(JSON.parse(store.listJson('orders').toString())).toHaveLength(2);
  });

  it('validates an order once', async () => {
    const store = await SandboxStore.open(seed);
    const order = store.createOrder(ORDER, NOW);
    const later = new Date('2026-03-04T05:07:00.000Z');
    expect(store.markValidated(order.id, later)).toMatchObject({
      status: 'validated',
      validatedAt: '2026-03-04T05:07:00.000Z',
    });
    expect(store.markValidated(order.id)).toBeUndefined();
    expect(store.markValidated(123)).toBeUndefined();
    expect(store.pendingOrders()).toEqual([]);
  });

  it('numbers contact references after the seed and finds them by external reference', async () => {
    const store = await SandboxStore.open(seed);
    const maxSeedId = Math.max(...seed.contactReferences.map((reference) => reference.id));
    const record = store.addContactReference({ id: 7, ...CONTACT });
    expect(record).toEqual({ id: maxSeedId + 1, ...CONTACT });
    expect(Object.keys(record)[0]).toBe('id');
    expect(store.contactReferenceByExternalReference('R-1')).toBe(record);
    expect(store.contactReferenceByExternalReference('r-1')).toBeUndefined();
    const seeded = seed.contactReferences[0]!;
    expect(store.contactReferenceByExternalReference(seeded.contact.externalReference)).toBe(seeded);
  });

  it('subscribes an address to an event once', async () => {
    const store = await SandboxStore.open(seed);
    const first = store.subscribe('sales_order_validated', 'http://127.0.0.1:1/a');
    expect(first).toEqual({
      subscription: { id: 1, event: 'sales_order_validated', url: 'http://127.0.0.1:1/a' },
      created: true,
    });
    expect(store.subscribe('sales_order_validated', 'http://127.0.0.1:1/a')).toEqual({
      subscription: first.subscription,
      created: false,
    });
    store.subscribe('sales_order_validated', 'http://127.0.0.1:1/b');
    store.subscribe('other', 'http://127.0.0.1:1/a');
    expect(store.subscribersOf('sales_order_validated').map((s) => s.url)).toEqual([
      'http://127.0.0.1:1/a',
      'http://127.0.0.1:1/b',
    ]);
  });

  it('goes back to the seed on reset, numbering again from the start', async () => {
    const store = await SandboxStore.open(seed);
    store.createOrder(ORDER, NOW);
    store.addContactReference(CONTACT);
    store.subscribe('e', 'http://127.0.0.1:1/');
    store.reset();
    expect(store.orders()).toEqual([]);
    expect(store.contactReferenceByExternalReference('R-1')).toBeUndefined();
    expect(store.list('contact_references')).toHaveLength(seed.contactReferences.length);
    expect(store.subscribe('e', 'http://127.0.0.1:1/').subscription.id).toBe(1);
    expect(store.createOrder(ORDER, NOW).id).toBe(ORDER_ID_OFFSET + 1);
  });

  it('replays a data folder at open, and goes on after the largest ids', async () => {
    const dataDir = tempDir('ordercli-store-');
    const first = await SandboxStore.open(seed, dataDir);
    const order = first.createOrder(ORDER, NOW);
    first.createOrder(ORDER, NOW);
    first.markValidated(order.id, NOW);
    const contact = first.addContactReference(CONTACT);
    first.subscribe('e', 'http://127.0.0.1:1/');
    first.close();

    const second = await SandboxStore.open(seed, dataDir);
    expect(second.order(order.id)).toMatchObject({ status: 'validated', validatedAt: NOW.toISOString() });
    expect(second.pendingOrders()).toHaveLength(1);
    expect(second.contactReferenceByExternalReference('R-1')).toEqual(contact);
    expect(second.subscribe('e', 'http://127.0.0.1:1/').created).toBe(false);
    expect(second.createOrder(ORDER, NOW).code).toBe('SO-2026-000003');
    expect(
      second.addContactReference({ ...CONTACT, contact: { ...CONTACT.contact, externalReference: 'R-2' } })
        .id,
    ).toBe(contact.id + 1);
    second.reset();
    second.close();

    const third = await SandboxStore.open(seed, dataDir);
    expect(third.orders()).toEqual([]);
    third.close();
  });

  it('writes order codes with the year and a six-digit sequence', () => {
    expect(orderCode(2026, 123)).toBe('SO-2026-000123');
    expect(orderCode(2027, 1_234_567)).toBe('SO-2027-1234567');
  });
});
