/**
 * The JSON Schemas (draft 2020-12) that `ordercli schema` prints, generated from the zod schemas
 * that validate orders and contact references. zod exports the fields, types and descriptions;
 * the rules zod checks as refinements are added here from the same constants (the ways of naming
 * a contact or a packaging, the contact data), so that a validator and `validateOrder` agree.
 */
import { z } from 'zod';
import {
  CONTACT_DATA_FIELDS,
  CONTACT_IDENTIFIERS,
  EMAIL,
  ITEM_IDENTIFIERS,
  orderContactSchema,
  orderItemSchema,
  orderSchema,
} from './order.js';
import { nonEmptyString } from './problems.js';
import { contactReferenceInputSchema } from './references.js';
import type { SchemaName } from './schema-names.js';

/** A JSON Schema document or subschema, as plain JSON. */
export type JsonSchema = Record<string, unknown>;

/**
 * Stable names, never addresses: nothing fetches them. `v1` is the service's `/api/v1`; the ids
 * stay the same across ordercli versions, so a setting or a `$ref` naming one keeps working.
 */
export const SCHEMA_IDS = {
  order: 'urn:ordercli:schema:v1:order',
  orderItem: 'urn:ordercli:schema:v1:order-item',
  orders: 'urn:ordercli:schema:v1:orders',
  contactReference: 'urn:ordercli:schema:v1:contact-reference',
} as const;

const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** zod's `trim().min(1)`: a JSON Schema needs a pattern to refuse a text of white space only. */
const NOT_ONLY_WHITE_SPACE = '\\S';

/**
 * In an order file (`orders create --file`, `orders import`), an item may name its packaging by
 * product code instead: ordercli resolves it to an `internalReferenceId` before sending
 * (src/import/check/resolve-products.ts), so the file's schema accepts it as a fourth way.
 */
const PRODUCT_CODE_FIELDS: Record<string, JsonSchema> = {
  productCode: {
    type: 'string',
    minLength: 1,
    pattern: NOT_ONLY_WHITE_SPACE,
    description:
      'A product code (ordercli refs packagings list): ordercli replaces it with the internalReferenceId of the one active packaging reference of that product before sending.',
  },
  packagingName: {
    type: 'string',
    minLength: 1,
    pattern: NOT_ONLY_WHITE_SPACE,
    description: 'Only with productCode: the name of the packaging, for a product that has several.',
  },
};
const FILE_ITEM_IDENTIFIERS = [...ITEM_IDENTIFIERS, 'productCode'];

/** `oneOf` of one `required` per key: exactly one of the keys is present. */
function exactlyOneOf(keys: readonly string[]): JsonSchema[] {
  return keys.map((key) => ({ required: [key] }));
}

/**
 * Adds to what zod generates the rules it cannot export. Matched by definition: a schema with a
 * description is a copy of the one it describes, sharing its definition.
 */
function addRules(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema }): void {
  const def = ctx.zodSchema._zod.def;
  const json = ctx.jsonSchema as JsonSchema;
  if (def === nonEmptyString._zod.def) {
    json.pattern = NOT_ONLY_WHITE_SPACE;
  } else if (json.pattern === EMAIL.source) {
    // An annotation in 2020-12 (editors use it); the pattern is the rule ordercli applies.
    json.format = 'email';
  } else if (json.type === 'integer' && json.exclusiveMinimum === 0) {
    // `z.int().positive()`, written as the interface reads: a whole number from 1.
    delete json.exclusiveMinimum;
    json.minimum = 1;
  } else if (def === orderContactSchema._zod.def) {
    json.oneOf = exactlyOneOf(CONTACT_IDENTIFIERS);
  } else if (def === orderItemSchema._zod.def) {
    json.properties = { ...(json.properties as JsonSchema), ...PRODUCT_CODE_FIELDS };
    json.oneOf = exactlyOneOf(FILE_ITEM_IDENTIFIERS);
    json.dependentRequired = { packagingName: ['productCode'] };
    json.description =
      'An item of the order: the packaging, named in exactly one way (packaging, externalReferenceId, internalReferenceId, or productCode in an order file), and the quantity ordered.';
  } else if (def === orderSchema._zod.def) {
    // The contact-data form carries the whole contact and the customer's name on every order.
    // (`type` beside each `required`: strict validators such as ajv's default mode ask for it.)
    json.if = {
      properties: { contact: { type: 'object', required: ['externalReference'] } },
      required: ['contact'],
    };
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword; an object, never called.
    json.then = {
      properties: {
        contact: { type: 'object', required: [...CONTACT_DATA_FIELDS] },
        customer: { type: 'object', required: ['name'] },
      },
      required: ['customer'],
    };
  }
}

function generate(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    // A field zod cannot express must fail here, never vanish from the schema silently.
    unrepresentable: 'throw',
    override: addRules,
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** Puts `$schema`, `$id` and `title` first, as a reader looks for them. */
function document(id: string, title: string, body: JsonSchema): JsonSchema {
  return { $schema: DRAFT_2020_12, $id: id, title, ...body };
}

/** One order, as `orders create --file` reads it (the body of POST /api/v1/orders). */
export function orderJsonSchema(): JsonSchema {
  return document(SCHEMA_IDS.order, 'ordercli order', {
    description:
      "An order of the order-taking service: the body of POST /api/v1/orders, as ordercli orders create --file reads it. Fields not listed pass through unchanged. Not checked by this schema: that zipCode is a postal code of the address's country (ordercli checks it).",
    ...generate(orderSchema),
  });
}

/** One item of an order. */
export function orderItemJsonSchema(): JsonSchema {
  return document(SCHEMA_IDS.orderItem, 'ordercli order item', generate(orderItemSchema));
}

/** A JSON array of orders, as `orders import` reads it: every order needs its `externalId`. */
export function ordersJsonSchema(): JsonSchema {
  const order = generate(orderSchema);
  return document(SCHEMA_IDS.orders, 'ordercli orders', {
    description:
      'A JSON array of orders, as ordercli orders import reads it: every order needs an externalId, the key that makes re-runs safe (each its own: that the externalIds differ is not checked by this schema).',
    type: 'array',
    items: { ...order, required: [...(order.required as string[]), 'externalId'] },
  });
}

/** The body of POST /api/v1/contact_references, as `refs contacts add` sends it. */
export function contactReferenceJsonSchema(): JsonSchema {
  return document(SCHEMA_IDS.contactReference, 'ordercli contact reference', {
    description:
      'A contact reference: the body of POST /api/v1/contact_references, as ordercli refs contacts add sends it. Fields not listed pass through unchanged.',
    ...generate(contactReferenceInputSchema),
  });
}

/** The schema named on the command line; `items` picks the schema of one item of an order. */
export function jsonSchemaFor(name: SchemaName, options: { items?: boolean } = {}): JsonSchema {
  if (options.items) return orderItemJsonSchema();
  switch (name) {
    case 'order':
      return orderJsonSchema();
    case 'orders':
      return ordersJsonSchema();
    case 'contact-reference':
      return contactReferenceJsonSchema();
  }
}
