/**
 * Order validation: a created order becomes `validated` after a delay, and `sales_order_validated`
 * is then delivered to every subscriber. The interface shows no states; a short pending phase lets
 * clients see both states and makes the webhook arrive after the 201, as it would from a service.
 * With a validation fail rate, a share of the orders is never validated (nor notified), so that a
 * client's wait for validation can be tested to its time-out.
 */
import { createHash } from 'node:crypto';
import { SALES_ORDER_VALIDATED } from '../schemas/webhook.js';
import { buildSalesOrderValidatedBody } from '../webhooks/notify.js';
import type { WebhookDeliverer } from './delivery.js';
import type { SandboxStore, StoredOrder } from './store.js';

export interface OrderValidationOptions {
  store: SandboxStore;
  deliverer: WebhookDeliverer;
  webhookKey: string;
  delayMs: number;
  /** Share of orders never validated (0..1), chosen by `isNeverValidated`; default 0. */
  failRate?: number;
  /** Told of each order left unvalidated; never holds the key. */
  logger?: (line: string) => void;
}

export class OrderValidation {
  private readonly options: OrderValidationOptions;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(options: OrderValidationOptions) {
    this.options = options;
  }

  /**
   * Validates the order after the delay (one timer per order: no scan of the store), unless it is
   * one of the fail rate's: then nothing is scheduled, and it stays pending for good.
   */
  schedule(order: StoredOrder): void {
    const failRate = this.options.failRate ?? 0;
    if (isNeverValidated(validationKeyOf(order), failRate)) {
      this.options.logger?.(
        `order ${order.code}${order.externalId !== undefined ? ` (${order.externalId})` : ''} will never be validated (validation fail rate ${failRate})`,
      );
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.validate(order.id);
    }, this.options.delayMs);
    this.timers.add(timer);
  }

  /** Validations scheduled and not yet run. */
  get pending(): number {
    return this.timers.size;
  }

  /** Drops every pending validation (reset, close). */
  cancelAll(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private validate(id: number): void {
    const { store, deliverer, webhookKey } = this.options;
    const order = store.markValidated(id);
    if (order === undefined) return;
    const body = buildSalesOrderValidatedBody(order);
    for (const subscription of store.subscribersOf(SALES_ORDER_VALIDATED)) {
      deliverer.deliver({ event: SALES_ORDER_VALIDATED, url: subscription.url, key: webhookKey, body });
    }
  }
}

/** What picks an order for the fail rate: its `externalId`, else (none sent) its code. */
export function validationKeyOf(order: Pick<StoredOrder, 'externalId' | 'code'>): string {
  return typeof order.externalId === 'string' ? order.externalId : order.code;
}

/**
 * Whether the order with this key is one the sandbox never validates at `failRate`: the first 4
 * bytes of the SHA-256 of the key (UTF-8), read as a big-endian fraction of 2^32, are below the
 * rate. Reproducible on purpose: the same `externalId` at the same rate is always chosen, in any
 * run, so that a test knows in advance which of its orders time out; 0 picks none, 1 all.
 */
export function isNeverValidated(key: string, failRate: number): boolean {
  if (failRate <= 0) return false;
  if (failRate >= 1) return true;
  const digest = createHash('sha256').update(key, 'utf8').digest();
  return digest.readUInt32BE(0) / 2 ** 32 < failRate;
}
