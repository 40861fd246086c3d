/**
 * The sandbox's in-memory state: seed records (read-only) and what clients create (orders,
 * contact references, webhook subscriptions). Every table is indexed by id so that a request
 * costs the same with ten orders or a million; with a data folder, changes go to a journal.
 */
import { type JournalEntry, StateJournal } from './journal.js';
import type { ContactReferenceRecord, SeedData, SeedRecord } from './seed.js';

/** The entity kinds served under `/api/v1/<entity>` and `/api/v1/<entity>/{id}`. */
export const ENTITY_KINDS = [
  'orders',
  'contacts',
  'customers',
  'packagings',
  'packaging_references',
  'contact_references',
  'shipping_modes',
  'webhooks',
] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Where a created order is in the sandbox's life cycle: validated after the validation delay. */
export type StoredOrderStatus = 'pending' | 'validated';

/** A created order as the sandbox returns it: the order as sent plus the fields the service owns. */
export interface StoredOrder {
  id: number;
  code: string;
  status: StoredOrderStatus;
  externalId?: string;
  externalReference?: string;
  contact: Record<string, unknown>;
  items: Array<Record<string, unknown>>;
  createdAt: string;
  validatedAt?: string;
  [field: string]: unknown;
}

/**
 * A subscription as stored. Its key is the sandbox's webhook key, added when it is shown or used,
 * so that the data folder never holds a key and a restart with a new key applies to all.
 */
export interface WebhookSubscriptionRecord {
  id: number;
  event: string;
  url: string;
}

/** Order ids start here, so that an id is never mistaken for the sequence number in a code. */
export const ORDER_ID_OFFSET = 10_000;
/** Fields of an order that the service sets; a client's values for them are ignored. */
const SERVER_OWNED_ORDER_FIELDS = new Set(['id', 'code', 'status', 'createdAt', 'validatedAt']);

type AnyRecord = { id: number | string; [field: string]: unknown };

interface EntityTable {
  readonly byId: Map<string, AnyRecord>;
  /** Seed tables never change, so their list is encoded once (50,000 references included). */
  readonly frozen: boolean;
  cachedJson?: Buffer;
}

export class SandboxStore {
  private readonly seed: SeedData;
  private readonly journal: StateJournal | undefined;
  private readonly tables = new Map<EntityKind, EntityTable>();
  /** Subscription ids by `event + ' ' + url`, so a re-PUT updates instead of duplicating. */
  private readonly subscriptionIndex = new Map<string, WebhookSubscriptionRecord>();
  /** Contact references by `contact.externalReference`, so that a second one is refused (409). */
  private readonly contactReferenceIndex = new Map<string, ContactReferenceRecord>();
  private orderSequence = 0;
  private nextContactReferenceId = 1;
  private nextSubscriptionId = 1;

  private constructor(seed: SeedData, journal: StateJournal | undefined) {
    this.seed = seed;
    this.journal = journal;
    this.loadSeedTables();
  }

  /** Builds the store from the seed and, with a data folder, replays what was recorded there. */
  static async open(seed: SeedData, dataDir?: string): Promise<SandboxStore> {
    if (dataDir === undefined) return new SandboxStore(seed, undefined);
    const { journal, entries } = await StateJournal.open(dataDir);
    const store = new SandboxStore(seed, journal);
    for (const entry of entries) store.apply(entry);
    return store;
  }

  get(kind: EntityKind, id: string): AnyRecord | undefined {
    return this.table(kind).byId.get(id);
  }

  has(kind: EntityKind, id: string | number): boolean {
    return this.table(kind).byId.has(String(id));
  }

  list(kind: EntityKind): AnyRecord[] {
    return Array.from(this.table(kind).byId.values());
  }

  /** The encoded JSON of a whole list, cached for the read-only seed tables. */
  listJson(kind: EntityKind): Buffer {
    const table = this.table(kind);
    if (!table.frozen) return Buffer.from(JSON.stringify(this.list(kind)));
    table.cachedJson ??= Buffer.from(JSON.stringify(this.list(kind)));
    return table.cachedJson;
  }

  order(id: number): StoredOrder | undefined {
    return this.table('orders').byId.get(String(id)) as StoredOrder | undefined;
  }

  orders(): StoredOrder[] {
    return this.list('orders') as StoredOrder[];
  }

  /** Orders still waiting for validation (after a restart with a data folder, say). */
  pendingOrders(): StoredOrder[] {
    return this.orders().filter((order) => order.status === 'pending');
  }

  /** Stores a new pending order; the body has already been validated. */
  createOrder(body: Record<string, unknown>, now: Date = new Date()): StoredOrder {
    this.orderSequence++;
    const clientFields = Object.fromEntries(
      Object.entries(body).filter(([key]) => !SERVER_OWNED_ORDER_FIELDS.has(key)),
    );
    const order: StoredOrder = {
      id: ORDER_ID_OFFSET + this.orderSequence,
      code: orderCode(now.getUTCFullYear(), this.orderSequence),
      status: 'pending',
      externalId: body.externalId as string | undefined,
      externalReference: body.externalReference as string | undefined,
      ...(clientFields as Pick<StoredOrder, 'contact' | 'items'>),
      createdAt: now.toISOString(),
    };
    this.table('orders').byId.set(String(order.id), order);
    this.journal?.append({ op: 'order', record: order });
    return order;
  }

  markValidated(id: number, now: Date = new Date()): StoredOrder | undefined {
    const order = this.order(id);
    if (order === undefined || order.status === 'validated') return undefined;
    order.status = 'validated';
    order.validatedAt = now.toISOString();
    this.journal?.append({ op: 'order-validated', id, validatedAt: order.validatedAt });
    return order;
  }

  addContactReference(body: {
    contact: unknown;
    customer: unknown;
    [field: string]: unknown;
  }): ContactReferenceRecord {
    // The service owns the id; `id` comes first in the JSON, as in the seed's records.
    const { id: _clientId, ...fields } = body;
    const record = { id: this.nextContactReferenceId++, ...fields } as ContactReferenceRecord;
    this.putContactReference(record);
    this.journal?.append({ op: 'contact-reference', record });
    return record;
  }

  /** The contact reference with this `contact.externalReference` (compared exactly), if any. */
  contactReferenceByExternalReference(externalReference: string): ContactReferenceRecord | undefined {
    return this.contactReferenceIndex.get(externalReference);
  }

  private putContactReference(record: ContactReferenceRecord): void {
    this.table('contact_references').byId.set(String(record.id), record);
    const externalReference = record.contact?.externalReference;
    if (typeof externalReference === 'string' && !this.contactReferenceIndex.has(externalReference))
      this.contactReferenceIndex.set(externalReference, record);
  }

  /** Subscribes `url` to `event`; a second call for the same pair updates the subscription. */
  subscribe(event: string, url: string): { subscription: WebhookSubscriptionRecord; created: boolean } {
    const existing = this.subscriptionIndex.get(subscriptionKey(event, url));
    if (existing) return { subscription: existing, created: false };
    const subscription: WebhookSubscriptionRecord = { id: this.nextSubscriptionId++, event, url };
    this.putSubscription(subscription);
    this.journal?.append({ op: 'subscription', record: { ...subscription } });
    return { subscription, created: true };
  }

  subscribersOf(event: string): WebhookSubscriptionRecord[] {
    return (this.list('webhooks') as unknown as WebhookSubscriptionRecord[]).filter((s) => s.event === event);
  }

  /** Back to the seed: created records are forgotten, in memory and in the data folder. */
  reset(): void {
    this.journal?.clear();
    this.tables.clear();
    this.subscriptionIndex.clear();
    this.loadSeedTables();
  }

  close(): void {
    this.journal?.close();
  }

  private table(kind: EntityKind): EntityTable {
    const table = this.tables.get(kind);
    if (table === undefined) throw new Error(`unknown entity kind ${kind}`);
    return table;
  }

  private loadSeedTables(): void {
    this.tables.set('contacts', frozenTable(this.seed.contacts));
    this.tables.set('customers', frozenTable(this.seed.customers));
    this.tables.set('packagings', frozenTable(this.seed.packagings));
    this.tables.set(
      'packaging_references',
      frozenTable(this.seed.packagingReferences as unknown as SeedRecord[]),
    );
    this.tables.set('shipping_modes', frozenTable(this.seed.shippingModes));
    this.tables.set('contact_references', { byId: new Map(), frozen: false });
    this.contactReferenceIndex.clear();
    for (const record of this.seed.contactReferences) this.putContactReference(record);
    this.tables.set('orders', { byId: new Map(), frozen: false });
    this.tables.set('webhooks', { byId: new Map(), frozen: false });
    this.orderSequence = 0;
    this.nextContactReferenceId = maxId(this.seed.contactReferences) + 1;
    this.nextSubscriptionId = 1;
  }

  private putSubscription(subscription: WebhookSubscriptionRecord): void {
    this.table('webhooks').byId.set(String(subscription.id), subscription as unknown as AnyRecord);
    this.subscriptionIndex.set(subscriptionKey(subscription.event, subscription.url), subscription);
  }

  /** Replays one journal entry; ids and sequences continue after the largest one seen. */
  private apply(entry: JournalEntry): void {
    switch (entry.op) {
      case 'order': {
        const order = entry.record as StoredOrder;
        this.table('orders').byId.set(String(order.id), order);
        this.orderSequence = Math.max(this.orderSequence, order.id - ORDER_ID_OFFSET);
        break;
      }
      case 'order-validated': {
        const order = this.order(entry.id);
        if (order) {
          order.status = 'validated';
          order.validatedAt = entry.validatedAt;
        }
        break;
      }
      case 'contact-reference': {
        const record = entry.record as ContactReferenceRecord;
        this.putContactReference(record);
        this.nextContactReferenceId = Math.max(this.nextContactReferenceId, record.id + 1);
        break;
      }
      case 'subscription': {
        const subscription = entry.record as unknown as WebhookSubscriptionRecord;
        this.putSubscription(subscription);
        this.nextSubscriptionId = Math.max(this.nextSubscriptionId, subscription.id + 1);
        break;
      }
    }
  }
}

/** `SO-2026-000123`: year of creation and a sequence number padded to six digits. */
export function orderCode(year: number, sequence: number): string {
  return `SO-${year}-${String(sequence).padStart(6, '0')}`;
}

function frozenTable(records: ReadonlyArray<SeedRecord>): EntityTable {
  const byId = new Map<string, AnyRecord>();
  for (const record of records) byId.set(String(record.id), record);
  return { byId, frozen: true };
}

function maxId(records: ReadonlyArray<{ id: number }>): number {
  return records.reduce((max, record) => Math.max(max, record.id), 0);
}

function subscriptionKey(event: string, url: string): string {
  return `${event} ${url}`;
}
