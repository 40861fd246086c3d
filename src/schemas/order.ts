/**
 * The order resource of the interface (`POST /api/v1/orders`), as one zod schema shared by the
 * client (`orders create`), the import pipeline and the sandbox. Unknown fields pass through
 * unchanged (a shipping mode, say); the seed's identification rules are checked exactly.
 */
import { z } from 'zod';
import { postalCodeProblem } from './postal-code.js';
import { nonEmptyString, problemsFrom, type ValidationProblem, validationErrorMap } from './problems.js';

export type { ValidationProblem } from './problems.js';

/** Two-letter country code as the interface shows it (`FR`, `DE`). */
export const COUNTRY_CODE = /^[A-Z]{2}$/;
/** A deliberately plain e-mail check: one `@`, no spaces, a dot in the domain. */
export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const positiveInteger = z.int().positive();

// The descriptions are the interface document's wording: `ordercli schema` prints them.
export const addressSchema = z
  .looseObject({
    recipient: nonEmptyString.optional().describe('Recipient of the address.'),
    street: nonEmptyString.optional().describe('Street.'),
    zipCode: nonEmptyString.optional().describe('Zip code, as text: leading zeros count (01000).'),
    city: nonEmptyString.optional().describe('City.'),
    country: z
      .string()
      .regex(COUNTRY_CODE, { error: 'must be a two-letter upper-case country code such as FR' })
      .optional()
      .describe('A two-letter country code in the shown form: FR, DE.'),
  })
  .superRefine((address, ctx) => {
    const { zipCode, country } = address;
    if (typeof zipCode !== 'string' || typeof country !== 'string' || !COUNTRY_CODE.test(country)) return;
    const problem = postalCodeProblem(zipCode, country);
    if (problem !== undefined)
      ctx.addIssue({ code: 'custom', path: ['zipCode'], message: problem, input: zipCode });
  });

export const customerSchema = z.looseObject({
  name: nonEmptyString
    .optional()
    .describe('Name of the customer; required when the contact is sent as data (contact.externalReference).'),
});

/** The ways a contact can be named in an order; exactly one must be present. */
export const CONTACT_IDENTIFIERS = [
  'id',
  'externalReferenceId',
  'internalReferenceId',
  'externalReference',
] as const;
/** The contact data that the contact-data form (`externalReference`) carries, with `customer.name`. */
export const CONTACT_DATA_FIELDS = ['firstName', 'lastName', 'email'] as const;
/** The ways an item can name its packaging; exactly one must be present. */
export const ITEM_IDENTIFIERS = ['packaging', 'externalReferenceId', 'internalReferenceId'] as const;

export const orderContactSchema = z
  .looseObject({
    id: z
      .union([positiveInteger, nonEmptyString])
      .optional()
      .describe('Internal id: the id of a record from GET /api/v1/contacts. For a client with CRM access.'),
    externalReferenceId: nonEmptyString
      .optional()
      .describe(
        'External reference, chosen by the client; the contact is then associated automatically. For a partner application.',
      ),
    internalReferenceId: positiveInteger
      .optional()
      .describe(
        'Shared internal reference, taken from GET /api/v1/contact_references. For a partner application.',
      ),
    externalReference: nonEmptyString
      .optional()
      .describe(
        'The contact-data form (without an id or internal reference): sent with firstName, lastName, email and customer.name on every order.',
      ),
    firstName: nonEmptyString.optional().describe('First name of the contact (contact data).'),
    lastName: nonEmptyString.optional().describe('Last name of the contact (contact data).'),
    email: z
      .string()
      .regex(EMAIL, { error: 'must be an e-mail address such as name@example.com' })
      .optional()
      .describe('E-mail address of the contact (contact data).'),
  })
  .refine((contact) => exactlyOne(contact, CONTACT_IDENTIFIERS), {
    // Checked even when a field has a type error, so that every problem is listed at once.
    when: () => true,
    error: (issue) => exactlyOneMessage(issue.input, CONTACT_IDENTIFIERS, 'contact'),
  })
  .describe(
    'The contact, identified in exactly one of these ways: id, externalReferenceId, internalReferenceId, or the contact data with externalReference.',
  );

export const orderItemSchema = z
  .looseObject({
    packaging: positiveInteger
      .optional()
      .describe('Id of a packaging from GET /api/v1/packagings. For a client with catalog access.'),
    externalReferenceId: nonEmptyString
      .optional()
      .describe('Client-side reference of the packaging. For a partner application.'),
    internalReferenceId: positiveInteger
      .optional()
      .describe('Id taken from GET /api/v1/packaging_references. For a partner application.'),
    orderedQuantity: positiveInteger.describe('Quantity ordered: a whole number above zero.'),
  })
  .refine((item) => exactlyOne(item, ITEM_IDENTIFIERS), {
    when: () => true,
    error: (issue) => exactlyOneMessage(issue.input, ITEM_IDENTIFIERS, 'packaging'),
  })
  .describe(
    'An item of the order: the packaging, named in exactly one way (packaging, externalReferenceId or internalReferenceId), and the quantity ordered.',
  );

export const orderSchema = z
  .looseObject({
    externalId: nonEmptyString
      .optional()
      .describe("The client's own identifier of the order; ordercli orders import needs it on every order."),
    externalReference: nonEmptyString.optional().describe("The client's own order number."),
    contact: orderContactSchema,
    customer: customerSchema.optional().describe('The customer.'),
    invoicingAddress: addressSchema.optional().describe('Invoicing address.'),
    deliveryAddress: addressSchema.optional().describe('Delivery address.'),
    items: z
      .array(orderItemSchema)
      .min(1, { error: 'must list at least one item' })
      .describe('The items of the order: at least one.'),
  })
  .superRefine((order, ctx) => {
    // Seed rule 2: the contact-data form carries the whole contact and the customer on every order.
    if (order.contact.externalReference === undefined) return;
    for (const key of CONTACT_DATA_FIELDS) {
      if (order.contact[key] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['contact', key],
          message: 'is required when the contact is sent as data (contact.externalReference)',
        });
      }
    }
    if (order.customer?.name === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['customer', 'name'],
        message: 'is required when the contact is sent as data (contact.externalReference)',
      });
    }
  });

export type Order = z.infer<typeof orderSchema>;
export type OrderItem = z.infer<typeof orderItemSchema>;
export type OrderContact = z.infer<typeof orderContactSchema>;

export interface ValidateOrderOptions {
  /** Imports key re-runs on `externalId`, so there it is required. */
  requireExternalId?: boolean;
}

/** Checks one order against the seed's rules; returns every problem, or an empty list. */
export function validateOrder(input: unknown, options: ValidateOrderOptions = {}): ValidationProblem[] {
  // Parsed without the error map first: passing one takes zod off its compiled fast path (twice
  // the time and much more garbage on a million-order import), and only a failure needs messages.
  const fast = orderSchema.safeParse(input);
  const result = fast.success ? fast : orderSchema.safeParse(input, { error: validationErrorMap });
  const problems = result.success ? [] : problemsFrom(result.error.issues);
  if (options.requireExternalId && isRecord(input) && input.externalId === undefined) {
    problems.unshift({ field: 'externalId', message: 'is required: it is the key that makes re-runs safe' });
  }
  return problems;
}

function presentKeys(value: unknown, keys: readonly string[]): string[] {
  return isRecord(value) ? keys.filter((key) => value[key] !== undefined) : [];
}

function exactlyOne(value: unknown, keys: readonly string[]): boolean {
  // A value that is not an object already has its own type problem.
  return !isRecord(value) || presentKeys(value, keys).length === 1;
}

function exactlyOneMessage(value: unknown, keys: readonly string[], what: string): string {
  const present = presentKeys(value, keys);
  if (present.length === 0) return `name the ${what} with one of ${keys.join(', ')}`;
  return `name the ${what} in exactly one way, not with both ${present.join(' and ')}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
