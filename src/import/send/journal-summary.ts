/**
 * What a journal knows, for `orders journal` and `orders resolve`: the base URLs it holds, and for
 * one of them the orders by state, with every order whose outcome is unknown (line, when sent).
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { UsageError } from '../../core/errors.js';
import { normalizeBaseUrl } from '../../core/url.js';
import { type JournalState, OrderJournal } from './journal.js';

/** Orders of one base URL by state; `resolved*` are the states `orders resolve` recorded. */
export interface JournalCounts {
  created: number;
  resolvedCreated: number;
  failed: number;
  resolvedNotCreated: number;
  unknown: number;
  total: number;
}

export interface UnknownOrder {
  externalId: string;
  /** The order's line in the input of the run that sent it (journals of ordercli 1.x lack it). */
  line: number | null;
  /** When its `sending` record was written. */
  sentAt: string | null;
  /** Why it is unknown (the connection broke, the run stopped, ...). */
  reason: string;
}

export interface JournalSummary {
  baseUrl: string;
  states: Map<string, JournalState>;
  counts: JournalCounts;
  unknown: UnknownOrder[];
  tornTail: boolean;
}

/** The normalized base URLs that records of the journal name, in order of first appearance. */
export async function journalBaseUrls(path: string): Promise<string[]> {
  const seen = new Set<string>();
  const lines = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  // A regular expression, not a parse per line: a journal of a big import has millions of lines.
  const pattern = /"baseUrl"\s*:\s*("(?:[^"\\]|\\.)*")/;
  for await (const line of lines) {
    const match = pattern.exec(line);
    if (!match) continue;
    try {
      seen.add(normalizeBaseUrl(JSON.parse(match[1]!) as string));
    } catch {
      // A torn line; replay reports damage where it matters.
    }
  }
  return [...seen];
}

/**
 * The base URL whose orders a command deals with: the configured one when the journal holds it,
 * else the journal's only one; undefined when the journal holds several and none was named.
 */
export function chooseBaseUrl(
  baseUrls: readonly string[],
  configured: string | undefined,
): string | undefined {
  if (configured !== undefined) {
    const wanted = normalizeBaseUrl(configured);
    if (baseUrls.includes(wanted)) return wanted;
  }
  return baseUrls.length === 1 ? baseUrls[0] : undefined;
}

/** The error when a journal holds several services and none was named. */
export function ambiguousBaseUrl(
  shown: string,
  baseUrls: readonly string[],
  configured?: string,
): UsageError {
  const why =
    configured === undefined
      ? 'and no --base-url was given'
      : `and none is the configured base URL ${normalizeBaseUrl(configured)}`;
  return new UsageError(
    `The journal ${shown} holds orders for ${baseUrls.length} services (${baseUrls.join(', ')}), ${why}: say which with --base-url.`,
  );
}

/** Counts of a journal that holds nothing yet. */
export function emptyJournalCounts(): JournalCounts {
  return { created: 0, resolvedCreated: 0, failed: 0, resolvedNotCreated: 0, unknown: 0, total: 0 };
}

/**
 * Replays the journal for one base URL and sorts its orders by state. `ledger`: what the order
 * ledger says of the orders this journal's runs claimed, which stands over the journal's word
 * (the ledger decides; after a kill the journal may lack the last claims and outcomes).
 */
export async function summarizeJournal(
  path: string,
  baseUrl: string,
  ledger?: ReadonlyMap<string, JournalState>,
): Promise<JournalSummary> {
  const { states, replay } = await OrderJournal.inspect(path, baseUrl);
  for (const [externalId, entry] of ledger ?? []) states.set(externalId, entry);
  const counts = emptyJournalCounts();
  const unknown: UnknownOrder[] = [];
  for (const [externalId, state] of states) {
    counts.total++;
    if (state.status === 'created') {
      if (state.resolved === 'created') counts.resolvedCreated++;
      else counts.created++;
    } else if (state.status === 'not-created') {
      if (state.resolved === 'not-created') counts.resolvedNotCreated++;
      else counts.failed++;
    } else {
      counts.unknown++;
      unknown.push({
        externalId,
        line: state.line ?? null,
        sentAt: state.sentAt ?? null,
        reason:
          state.status === 'claimed'
            ? 'the run that sent it stopped before the answer'
            : (state.reason ?? 'no answer'),
      });
    }
  }
  return { baseUrl: normalizeBaseUrl(baseUrl), states, counts, unknown, tornTail: replay.tornTail };
}
