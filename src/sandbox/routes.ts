/**
 * The endpoints of the interface under `/api/v1`, as plain functions from a parsed request to a
 * `SandboxResponse`. Authentication, body parsing and faults happen before, in the server.
 */
import { type Order, validateOrder } from '../schemas/order.js';
import type { ValidationProblem } from '../schemas/problems.js';
import { validateContactReference } from '../schemas/references.js';
import { validateWebhookSubscription } from '../schemas/webhook.js';
import { type AuthLevel, eventsAvailableTo, RIGHT_DESCRIPTIONS, type Right, type Rights } from './auth.js';
import {
  methodNotAllowed,
  notFound,
  ok,
  okJson,
  problem,
  type SandboxResponse,
  validationProblem,
} from './responses.js';
import type { PackagingReferenceRecord } from './seed.js';
import {
  ENTITY_KINDS,
  type EntityKind,
  type SandboxStore,
  type StoredOrder,
  type WebhookSubscriptionRecord,
} from './store.js';

export interface RouteContext {
  store: SandboxStore;
  /** The key of every subscription (shown to the subscriber, sent with each notification). */
  webhookKey: string;
  /** Called once per created order, to schedule its validation. */
  onOrderCreated(order: StoredOrder): void;
}

export interface SandboxRequest {
  method: string;
  /** Path segments after `/api/v1`, decoded. */
  segments: string[];
  body: unknown;
  auth: Exclude<AuthLevel, 'none'>;
  rights: Rights;
}

interface CollectionRoute {
  /** The right needed for the list and its records; none means every authenticated caller. */
  requires?: Right;
  /** The method that creates (POST) or upserts (PUT) on the collection path, if any. */
  write?: {
    method: 'POST' | 'PUT';
    handle: (context: RouteContext, request: SandboxRequest) => SandboxResponse;
  };
}

const ROUTES: Record<EntityKind, CollectionRoute> = {
  orders: { write: { method: 'POST', handle: createOrder } },
  contacts: { requires: 'crm' },
  // Customers are CRM records too; partners name the customer in the order instead.
  customers: { requires: 'crm' },
  packagings: { requires: 'catalog' },
  packaging_references: {},
  contact_references: { write: { method: 'POST', handle: createContactReference } },
  shipping_modes: {},
  webhooks: { write: { method: 'PUT', handle: subscribeWebhook } },
};

/** Dispatches one authenticated API request. */
export function handleApiRequest(context: RouteContext, request: SandboxRequest): SandboxResponse {
  const [collection, id, ...rest] = request.segments;
  if (collection === undefined || !isEntityKind(collection) || rest.length > 0) {
    return notFound(`no endpoint /api/v1/${request.segments.join('/')}; known: ${ENTITY_KINDS.join(', ')}`);
  }
  const route = ROUTES[collection];
  if (collection === 'webhooks' && id === 'available') {
    if (request.method !== 'GET') return methodNotAllowed(request.method, ['GET']);
    return ok(eventsAvailableTo(request.rights).map(({ event, description }) => ({ event, description })));
  }
  if (id !== undefined) {
    if (request.method !== 'GET') return methodNotAllowed(request.method, ['GET']);
    return forbiddenUnless(route.requires, request.rights) ?? getEntity(context, collection, id);
  }
  if (request.method === 'GET') {
    return forbiddenUnless(route.requires, request.rights) ?? listEntities(context, collection);
  }
  if (route.write && request.method === route.write.method) {
    return forbiddenUnless(route.requires, request.rights) ?? route.write.handle(context, request);
  }
  return methodNotAllowed(request.method, route.write ? ['GET', route.write.method] : ['GET']);
}

function isEntityKind(value: string): value is EntityKind {
  return (ENTITY_KINDS as readonly string[]).includes(value);
}

/** A 403 naming the missing right, or undefined when the caller has it. */
function forbiddenUnless(right: Right | undefined, rights: Rights): SandboxResponse | undefined {
  if (right === undefined || rights[right]) return undefined;
  const { name, instead } = RIGHT_DESCRIPTIONS[right];
  return problem(403, 'forbidden', 'Forbidden', {
    detail: `This token has no ${name}; ${instead}.`,
    missingRight: right,
  });
}

function listEntities(context: RouteContext, kind: EntityKind): SandboxResponse {
  if (kind === 'orders') return ok(context.store.orders().map(showOrder));
  if (kind === 'webhooks') {
    const subscriptions = context.store.list('webhooks') as unknown as WebhookSubscriptionRecord[];
    return ok(subscriptions.map((subscription) => showSubscription(subscription, context.webhookKey)));
  }
  return okJson(context.store.listJson(kind));
}

function getEntity(context: RouteContext, kind: EntityKind, id: string): SandboxResponse {
  const record = context.store.get(kind, id);
  if (record === undefined) return notFound(`no ${kind} record has id ${JSON.stringify(id)}`);
  if (kind === 'orders') return ok(showOrder(record as StoredOrder));
  if (kind === 'webhooks') {
    return ok(showSubscription(record as unknown as WebhookSubscriptionRecord, context.webhookKey));
  }
  return ok(record);
}

/**
 * An order as the sandbox shows it (201, `GET /orders/{id}`, `GET /orders`): as stored, then its
 * validation state, always present so that `jq .validated` needs no default. See docs/assumptions.md.
 */
export function showOrder(order: StoredOrder): Record<string, unknown> {
  const { validatedAt, ...rest } = order;
  return { ...rest, validated: order.status === 'validated', validatedAt: validatedAt ?? null };
}

function showSubscription(subscription: WebhookSubscriptionRecord, key: string) {
  return { id: subscription.id, event: subscription.event, url: subscription.url, key };
}

/** `POST /orders`: the shared schema first, then the seed's access rules and references. */
function createOrder(context: RouteContext, request: SandboxRequest): SandboxResponse {
  const problems = validateOrder(request.body);
  if (problems.length === 0)
    problems.push(...checkOrderReferences(context.store, request.body as Order, request.rights));
  if (problems.length > 0) return validationProblem(problems, 'The order is invalid');
  const order = context.store.createOrder(request.body as Record<string, unknown>);
  context.onOrderCreated(order);
  return ok(showOrder(order), 201);
}

/**
 * Rules the schema cannot know: internal ids need the matching right and must exist; internal
 * references must exist and, for packagings, be active. External references are accepted as-is
 * (the service "associates them automatically").
 */
export function checkOrderReferences(store: SandboxStore, order: Order, rights: Rights): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const { contact } = order;
  if (contact.id !== undefined) {
    if (!rights.crm) {
      problems.push({
        field: 'contact.id',
        message:
          'needs CRM access; a partner application names the contact with externalReferenceId or internalReferenceId',
      });
    } else if (!store.has('contacts', contact.id)) {
      problems.push({
        field: 'contact.id',
        message: `no contact has id ${contact.id} (see GET /api/v1/contacts)`,
      });
    }
  }
  if (
    contact.internalReferenceId !== undefined &&
    !store.has('contact_references', contact.internalReferenceId)
  ) {
    problems.push({
      field: 'contact.internalReferenceId',
      message: `no contact reference has id ${contact.internalReferenceId} (see GET /api/v1/contact_references)`,
    });
  }
  order.items.forEach((item, index) => {
    const field = `items[${index}]`;
    if (item.packaging !== undefined) {
      if (!rights.catalog) {
        problems.push({
          field: `${field}.packaging`,
          message:
            'needs catalog access; a partner application names the packaging with externalReferenceId or internalReferenceId',
        });
      } else if (!store.has('packagings', item.packaging)) {
        problems.push({
          field: `${field}.packaging`,
          message: `no packaging has id ${item.packaging} (see GET /api/v1/packagings)`,
        });
      }
    }
    if (item.internalReferenceId !== undefined) {
      const reference = store.get('packaging_references', String(item.internalReferenceId)) as
        | PackagingReferenceRecord
        | undefined;
      if (reference === undefined) {
        problems.push({
          field: `${field}.internalReferenceId`,
          message: `no packaging reference has id ${item.internalReferenceId} (see GET /api/v1/packaging_references)`,
        });
      } else if (!reference.active) {
        problems.push({
          field: `${field}.internalReferenceId`,
          message: `packaging reference ${reference.id} (${reference.label}, ${reference.packaging.name}) is inactive`,
        });
      }
    }
  });
  return problems;
}

/**
 * `POST /contact_references`: the shared schema, then one reference per external reference: a
 * second one is answered 409 Conflict naming the existing id, and nothing is created.
 */
function createContactReference(context: RouteContext, request: SandboxRequest): SandboxResponse {
  const problems = validateContactReference(request.body);
  if (problems.length > 0) return validationProblem(problems, 'The contact reference is invalid');
  const body = request.body as { contact: { externalReference: string }; customer: unknown };
  const existing = context.store.contactReferenceByExternalReference(body.contact.externalReference);
  if (existing !== undefined) {
    return problem(409, 'conflict', 'Conflict', {
      detail: `contact.externalReference ${JSON.stringify(body.contact.externalReference)} is already the contact reference ${existing.id}`,
      existingId: existing.id,
    });
  }
  return ok(context.store.addContactReference(body), 201);
}

/** `PUT /webhooks`: subscribes, or confirms an existing subscription for the same event and URL. */
function subscribeWebhook(context: RouteContext, request: SandboxRequest): SandboxResponse {
  const problems = validateWebhookSubscription(request.body);
  if (problems.length > 0) return validationProblem(problems, 'The webhook subscription is invalid');
  const { event, url } = request.body as { event: string; url: string };
  const available = eventsAvailableTo(request.rights).map((definition) => definition.event);
  if (!available.includes(event)) {
    return validationProblem(
      [
        {
          field: 'event',
          message: `${JSON.stringify(event)} is not available to this user; available: ${available.join(', ')}`,
        },
      ],
      'The webhook subscription is invalid',
    );
  }
  const { subscription } = context.store.subscribe(event, url);
  return ok(showSubscription(subscription, context.webhookKey));
}
