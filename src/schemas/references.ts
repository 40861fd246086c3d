/**
 * Contact and packaging references: the request body of `POST /api/v1/contact_references` (built
 * strictly) and the records of the reference lists (read leniently: unknown fields are kept).
 */
import { z } from 'zod';
import { EMAIL } from './order.js';
import { nonEmptyString, problemsFrom, type ValidationProblem, validationErrorMap } from './problems.js';

export const contactReferenceInputSchema = z.looseObject({
  contact: z.looseObject({
    externalReference: nonEmptyString,
    firstName: nonEmptyString,
    lastName: nonEmptyString,
    email: z.string().regex(EMAIL, { error: 'must be an e-mail address such as name@example.com' }),
  }),
  customer: z.looseObject({ name: nonEmptyString }),
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
