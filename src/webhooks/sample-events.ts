/** The sample bodies `webhooks trigger` sends when no `--data` is given. */
import { SALES_ORDER_VALIDATED } from '../schemas/webhook.js';
import { buildSalesOrderValidatedBody, type SalesOrderValidatedBody } from './notify.js';

/**
 * A `sales_order_validated` body as the sandbox sends it, for an order a partner application
 * could have placed with the sandbox's seed references (contact reference 301, packaging
 * references 401 and 402). The id and code are in a range of their own, so a receiver's
 * de-duplication does not mistake two triggers for one.
 */
export function sampleSalesOrderValidated(now: Date = new Date()): SalesOrderValidatedBody {
  const sequence = 900_000 + (now.getTime() % 100_000);
  const created = new Date(now.getTime() - 2_000);
  return buildSalesOrderValidatedBody(
    {
      id: 10_000 + sequence,
      code: `SO-${now.getUTCFullYear()}-${String(sequence).padStart(6, '0')}`,
      externalId: `ordercli-trigger-${now.getTime()}`,
      externalReference: 'PO-TRIGGER-0001',
      contact: { internalReferenceId: 301 },
      customer: { name: 'Maison Rousseau' },
      invoicingAddress: {
        recipient: 'Maison Rousseau',
        street: '12 rue des Tanneurs',
        zipCode: '69001',
        city: 'Lyon',
        country: 'FR',
      },
      deliveryAddress: {
        recipient: 'Maison Rousseau - entrepôt',
        street: '4 allée des Frênes',
        zipCode: '69800',
        city: 'Saint-Priest',
        country: 'FR',
      },
      items: [
        { internalReferenceId: 401, orderedQuantity: 24 },
        { internalReferenceId: 402, orderedQuantity: 2 },
      ],
      createdAt: created.toISOString(),
      validatedAt: now.toISOString(),
    },
    now,
  );
}

/** The sample body of an event, or undefined when there is none (only `sales_order_validated` is known). */
export function sampleBody(event: string): object | undefined {
  return event === SALES_ORDER_VALIDATED ? sampleSalesOrderValidated() : undefined;
}
