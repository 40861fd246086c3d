/**
 * `--await validated`: each order created (or created before, not yet known as validated) waits
 * for its `sales_order_validated` notification, matched to it by the order's `code` from the
 * create answer, else by `id`, else by `externalId` when the notification carries them
 * (docs/assumptions.md). A notification that arrives before its order is known (a fast service
 * answers after it validated) is kept until the order comes. Each order has `timeoutMs` from its
 * creation; the wait ends once every order is validated or past its time, after sending ended.
 */
import { codeOf, idOf } from '../webhooks/event-record.js';

export interface AwaitedOrder {
  /** The order's externalId (its key in the ledger and the report). */
  key: string;
  code?: string | undefined;
  id?: string | number | undefined;
  /** When it was created (or found created), `performance.now()`. */
  since: number;
}

/** What became of one awaited order. */
export type ValidationOutcome =
  | { validated: true; validatedAt: string; afterMs: number }
  | { validated: false; reason: 'timeout' | 'interrupted' };

/** Notifications kept for orders not known yet: a bound, so that a noisy receiver cannot grow it. */
const MAX_EARLY = 100_000;
/** How often deadlines are looked at (an order is reported late by at most this much). */
const TICK_MS = 200;

export class ValidationWaiter {
  private readonly waiting = new Map<string, AwaitedOrder>();
  private readonly byCode = new Map<string, string>();
  private readonly byId = new Map<string, string>();
  private readonly outcomes = new Map<string, ValidationOutcome>();
  /** Notifications no awaited order matched yet: by code, id and externalId, with when they came. */
  private readonly early = new Map<string, string>();
  private sendingDone = false;
  private timer: NodeJS.Timeout | undefined;
  private resolveFinished!: () => void;
  /** Resolves once sending ended and no order waits any more. */
  readonly finished = new Promise<void>((resolve) => {
    this.resolveFinished = resolve;
  });
  readonly counts = { validated: 0, notValidated: 0 };

  constructor(
    private readonly timeoutMs: number,
    /** Each validation as it comes (the ledger records it). */
    private readonly onValidated: (key: string, validatedAt: string, code: string | undefined) => void,
  ) {}

  /** How many orders still wait. */
  get pending(): number {
    return this.waiting.size;
  }

  /** An order to wait for; one validated already (an earlier run recorded it) is not awaited. */
  expect(order: AwaitedOrder): void {
    if (this.outcomes.has(order.key) || this.waiting.has(order.key)) return;
    this.waiting.set(order.key, order);
    if (order.code !== undefined) this.byCode.set(order.code, order.key);
    if (order.id !== undefined) this.byId.set(String(order.id), order.key);
    for (const name of names(order)) {
      const at = this.early.get(name);
      if (at === undefined) continue;
      this.validate(order.key, at);
      return;
    }
    this.timer ??= setInterval(() => this.expire(), TICK_MS).unref();
  }

  /** A `sales_order_validated` notification's body, received at `at`. */
  notify(body: unknown, at: string): void {
    const code = codeOf(body);
    const id = idOf(body);
    const externalId =
      typeof (body as { externalId?: unknown })?.externalId === 'string'
        ? (body as { externalId: string }).externalId
        : undefined;
    const key =
      (code !== undefined ? this.byCode.get(code) : undefined) ??
      (id !== undefined ? this.byId.get(id) : undefined) ??
      (externalId !== undefined && this.waiting.has(externalId) ? externalId : undefined);
    if (key !== undefined) {
      this.validate(key, at);
      return;
    }
    if (this.early.size >= MAX_EARLY) return;
    for (const name of [code && `code:${code}`, id && `id:${id}`, externalId && `externalId:${externalId}`])
      if (name) this.early.set(name, at);
  }

  /** Sending ended: the wait ends once no order waits. */
  done(): void {
    this.sendingDone = true;
    this.settleIfDone();
  }

  /** Ends sending and waits until no order waits, or Ctrl-C (`signal`): then those left are not validated. */
  async wait(signal: AbortSignal): Promise<void> {
    this.done();
    const interrupted = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([this.finished, interrupted]);
    if (signal.aborted) this.interrupt();
  }

  /** Ctrl-C: every order still waiting is not validated; the wait ends now. */
  interrupt(): void {
    for (const key of [...this.waiting.keys()]) this.notValidated(key, 'interrupted');
    this.sendingDone = true;
    this.settleIfDone();
  }

  outcome(key: string): ValidationOutcome | undefined {
    return this.outcomes.get(key);
  }

  private validate(key: string, at: string): void {
    const order = this.waiting.get(key);
    if (!order) return;
    this.forget(order);
    const afterMs = Math.max(0, Math.round(performance.now() - order.since));
    this.outcomes.set(key, { validated: true, validatedAt: at, afterMs });
    this.counts.validated++;
    this.onValidated(key, at, order.code);
    this.settleIfDone();
  }

  private notValidated(key: string, reason: 'timeout' | 'interrupted'): void {
    const order = this.waiting.get(key);
    if (!order) return;
    this.forget(order);
    this.outcomes.set(key, { validated: false, reason });
    this.counts.notValidated++;
  }

  private forget(order: AwaitedOrder): void {
    this.waiting.delete(order.key);
    if (order.code !== undefined) this.byCode.delete(order.code);
    if (order.id !== undefined) this.byId.delete(String(order.id));
  }

  private expire(): void {
    const now = performance.now();
    for (const order of [...this.waiting.values()])
      if (now - order.since >= this.timeoutMs) this.notValidated(order.key, 'timeout');
    this.settleIfDone();
  }

  private settleIfDone(): void {
    if (!this.sendingDone || this.waiting.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.resolveFinished();
  }
}

function names(order: AwaitedOrder): string[] {
  const found = [`externalId:${order.key}`];
  if (order.code !== undefined) found.push(`code:${order.code}`);
  if (order.id !== undefined) found.push(`id:${order.id}`);
  return found;
}
