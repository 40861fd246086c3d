/**
 * The JSON Schemas of `ordercli schema` and ordercli's own checks agree: every order fixture and a
 * crafted order for each rule gets the same verdict from a real JSON Schema 2020-12 validator (ajv,
 * with ajv-formats, already installed for conf) and from ordercli. ordercli's verdict on an order
 * file is `prepareRecord`'s, the step `orders create --file` and `orders import` run: `validateOrder`
 * after `productCode` is resolved, here against the sandbox's packaging references over HTTP.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { Redactor } from '../../src/core/redact.js';
import { ReferenceCatalog } from '../../src/import/check/references.js';
import { namesProduct } from '../../src/import/check/resolve-products.js';
import { prepareRecord } from '../../src/import/check/validate.js';
import { openOrderSource } from '../../src/import/source.js';
import type { SourceRecord } from '../../src/import/types.js';
import {
  contactReferenceJsonSchema,
  type JsonSchema,
  orderItemJsonSchema,
  orderJsonSchema,
  ordersJsonSchema,
} from '../../src/schemas/json-schema.js';
import { validateOrder } from '../../src/schemas/order.js';
import { validateContactReference } from '../../src/schemas/references.js';
import { FIXTURES, readAll, sourceContext } from '../support/import-input.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({}, { resetEach: false });
let client: ApiClient;
let references: ReferenceCatalog;
beforeAll(() => {
  client = new ApiClient({
    baseUrl: sandbox.url,
    token: sandbox.tokens.partner,
    timeoutMs: 10_000,
    userAgent: 'ordercli-test',
    redactor: new Redactor(),
  });
  references = new ReferenceCatalog(async () => client);
});
afterAll(async () => {
  await client.close();
});

/** A validator as a CI would run one: ajv's default options, formats asserted, no warning. */
function compile(schema: JsonSchema): ValidateFunction {
  const warnings: unknown[] = [];
  const log = (...args: unknown[]) => warnings.push(args);
  const ajv = new Ajv2020({ allErrors: true, logger: { log, warn: log, error: log } });
  // A CommonJS module: its plugin is its `default` (and the module itself).
  ajvFormats.default(ajv);
  const validate = ajv.compile(schema);
  expect(warnings, 'ajv warned about the schema').toEqual([]);
  return validate;
}

const orderSchema = compile(orderJsonSchema());
const ordersSchema = compile(ordersJsonSchema());
const itemSchema = compile(orderItemJsonSchema());
const contactReferenceSchema = compile(contactReferenceJsonSchema());

/** ordercli's problems with an order as a file holds it (none: valid). */
async function ordercliProblems(order: unknown, requireExternalId = false): Promise<string[]> {
  const source: SourceRecord = {
    index: 0,
    key: undefined,
    body: order as Record<string, unknown>,
    location: { file: 'order.json', line: 1, endLine: 1 },
    raw: order,
    problems: [],
    needsProductResolution: isRecord(order) && Array.isArray(order.items) && order.items.some(namesProduct),
  };
  const prepared = await prepareRecord(source, references, { requireExternalId });
  return prepared.problems.map((problem) => `${problem.field ?? ''}: ${problem.message}`);
}

/** What the schema says, with ajv's reasons for a failure message. */
function schemaVerdict(validate: ValidateFunction, value: unknown): { valid: boolean; errors: string } {
  const valid = validate(value);
  return { valid, errors: JSON.stringify(validate.errors?.map((e) => `${e.instancePath} ${e.message}`)) };
}

async function expectAgreement(name: string, order: unknown): Promise<void> {
  const problems = await ordercliProblems(order);
  const { valid, errors } = schemaVerdict(orderSchema, order);
  expect(valid, `${name}: ordercli says ${JSON.stringify(problems)}, the schema ${errors}`).toBe(
    problems.length === 0,
  );
  const forImport = await ordercliProblems(order, true);
  const inArray = schemaVerdict(ordersSchema, [order]);
  expect(
    inArray.valid,
    `${name} in an import: ordercli says ${JSON.stringify(forImport)}, the schema ${inArray.errors}`,
  ).toBe(forImport.length === 0);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const BASE = {
  externalId: 'WEB-9001',
  externalReference: 'PO-9001',
  contact: { internalReferenceId: 304 },
  customer: { name: 'Épicerie Perrin' },
  deliveryAddress: {
    recipient: 'Océane Perrin',
    street: '5 rue de la République',
    zipCode: '05000',
    city: 'Gap',
    country: 'FR',
  },
  items: [{ internalReferenceId: 403, orderedQuantity: 4 }],
};
const CONTACT_DATA = {
  externalReference: 'PART-C-0099',
  firstName: 'Inès',
  lastName: 'Marchand',
  email: 'ines.marchand@fromagerie-marchand.fr',
};

function withContact(contact: unknown): Record<string, unknown> {
  return { ...BASE, contact };
}
function withItem(item: unknown): Record<string, unknown> {
  return { ...BASE, items: [item] };
}
function without(key: string, value: Record<string, unknown>): Record<string, unknown> {
  const { [key]: _left, ...rest } = value;
  return rest;
}

/** Orders ordercli accepts. */
const VALID: Record<string, unknown> = {
  'a partner order': BASE,
  'without externalId (orders create)': without('externalId', BASE),
  'contact by id (integer)': withContact({ id: 12 }),
  'contact by id (text)': withContact({ id: 'CRM-12' }),
  'contact by externalReferenceId': withContact({ externalReferenceId: 'PART-C-0042' }),
  'contact as data with customer.name': withContact(CONTACT_DATA),
  'item by packaging': withItem({ packaging: 7, orderedQuantity: 1 }),
  'item by externalReferenceId': withItem({ externalReferenceId: 'MY-SKU-1', orderedQuantity: 2 }),
  'item by productCode': withItem({ productCode: 'CAF-MOU', orderedQuantity: 12 }),
  'item by productCode and packagingName': withItem({
    productCode: 'EAU-GAZ',
    packagingName: 'Pack de 6 bouteilles 1 L',
    orderedQuantity: 20,
  }),
  'unknown fields pass through': {
    ...BASE,
    shippingMode: { externalReferenceId: 'EXPRESS' },
    contact: { internalReferenceId: 304, note: 'x' },
    items: [{ internalReferenceId: 403, orderedQuantity: 4, comment: 'fragile' }],
  },
  'address without country': { ...BASE, deliveryAddress: { city: 'Gap' } },
  'quantity 1': withItem({ internalReferenceId: 403, orderedQuantity: 1 }),
};

/** Orders ordercli refuses, one rule broken in each. */
const INVALID: Record<string, unknown> = {
  'two contact identifiers': withContact({ internalReferenceId: 304, id: 12 }),
  'contact data and a reference': withContact({ ...CONTACT_DATA, externalReferenceId: 'X' }),
  'no contact identifier': withContact({ firstName: 'Inès' }),
  'empty contact': withContact({}),
  'contact null': withContact(null),
  'no contact': without('contact', BASE),
  'contact data without lastName': withContact(without('lastName', CONTACT_DATA)),
  'contact data without email': withContact(without('email', CONTACT_DATA)),
  'contact data without customer': without('customer', withContact(CONTACT_DATA)),
  'contact data without customer.name': { ...withContact(CONTACT_DATA), customer: {} },
  'contact internalReferenceId as text': withContact({ internalReferenceId: '304' }),
  'contact internalReferenceId 0': withContact({ internalReferenceId: 0 }),
  'contact id empty': withContact({ id: '' }),
  'contact id of white space': withContact({ id: '  ' }),
  'contact id 0': withContact({ id: 0 }),
  'contact id null with a reference': withContact({ id: null, internalReferenceId: 304 }),
  'bad e-mail': withContact({ ...CONTACT_DATA, email: 'jean.dupont(at)example.fr' }),
  'e-mail without a dot in the domain': withContact({ ...CONTACT_DATA, email: 'jean@example' }),
  'item with two packaging ways': withItem({ internalReferenceId: 403, packaging: 7, orderedQuantity: 1 }),
  'item with productCode and internalReferenceId': withItem({
    productCode: 'CAF-MOU',
    internalReferenceId: 403,
    orderedQuantity: 1,
  }),
  'item with no packaging': withItem({ orderedQuantity: 1 }),
  'packagingName without productCode': withItem({
    internalReferenceId: 403,
    packagingName: 'Pot 20 cl',
    orderedQuantity: 1,
  }),
  'productCode empty': withItem({ productCode: ' ', orderedQuantity: 1 }),
  'productCode a number': withItem({ productCode: 42, orderedQuantity: 1 }),
  'quantity 0': withItem({ internalReferenceId: 403, orderedQuantity: 0 }),
  'quantity 1.5': withItem({ internalReferenceId: 403, orderedQuantity: 1.5 }),
  'quantity "3"': withItem({ internalReferenceId: 403, orderedQuantity: '3' }),
  'quantity -2': withItem({ internalReferenceId: 403, orderedQuantity: -2 }),
  'quantity beyond 2^53': withItem({ internalReferenceId: 403, orderedQuantity: 2 ** 53 + 2 }),
  'no quantity': withItem({ internalReferenceId: 403 }),
  'item not an object': withItem(403),
  'bad country (lower case)': { ...BASE, deliveryAddress: { ...BASE.deliveryAddress, country: 'fr' } },
  'bad country (name)': { ...BASE, deliveryAddress: { ...BASE.deliveryAddress, country: 'France' } },
  'empty city': { ...BASE, deliveryAddress: { ...BASE.deliveryAddress, city: '' } },
  'address not an object': { ...BASE, invoicingAddress: 'Gap' },
  'externalId of white space': { ...BASE, externalId: ' \t' },
  'externalId a number': { ...BASE, externalId: 9001 },
  'no items': { ...BASE, items: [] },
  'items missing': without('items', BASE),
  'items not a list': { ...BASE, items: { internalReferenceId: 403, orderedQuantity: 1 } },
  'an array': [BASE],
  'a string': 'order',
  null: null,
};

describe('the order schema and ordercli agree', () => {
  it('on valid orders', async () => {
    for (const [name, order] of Object.entries(VALID)) {
      expect(await ordercliProblems(order), name).toEqual([]);
      await expectAgreement(name, order);
    }
  });

  it('on an invalid order for each rule', async () => {
    for (const [name, order] of Object.entries(INVALID)) {
      expect((await ordercliProblems(order)).length, name).toBeGreaterThan(0);
      await expectAgreement(name, order);
    }
  });

  /** Fixtures of the docs that are not orders, or break on purpose what the schema does not check. */
  const NOT_ORDERS = new Set([
    'broken.json', // a JSON syntax error, to show its message
    'colonnes.json', // a --map file
    'contact.json', // a contact reference (README's api example)
    'contacts.csv', // contact references (docs/refs.md)
    'notes.csv', // a value over the cell limit, which the schema leaves to ordercli (docs/schema.md)
    'qty.csv', // a header ordercli does not know, to show its message
  ]);

  it('on every order of the fixtures (fixtures/orders, test/support/fixtures)', async () => {
    const files = [
      ...readdirSync(FIXTURES)
        .filter((name) => /\.(json|ndjson|csv)$/.test(name) && !name.endsWith('.map.json'))
        .filter((name) => !NOT_ORDERS.has(name))
        .map((name) => join(FIXTURES, name)),
      join(import.meta.dirname, '../support/fixtures/order.json'),
    ];
    let compared = 0;
    const needService: string[] = [];
    for (const path of files) {
      const name = path.startsWith(FIXTURES)
        ? path.slice(FIXTURES.length + 1)
        : 'test/support/fixtures/order.json';
      if (path.endsWith('.json') && !readFileSync(path, 'utf8').trimStart().startsWith('[')) {
        // One order, as orders create --file reads it.
        const body = JSON.parse(readFileSync(path, 'utf8'));
        const problems = await ordercliProblems(body);
        if (
          schemaVerdict(orderSchema, body).valid &&
          problems.length > 0 &&
          problems.every(isAboutProductCode)
        ) {
          // A product code the service alone can resolve (order-codes.json names an ambiguous one).
          needService.push(name);
          continue;
        }
        await expectAgreement(name, body);
        compared++;
        continue;
      }
      const mapFile = path.replace(/\.csv$/, '.map.json');
      const source = await openOrderSource(
        path,
        path.endsWith('.csv') && existsSync(mapFile) ? { mapFile } : {},
        sourceContext(),
      );
      for (const read of await readAll(source)) {
        const where = `${name}:${read.location.line}`;
        const problems = await ordercliProblems(read.body);
        const { valid } = schemaVerdict(orderSchema, read.body);
        if (valid && problems.length > 0 && problems.every(isAboutProductCode)) {
          // A product code unknown or ambiguous at the service: only the service can tell.
          needService.push(where);
          continue;
        }
        await expectAgreement(where, read.body);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
    // orders-with-errors.csv names CRF-30 (two active packagings) and XYZ-999 (none) on purpose,
    // and order-codes.json EAU-GAZ (two active packagings), to show the message.
    expect(needService.sort()).toEqual([
      'order-codes.json',
      'orders-with-errors.csv:8',
      'orders-with-errors.csv:9',
    ]);
  });

  it('on the JSON fixtures as whole files: order.json as an order, orders.json as an import', () => {
    const order = JSON.parse(readFileSync(join(FIXTURES, 'order.json'), 'utf8'));
    expect(schemaVerdict(orderSchema, order).valid).toBe(true);
    const orders = JSON.parse(readFileSync(join(FIXTURES, 'orders.json'), 'utf8'));
    const whole = schemaVerdict(ordersSchema, orders);
    expect(whole.valid, whole.errors).toBe(true);
    expect(schemaVerdict(ordersSchema, [...orders, without('externalId', BASE)]).valid).toBe(false);
    expect(validateOrder(without('externalId', BASE), { requireExternalId: true })).not.toEqual([]);
  });
});

describe('the item schema (schema order --items)', () => {
  it('agrees with ordercli on every item above', async () => {
    for (const [name, order] of Object.entries({ ...VALID, ...INVALID })) {
      if (!isRecord(order) || !Array.isArray(order.items) || order.items.length !== 1) continue;
      const itemProblems = (await ordercliProblems({ ...BASE, items: order.items })).filter((problem) =>
        problem.startsWith('items[0]'),
      );
      const { valid, errors } = schemaVerdict(itemSchema, order.items[0]);
      expect(valid, `${name}: ordercli says ${JSON.stringify(itemProblems)}, the schema ${errors}`).toBe(
        itemProblems.length === 0,
      );
    }
  });
});

describe('the contact reference schema', () => {
  const body = {
    contact: {
      externalReference: 'PART-C-0042',
      firstName: 'Jeanne',
      lastName: 'Roux',
      email: 'jeanne.roux@example.fr',
    },
    customer: { name: 'Épicerie Roux' },
  };
  const bodies: Record<string, unknown> = {
    'as refs contacts add sends it': body,
    'with unknown fields': { ...body, contact: { ...body.contact, phone: '+33 4 00 00 00 00' }, note: 'x' },
    'without customer': without('customer', body),
    'without customer.name': { ...body, customer: {} },
    'without email': { ...body, contact: without('email', body.contact) },
    'without externalReference': { ...body, contact: without('externalReference', body.contact) },
    'bad e-mail': { ...body, contact: { ...body.contact, email: 'jeanne.roux' } },
    'first name of white space': { ...body, contact: { ...body.contact, firstName: '  ' } },
    'an array': [body],
  };

  it('agrees with validateContactReference', () => {
    let invalid = 0;
    for (const [name, value] of Object.entries(bodies)) {
      const problems = validateContactReference(value);
      const { valid, errors } = schemaVerdict(contactReferenceSchema, value);
      expect(valid, `${name}: ordercli says ${JSON.stringify(problems)}, the schema ${errors}`).toBe(
        problems.length === 0,
      );
      if (!valid) invalid++;
    }
    expect(invalid).toBe(7);
  });
});

describe('the schema documents', () => {
  it('name draft 2020-12 and a stable id that is not an address', () => {
    for (const schema of [
      orderJsonSchema(),
      ordersJsonSchema(),
      orderItemJsonSchema(),
      contactReferenceJsonSchema(),
    ]) {
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.$id).toMatch(/^urn:ordercli:schema:v1:[a-z-]+$/);
    }
  });

  it('carry the interface wording, format email, the country pattern and quantity ≥ 1', () => {
    // biome-ignore lint/suspicious/noExplicitAny: a JSON document, read by its paths
    const order = orderJsonSchema() as any;
    expect(order.properties.externalReference.description).toBe("The client's own order number.");
    expect(order.properties.contact.properties.email).toMatchObject({ format: 'email' });
    expect(order.properties.deliveryAddress.properties.country.pattern).toBe('^[A-Z]{2}$');
    expect(order.properties.items).toMatchObject({ minItems: 1 });
    expect(order.properties.items.items.properties.orderedQuantity).toMatchObject({
      type: 'integer',
      minimum: 1,
    });
    expect(order.properties.contact.oneOf).toHaveLength(4);
  });

  it('say that a postal code is checked against its country by ordercli, not by the schema', async () => {
    const order = { ...BASE, deliveryAddress: { ...BASE.deliveryAddress, zipCode: '1000' } };
    expect(schemaVerdict(orderSchema, order).valid).toBe(true);
    expect(await ordercliProblems(order)).toEqual([expect.stringMatching(/zipCode.*not a FR postal code/)]);
    expect(orderJsonSchema().description).toMatch(/zipCode is a postal code of the address's country/);
    const doc = readFileSync(join(import.meta.dirname, '../../docs/schema.md'), 'utf8');
    const notChecked = doc.split('## What the schema does not check')[1]?.split('\n## ')[0] ?? '';
    expect(notChecked).toMatch(/\*\*Postal codes against the country\.\*\*/);
  });

  it('state format email as an annotation beside the pattern ordercli applies', () => {
    // 2020-12 validators need not assert formats; the pattern is the rule ordercli checks.
    const order = withContact({ ...CONTACT_DATA, email: 'inès@fromagerie.fr' });
    expect(validateOrder(order)).toEqual([]);
    const annotationOnly = new Ajv2020({ validateFormats: false }).compile(orderJsonSchema());
    expect(annotationOnly(order)).toBe(true);
  });
});

function isAboutProductCode(problem: string): boolean {
  return /^items\[\d+\]\.(productCode|packagingName): /.test(problem);
}
