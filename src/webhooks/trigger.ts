/**
 * What `webhooks trigger` and `webhooks replay` need besides `sendNotification`: a realistic
 * sample body, the key to send, and one way of describing a receiver's answer.
 */
import type { Context } from '../cli/context.js';
import { UsageError } from '../cli/errors.js';
import { SALES_ORDER_VALIDATED } from '../schemas/webhook.js';
import {
  buildSalesOrderValidatedBody,
  DEFAULT_NOTIFICATION_TIMEOUT_MS,
  type SalesOrderValidatedBody,
} from './notify.js';

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

/** The key to send: `--key`, else ORDERCLI_WEBHOOK_KEY, else the profile's webhook-key; registered as a secret. */
export async function keyToSend(flag: string | undefined, ctx: Context, command: string): Promise<string> {
  const settings = await ctx.settings();
  const key = flag !== undefined && flag !== '' ? flag : settings.webhookKey;
  if (key === undefined || key.trim() === '') {
    throw new UsageError(
      `${command} needs the webhook key to send in X-WEBHOOK-KEY: pass --key, set ORDERCLI_WEBHOOK_KEY, or save it with ordercli webhooks subscribe --save-key.`,
    );
  }
  ctx.io.redactor.addSecret(key);
  return key;
}

/** The per-notification time-out: the global --timeout (ms) when set, else the notification default. */
export async function notificationTimeout(ctx: Context): Promise<number> {
  const settings = await ctx.settings();
  return settings.sources.timeoutMs === 'default' ? DEFAULT_NOTIFICATION_TIMEOUT_MS : settings.timeoutMs;
}

/** Checks a receiver URL. */
export function receiverUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url must be a URL such as http://127.0.0.1:8787/, not ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--url must be an http:// or https:// URL, not ${url.protocol}//.`);
  }
  return url;
}
