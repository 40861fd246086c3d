/**
 * Order validation: a created order becomes `validated` after a delay, and `sales_order_validated`
 * is then delivered to every subscriber. The interface shows no states; a short pending phase lets
 * clients see both states and makes the webhook arrive after the 201, as it would from a service.
 */
import { SALES_ORDER_VALIDATED } from '../schemas/webhook.js';
import { buildSalesOrderValidatedBody } from '../webhooks/notify.js';
import type { WebhookDeliverer } from './delivery.js';
import type { SandboxStore, StoredOrder } from './store.js';

export interface OrderValidationOptions {
  store: SandboxStore;
  deliverer: WebhookDeliverer;
  webhookKey: string;
  delayMs: number;
}

export class OrderValidation {
  private readonly options: OrderValidationOptions;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(options: OrderValidationOptions) {
    this.options = options;
  }

  /** Validates the order after the delay (one timer per order: no scan of the store). */
  schedule(order: StoredOrder): void {
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
