/**
 * The words of messages and reports for what the order ledger holds of a key: how `orders create`,
 * `orders new` and an import's report say why an order was not sent.
 */
import type { LedgerEntry } from '../../ledger/record.js';

/** `created at 2026-11-23T11:00:00.000Z by orders import of /data/orders.csv (id 10001, code SO-…)` */
export function describeEntry(entry: LedgerEntry): string {
  const who = entry.by === undefined ? 'ordercli' : `${entry.by}${entry.input ? ` of ${entry.input}` : ''}`;
  const ids = [
    entry.id !== undefined ? `id ${entry.id}` : undefined,
    entry.code !== undefined ? `code ${entry.code}` : undefined,
  ].filter(Boolean);
  const what =
    entry.event === 'resolved'
      ? `resolved as ${entry.status === 'created' ? 'created' : 'not created'}`
      : entry.status === 'created'
        ? answeredAlreadyThere(entry)
          ? `found already there (the service answered ${entry.httpStatus})`
          : 'created'
        : entry.status === 'claimed'
          ? 'sent with no outcome recorded'
          : entry.status === 'in-doubt'
            ? `sent with an unknown outcome (${entry.reason ?? 'no answer'})`
            : 'refused';
  const validated = entry.validatedAt === undefined ? '' : `, validated at ${entry.validatedAt}`;
  return `${what} at ${entry.at} by ${who}${ids.length > 0 ? ` (${ids.join(', ')})` : ''}${validated}`;
}

/**
 * A key recorded as created on an error answer: the service said it already had it (a contact
 * reference answered 409), so it exists, though this send did not create it.
 */
export function answeredAlreadyThere(entry: LedgerEntry): boolean {
  const status = entry.httpStatus;
  return entry.event === 'created' && status !== undefined && (status < 200 || status >= 300);
}
