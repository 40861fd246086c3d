/**
 * `orders journal <input|journal>`: what an import's journal knows — orders by state for a base
 * URL, the other base URLs it holds, and every order whose outcome is unknown, with its input line
 * and when it was sent — so that a user can check those at the service and `orders resolve` them.
 */
import type { Context } from '../../command-support/context.js';
import { OrderJournal } from '../../import/send/journal.js';
import { locateJournal } from '../../import/send/journal-location.js';
import {
  chooseBaseUrl,
  emptyJournalCounts,
  type JournalCounts,
  journalBaseUrls,
  summarizeJournal,
  type UnknownOrder,
} from '../../import/send/journal-summary.js';
import { formatCount } from '../../io/numbers.js';
import { ledgerPlaceOf, openLedger } from '../../ledger/open.js';
import type { LedgerEntry } from '../../ledger/record.js';

export interface JournalOptions {
  target: string;
}

/** The `--json` shape of `orders journal`. */
export interface JournalReport {
  journal: string;
  baseUrl: string | null;
  counts: JournalCounts;
  unknown: UnknownOrder[];
  /** The other services this journal holds orders for, with their counts. */
  otherBaseUrls: { baseUrl: string; counts: JournalCounts }[];
}

export async function run(options: JournalOptions, ctx: Context): Promise<void> {
  const location = await locateJournal(options.target, ctx.cwd);
  const baseUrls = await journalBaseUrls(location.path);
  const settings = await ctx.settings();
  // Several services and none named: the latest one the journal was used with.
  const baseUrl = chooseBaseUrl(baseUrls, settings.baseUrl) ?? baseUrls.at(-1);
  const summary =
    baseUrl === undefined
      ? undefined
      : await summarizeJournal(location.path, baseUrl, await ledgerEntries(ctx, location.path, baseUrl));
  const others: JournalReport['otherBaseUrls'] = [];
  for (const other of baseUrls) {
    if (other === baseUrl) continue;
    others.push({ baseUrl: other, counts: (await summarizeJournal(location.path, other)).counts });
  }
  const report: JournalReport = {
    journal: location.shown,
    baseUrl: baseUrl ?? null,
    counts: summary?.counts ?? emptyJournalCounts(),
    unknown: summary?.unknown ?? [],
    otherBaseUrls: others,
  };
  if (ctx.json) {
    ctx.io.out(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  ctx.io.out(renderReport(report, options.target));
}

/**
 * What the order ledger says of the orders this journal's runs claimed (it decides; a kill can
 * leave the journal behind it). A ledger that cannot be read is said, and the journal shown alone.
 */
async function ledgerEntries(
  ctx: Context,
  journal: string,
  baseUrl: string,
): Promise<Map<string, LedgerEntry> | undefined> {
  const { replay } = await OrderJournal.inspect(journal, baseUrl);
  try {
    const ledger = await openLedger(await ledgerPlaceOf(ctx), {
      baseUrl,
      kind: replay.command === 'refs contacts import' ? 'contact-references' : 'orders',
      source: { by: 'orders resolve' },
      readOnly: true,
      signal: ctx.signal,
    });
    try {
      return await ledger.entriesOfJournal(journal);
    } finally {
      await ledger.close();
    }
  } catch (error) {
    ctx.io.err(
      `note: the order ledger could not be read (${(error as Error).message}); this is the journal alone.\n`,
    );
    return undefined;
  }
}

function renderReport(report: JournalReport, target: string): string {
  const { counts } = report;
  if (report.baseUrl === null) return `The journal ${report.journal} holds no orders yet.\n`;
  const rows: [string, number, string][] = [
    ['created', counts.created, 'the service answered: skipped by every run'],
    ['created (resolved)', counts.resolvedCreated, 'recorded with orders resolve: never sent again'],
    ['failed', counts.failed, 'refused by the service: the next run sends them again'],
    [
      'not created (resolved)',
      counts.resolvedNotCreated,
      'recorded with orders resolve: the next run sends them',
    ],
    ['unknown', counts.unknown, counts.unknown > 0 ? 'may exist at the service: see below' : ''],
    ['total', counts.total, ''],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const numbers = Math.max(...rows.map(([, n]) => formatCount(n).length));
  const lines = [`Journal ${report.journal} for ${report.baseUrl}:`];
  for (const [label, n, note] of rows) {
    lines.push(
      `  ${label.padEnd(width)}  ${formatCount(n).padStart(numbers)}${note ? `   ${note}` : ''}`.trimEnd(),
    );
  }
  if (report.unknown.length > 0) {
    lines.push('Orders with an unknown outcome (check each at the service):');
    const idWidth = Math.max(...report.unknown.map((o) => o.externalId.length));
    const lineWidth = Math.max(...report.unknown.map((o) => (o.line === null ? 0 : `line ${o.line}`.length)));
    for (const order of report.unknown) {
      const line =
        lineWidth === 0 ? '' : `${(order.line === null ? '' : `line ${order.line}`).padEnd(lineWidth)}  `;
      const sent = order.sentAt === null ? '' : `sent ${order.sentAt}  `;
      lines.push(`  ${order.externalId.padEnd(idWidth)}  ${line}${sent}${order.reason}`);
    }
    lines.push(
      `Then record what you found: ordercli orders resolve ${target} --created <externalId>[=<id>] … --not-created <externalId> …`,
      `(or --from-events <listen log> to take them from the sales_order_validated notifications), and run the same import again.`,
    );
  }
  for (const other of report.otherBaseUrls) {
    lines.push(
      `Also for ${other.baseUrl}: ${formatCount(other.counts.total)} order${other.counts.total === 1 ? '' : 's'}, ${formatCount(other.counts.unknown)} unknown (--base-url ${other.baseUrl} to see them).`,
    );
  }
  return `${lines.join('\n')}\n`;
}
