/**
 * `listen --expect`: the notifications a CI job waits for (their events, and body fields that must
 * read as given values), how many, and the promise that resolves once that many were accepted.
 * Only accepted notifications are counted (the key checked, durably logged or queued, answered 200):
 * the session hands on nothing else.
 */
import { UsageError } from '../core/errors.js';
import type { AcceptedEvent } from './receiver.js';

/** `--where <field>=<value>`: a body field (a dotted path) and the text its value must read as. */
export interface FieldCondition {
  /** As typed before the first `=`: `code`, `data.code`, `items.0.internalReferenceId`. */
  field: string;
  value: string;
}

export interface Expectation {
  /** The events that count (X-WEBHOOK-EVENT). */
  events: string[];
  /** Every one must hold for a notification to count. */
  where: FieldCondition[];
  /** How many matching notifications end the wait. */
  count: number;
}

/** One `--where` text, `<field>=<value>` (the value may be empty, or hold `=`). */
export function parseFieldCondition(text: string): FieldCondition {
  const at = text.indexOf('=');
  const field = at === -1 ? '' : text.slice(0, at).trim();
  if (field === '' || field.split('.').some((part) => part === '')) {
    throw new UsageError(
      `--where takes <field>=<value>, such as code=SO-2026-000001 or data.code=SO-1, not ${JSON.stringify(text)}.`,
    );
  }
  return { field, value: text.slice(at + 1) };
}

/**
 * A body field's value as text, to compare with what `--where` says: a string as is, a number, a
 * boolean or null as JSON writes it; undefined when the field is absent or holds an object or a list.
 */
export function fieldText(body: unknown, field: string): string | undefined {
  let value: unknown = body;
  for (const part of field.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return undefined;
}

/** Counts the accepted notifications that match an expectation; `met` resolves at its count. */
export class ExpectedNotifications {
  /** Matching notifications accepted so far. */
  arrived = 0;
  /** Resolves once `count` matching notifications were accepted. */
  readonly met: Promise<void>;
  private resolveMet: () => void = () => undefined;

  constructor(readonly expectation: Expectation) {
    this.met = new Promise((resolve) => {
      this.resolveMet = resolve;
    });
  }

  /** Counts an accepted notification if it matches. */
  count(event: AcceptedEvent): void {
    if (!this.matches(event)) return;
    this.arrived++;
    if (this.arrived === this.expectation.count) this.resolveMet();
  }

  private matches(event: AcceptedEvent): boolean {
    const { events, where } = this.expectation;
    if (event.event === null || !events.includes(event.event)) return false;
    return where.every((condition) => fieldText(event.body, condition.field) === condition.value);
  }

  /** `3 sales_order_validated notifications with code=SO-1`: what is waited for. */
  describe(): string {
    return `${this.expectation.count} ${this.what()}`;
  }

  /** `1 of 3 expected sales_order_validated notifications arrived within 30s`, for the exit 5. */
  shortfall(within: string): string {
    const { count } = this.expectation;
    return `${this.arrived} of ${count} expected ${this.what()} arrived within ${within}`;
  }

  private what(): string {
    const { events, where, count } = this.expectation;
    const noun = count === 1 ? 'notification' : 'notifications';
    const fields = where.map((c) => `${c.field}=${c.value}`).join(' and ');
    return `${events.join(' or ')} ${noun}${fields === '' ? '' : ` with ${fields}`}`;
  }
}
