/**
 * An input's history, as a query of the ledger: the keys whose state names the input (its
 * identity, src/import/input-identity.ts), for `orders journal` and `orders resolve <input>`. The
 * same on every store, so any runner of a fleet sharing a PostgreSQL ledger sees what another
 * left in doubt.
 */
import { UsageError } from '../core/errors.js';
import { normalizeBaseUrl } from '../core/url.js';
import { type LedgerPlace, ledgerServices, openLedger } from '../ledger/open.js';
import type { LedgerEntry } from '../ledger/record.js';
import type { LedgerKind, ListedEntry } from '../ledger/store.js';

/** The keys of one service and kind whose state names the input. */
export interface ServiceHistory {
  baseUrl: string;
  kind: LedgerKind;
  entries: ListedEntry[];
}

/** What the ledger knows of an input: the service shown, and the others it was sent to. */
export interface InputHistory {
  /** Undefined when the ledger holds nothing of the input. */
  main: ServiceHistory | undefined;
  others: ServiceHistory[];
}

/**
 * Reads the history of the input named `names` (input-identity.ts `identitiesOf`) in every
 * service of the ledger, or of `configured` alone when it is given and has some. Several services
 * and none configured is exit 2, asking for `--base-url`.
 */
export async function readHistory(
  place: LedgerPlace,
  names: readonly string[],
  configured: string | undefined,
  signal: AbortSignal,
  shown: string,
): Promise<InputHistory> {
  const found: ServiceHistory[] = [];
  for (const { baseUrl, kind } of await servicesToRead(place, configured)) {
    const store = await openLedger(place, {
      baseUrl,
      kind,
      source: { by: 'orders resolve' },
      readOnly: true,
      signal,
    });
    try {
      // In input order: what `orders journal` lists and `--from-events` settles reads as the input.
      const entries = (await store.list({ inputs: names })).sort(
        (a, b) => (a.entry.line ?? 0) - (b.entry.line ?? 0) || a.externalId.localeCompare(b.externalId),
      );
      if (entries.length > 0) found.push({ baseUrl: store.sameServiceAs ?? store.baseUrl, kind, entries });
    } finally {
      await store.close();
    }
  }
  const wanted = configured === undefined ? undefined : normalizeBaseUrl(configured);
  const main =
    found.find((history) => history.baseUrl === wanted && history.kind === 'orders') ??
    found.find((history) => history.baseUrl === wanted) ??
    (found.length === 1 ? found[0] : undefined);
  if (main === undefined && found.length > 1) {
    const urls = [...new Set(found.map((history) => history.baseUrl))];
    throw new UsageError(
      `The order ledger holds orders of ${shown} for ${urls.length} services (${urls.join(', ')}), and ${wanted === undefined ? 'no --base-url was given' : `none is the configured base URL ${wanted}`}: say which with --base-url.`,
    );
  }
  return { main, others: found.filter((history) => history !== main) };
}

/** The services (and kinds) to look in: the configured one's, or every one the ledger holds. */
async function servicesToRead(
  place: LedgerPlace,
  configured: string | undefined,
): Promise<{ baseUrl: string; kind: LedgerKind }[]> {
  const all = await ledgerServices(place);
  if (configured === undefined) return all;
  const mine = [
    { baseUrl: configured, kind: 'orders' as const },
    { baseUrl: configured, kind: 'contact-references' as const },
  ];
  const wanted = normalizeBaseUrl(configured);
  return [...mine, ...all.filter((service) => normalizeBaseUrl(service.baseUrl) !== wanted)];
}

/** How `orders journal` names a state. */
export type HistoryState =
  | 'created'
  | 'created (resolved)'
  | 'failed'
  | 'not created (resolved)'
  | 'in doubt'
  | 'being sent';

export function historyState(entry: LedgerEntry): HistoryState {
  if (entry.resolved === 'created') return 'created (resolved)';
  if (entry.resolved === 'not-created') return 'not created (resolved)';
  if (entry.status === 'created') return 'created';
  if (entry.status === 'not-created') return 'failed';
  if (entry.status === 'claimed') return 'being sent';
  return 'in doubt';
}
