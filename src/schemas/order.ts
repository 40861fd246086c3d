/**
 * The order resource of the interface (`POST /api/v1/orders`), as one zod schema shared by the
 * client (`orders create`), the import pipeline and the sandbox. Unknown fields pass through
 * unchanged (a shipping mode, say); the seed's identification rules are checked exactly.
 */
import { z } from 'zod';
import { nonEmptyString, problemsFrom, type ValidationProblem, validationErrorMap } from './problems.js';

export type { ValidationProblem } from './problems.js';

/** Two-letter country code as the interface shows it (`FR`, `DE`). */
export const COUNTRY_CODE = /^[A-Z]{2}$/;
/** A deliberately plain e-mail check: one `@`, no spaces, a dot in the domain. */
export const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const positiveInteger = z.int().positive();

export const addressSchema = z.looseObject({
  recipient: nonEmptyString.optional(),
  street: nonEmptyString.optional(),
  zipCode: nonEmptyString.optional(),
  city: nonEmptyString.optional(),
  country: z
    .string()
    .regex(COUNTRY_CODE, { error: 'must be a two-letter upper-case country code such as FR' })
    .optional(),
});

export const customerSchema = z.looseObject({
  name: nonEmptyString.optional(),
});

/** The ways a contact can be named in an order; exactly one must be present. */
export const CONTACT_IDENTIFIERS = [
  'id',
  'externalReferenceId',
  'internalReferenceId',
  'externalReference',
] as const;
/** The ways an item can name its packaging; exactly one must be present. */
export const ITEM_IDENTIFIERS = ['packaging', 'externalReferenceId', 'internalReferenceId'] as const;

export const orderContactSchema = z
  .looseObject({
    id: z.union([positiveInteger, nonEmptyString]).optional(),
    externalReferenceId: nonEmptyString.optional(),
    internalReferenceId: positiveInteger.optional(),
    externalReference: nonEmptyString.optional(),
    firstName: nonEmptyString.optional(),
    lastName: nonEmptyString.optional(),
    email: z
      .string()
      .regex(EMAIL, { error: 'must be an e-mail address such as name@example.com' })
      .optional(),
  })
  .refine((contact) => exactlyOne(contact, CONTACT_IDENTIFIERS), {
    // Checked even when a field has a type error, so that every problem is listed at once.
    when: () => true,
    error: (issue) => exactlyOneMessage(issue.input, CONTACT_IDENTIFIERS, 'contact'),
  });

export const orderItemSchema = z
  .looseObject({
    packaging: positiveInteger.optional(),
    externalReferenceId: nonEmptyString.optional(),
    internalReferenceId: positiveInteger.optional(),
    orderedQuantity: positiveInteger,
  })
  .refine((item) => exactlyOne(item, ITEM_IDENTIFIERS), {
    when: () => true,
    error: (issue) => exactlyOneMessage(issue.input, ITEM_IDENTIFIERS, 'packaging'),
  });

export const orderSchema = z
  .looseObject({
    externalId: nonEmptyString.optional(),
    externalReference: nonEmptyString.optional(),
    contact: orderContactSchema,
    customer: customerSchema.optional(),
    invoicingAddress: addressSchema.optional(),
    deliveryAddress: addressSchema.optional(),
    items: z.array(orderItemSchema).min(1, { error: 'must list at least one item' }),
  })
  .superRefine((order, ctx) => {
    // Seed rule 2: the contact-data form carries the whole contact and the customer on every order.
    if (order.contact.externalReference === undefined) return;
    for (const key of ['firstName', 'lastName', 'email'] as const) {
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
