/**
 * What the `ledger` verbs share: where the ledger is, in words that never show a password, which
 * services and kinds a verb reads, and reading one of them through a read-only store.
 */
import { redactUrlPassword } from '../../core/redact.js';
import { normalizeBaseUrl, parseHttpUrl } from '../../core/url.js';
import {
  isPostgresUrl,
  type LedgerPlace,
  ledgerServices,
  localLedgerRoot,
  openLedger,
} from '../../ledger/open.js';
import type { LedgerKind, LedgerService, LedgerStore } from '../../ledger/store.js';

export const LEDGER_KINDS: readonly LedgerKind[] = ['orders', 'contact-references'];

/** Where a ledger is: a local folder (absolute) or a PostgreSQL URL, its password as `***`. */
export interface LedgerWhere {
  location: string;
  backend: 'local' | 'postgres';
}

export function ledgerWhere(place: LedgerPlace): LedgerWhere {
  if (place.ledger !== undefined && isPostgresUrl(place.ledger)) {
    return { location: redactUrlPassword(place.ledger), backend: 'postgres' };
  }
  return { location: localLedgerRoot(place) ?? '', backend: 'local' };
}

/** A `--service` value: an http(s) URL, normalized as the ledger keys services. */
export function serviceFlag(value: string): string {
  parseHttpUrl(value, '--service', 'https://orders.example.com');
  return normalizeBaseUrl(value);
}

/**
 * The services and kinds a verb reads: `service`'s (both kinds unless `kind`), or with none
 * every one the ledger holds.
 */
export async function servicesInScope(
  place: LedgerPlace,
  service: string | undefined,
  kind: LedgerKind | undefined,
): Promise<LedgerService[]> {
  const kinds = kind === undefined ? LEDGER_KINDS : [kind];
  if (service !== undefined) return kinds.map((each) => ({ baseUrl: service, kind: each }));
  return (await ledgerServices(place)).filter((each) => kinds.includes(each.kind));
}

/** Runs `read` on a read-only store of one service and kind, closed after. */
export async function readService<T>(
  place: LedgerPlace,
  { baseUrl, kind }: LedgerService,
  signal: AbortSignal,
  read: (store: LedgerStore) => Promise<T>,
): Promise<T> {
  // Read-only: nothing is written, so the source is never recorded.
  const source = { by: 'ledger copy' } as const;
  const store = await openLedger(place, { baseUrl, kind, source, readOnly: true, signal });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** The service a store's keys belong to: the one whose ledger it uses for another name of it. */
export function serviceOf(store: LedgerStore): string {
  return store.sameServiceAs ?? store.baseUrl;
}
