/** Webhook subscription (`PUT /api/v1/webhooks`) and the one event kind the interface names. */
import { z } from 'zod';
import { nonEmptyString, problemsFrom, type ValidationProblem, validationErrorMap } from './problems.js';

export const SALES_ORDER_VALIDATED = 'sales_order_validated';

export const webhookSubscriptionSchema = z.looseObject({
  event: nonEmptyString,
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
});
export type WebhookSubscription = z.infer<typeof webhookSubscriptionSchema>;

/** Checks a subscription body before it is sent. */
export function validateWebhookSubscription(input: unknown): ValidationProblem[] {
  const result = webhookSubscriptionSchema.safeParse(input, { error: validationErrorMap });
  return result.success ? [] : problemsFrom(result.error.issues);
}
