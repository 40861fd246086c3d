/**
 * `orders journal <input|journal>`: an input's history in the order ledger — its orders by state
 * at a service, the other services it was sent to, and every order in doubt with its input line
 * and when it was sent — so that a user (on any runner sharing the ledger) can check those at the
 * service and `orders resolve` them. A query of the ledger: no file beside the input is read.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { identitiesOf, LEGACY_JOURNAL_SUFFIX, legacyJournalPath } from '../../import/input-identity.js';
import { formatCount } from '../../io/numbers.js';
import { ledgerPlaceOf } from '../../ledger/open.js';
import { type HistoryState, historyState, readHistory, type ServiceHistory } from '../../orders/history.js';

export interface JournalOptions {
  target: string;
}

export interface JournalCounts {
  created: number;
  resolvedCreated: number;
  failed: number;
  resolvedNotCreated: number;
  /** In doubt: sent with an unknown outcome, or claimed by an ordercli that is gone. */
  unknown: number;
  /** Being sent right now by a live ordercli. */
  sending: number;
  /** Of the created, those whose validation arrived (`--await validated`). */
  validated: number;
  total: number;
}

export interface UnknownOrder {
  externalId: string;
  /** The order's line in the input of the run that sent it (records of ordercli 1.x lack it). */
  line: number | null;
  sentAt: string | null;
  reason: string;
}

/** The `--json` shape of `orders journal`. */
export interface JournalReport {
  /** The input as named. */
  journal: string;
  baseUrl: string | null;
  kind: string | null;
  counts: JournalCounts;
  unknown: UnknownOrder[];
  otherBaseUrls: { baseUrl: string; counts: JournalCounts }[];
}

export async function run(options: JournalOptions, ctx: Context): Promise<void> {
  const settings = await ctx.settings();
  const history = await readHistory(
    await ledgerPlaceOf(ctx),
    identitiesOf(options.target, ctx.cwd),
    settings.baseUrl,
    ctx.signal,
    options.target,
  );
  const report: JournalReport = {
    journal: options.target,
    baseUrl: history.main?.baseUrl ?? null,
    kind: history.main?.kind ?? null,
    counts: countsOf(history.main),
    unknown: unknownOf(history.main),
    otherBaseUrls: history.others.map((other) => ({ baseUrl: other.baseUrl, counts: countsOf(other) })),
  };
  const unfolded = unfoldedJournal(options.target, ctx.cwd);
  if (unfolded !== undefined) {
    ctx.io.err(
      `note: ${unfolded} is a journal of an earlier ordercli, not folded into the order ledger yet: the next import of this input folds it in; until then what it holds is not shown here.\n`,
    );
  }
  ctx.io.out(ctx.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report, options.target));
}

/** A journal an earlier release left for this input and no import has folded in yet. */
function unfoldedJournal(target: string, cwd: string): string | undefined {
  const path = target.endsWith(LEGACY_JOURNAL_SUFFIX)
    ? resolve(cwd, target)
    : legacyJournalPath(target, undefined, cwd);
  if (path === undefined) return undefined;
  try {
    return statSync(path).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

const COUNTED: Record<HistoryState, keyof JournalCounts> = {
  created: 'created',
  'created (resolved)': 'resolvedCreated',
  failed: 'failed',
  'not created (resolved)': 'resolvedNotCreated',
  'in doubt': 'unknown',
  'being sent': 'sending',
};

function countsOf(history: ServiceHistory | undefined): JournalCounts {
  const counts: JournalCounts = {
    created: 0,
    resolvedCreated: 0,
    failed: 0,
    resolvedNotCreated: 0,
    unknown: 0,
    sending: 0,
    validated: 0,
    total: 0,
  };
  for (const { entry } of history?.entries ?? []) {
    counts[COUNTED[historyState(entry)]]++;
    if (entry.validatedAt !== undefined) counts.validated++;
    counts.total++;
  }
  return counts;
}

/** The orders in doubt, in input order. */
function unknownOf(history: ServiceHistory | undefined): UnknownOrder[] {
  return (history?.entries ?? [])
    .filter(({ entry }) => entry.status === 'in-doubt')
    .map(({ externalId, entry }) => ({
      externalId,
      line: entry.line ?? null,
      sentAt: entry.sentAt ?? null,
      reason: entry.reason ?? 'the run that sent it stopped before the answer',
    }))
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || a.externalId.localeCompare(b.externalId));
}

function renderReport(report: JournalReport, target: string): string {
  const { counts } = report;
  if (report.baseUrl === null) {
    return `The order ledger holds nothing sent from ${target}: none of its orders was sent (or the ledger is another: check --ledger).\n`;
  }
  const rows: [string, number, string][] = [
    ['created', counts.created, 'the service answered: skipped by every run'],
    ['created (resolved)', counts.resolvedCreated, 'recorded with orders resolve: never sent again'],
    [
      '  validated',
      counts.validated,
      'of the created: their sales_order_validated arrived (--await validated)',
    ],
    ['failed', counts.failed, 'refused by the service: the next run sends them again'],
    [
      'not created (resolved)',
      counts.resolvedNotCreated,
      'recorded with orders resolve: the next run sends them',
    ],
    ['being sent', counts.sending, counts.sending > 0 ? 'by an ordercli running now' : ''],
    ['unknown', counts.unknown, counts.unknown > 0 ? 'may exist at the service: see below' : ''],
    ['total', counts.total, 'its other orders were never sent: the next run sends them'],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const numbers = Math.max(...rows.map(([, n]) => formatCount(n).length));
  const lines = [`Orders of ${target} in the order ledger of ${report.baseUrl}:`];
  for (const [label, n, note] of rows) {
    if (n === 0 && (label === 'being sent' || label === '  validated')) continue;
    lines.push(
      `  ${label.padEnd(width)}  ${formatCount(n).padStart(numbers)}${note ? `   ${note}` : ''}`.trimEnd(),
    );
  }
  if (report.unknown.length > 0) lines.push(...unknownLines(report.unknown, target));
  for (const other of report.otherBaseUrls) {
    lines.push(
      `Also for ${other.baseUrl}: ${formatCount(other.counts.total)} order${other.counts.total === 1 ? '' : 's'}, ${formatCount(other.counts.unknown)} unknown (--base-url ${other.baseUrl} to see them).`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function unknownLines(unknown: UnknownOrder[], target: string): string[] {
  const lines = ['Orders with an unknown outcome (check each at the service):'];
  const idWidth = Math.max(...unknown.map((o) => o.externalId.length));
  const lineWidth = Math.max(...unknown.map((o) => (o.line === null ? 0 : `line ${o.line}`.length)));
  for (const order of unknown) {
    const line =
      lineWidth === 0 ? '' : `${(order.line === null ? '' : `line ${order.line}`).padEnd(lineWidth)}  `;
    const sent = order.sentAt === null ? '' : `sent ${order.sentAt}  `;
    lines.push(`  ${order.externalId.padEnd(idWidth)}  ${line}${sent}${order.reason}`);
  }
  lines.push(
    `Then record what you found: ordercli orders resolve ${target} --created <externalId>[=<id>] … --not-created <externalId> …`,
    `(or --from-events <listen log> to take them from the sales_order_validated notifications), and run the same import again.`,
  );
  return lines;
}
