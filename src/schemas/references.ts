/**
 * Contact and packaging references: the request body of `POST /api/v1/contact_references` (built
 * strictly) and the records of the reference lists (read leniently: unknown fields are kept).
 */
import { z } from 'zod';
import { EMAIL } from './order.js';
import { nonEmptyString, problemsFrom, type ValidationProblem, validationErrorMap } from './problems.js';

// The descriptions are the interface document's wording: `ordercli schema contact-reference` prints them.
export const contactReferenceInputSchema = z.looseObject({
  contact: z
    .looseObject({
      externalReference: nonEmptyString.describe(
        "The client's reference of the contact: the key of the contact-data form of an order.",
      ),
      firstName: nonEmptyString.describe('First name of the contact.'),
      lastName: nonEmptyString.describe('Last name of the contact.'),
      email: z
        .string()
        .regex(EMAIL, { error: 'must be an e-mail address such as name@example.com' })
        .describe('E-mail address of the contact.'),
    })
    .describe('The contact.'),
  customer: z
    .looseObject({ name: nonEmptyString.describe('Name of the customer.') })
    .describe('The customer.'),
});
export type ContactReferenceInput = z.infer<typeof contactReferenceInputSchema>;

/** Checks a contact reference body before it is sent. */
export function validateContactReference(input: unknown): ValidationProblem[] {
  const result = contactReferenceInputSchema.safeParse(input, { error: validationErrorMap });
  return result.success ? [] : problemsFrom(result.error.issues);
}

export const taxSchema = z.looseObject({
  name: z.string().optional(),
  rate: z.number().optional(),
  vat: z.boolean().optional(),
});

export const packagingReferenceSchema = z.looseObject({
  id: z.number(),
  active: z.boolean().optional(),
  label: z.string().optional(),
  packaging: z
    .looseObject({
      name: z.string().optional(),
      unit: z.string().optional(),
      unit_factor: z.number().optional(),
      product: z
        .looseObject({
          code: z.string().optional(),
          label: z.string().optional(),
          taxes: z.array(taxSchema).optional(),
        })
        .optional(),
    })
    .optional(),
});
export type PackagingReference = z.infer<typeof packagingReferenceSchema>;
export type Tax = z.infer<typeof taxSchema>;
