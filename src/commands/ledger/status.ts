/**
 * `ledger status`: where the order ledger is (a folder, or a PostgreSQL URL without its
 * password), which backend, its keys by status for each service and kind, and the processes that
 * have it open, each alive or not. Exit 0 whatever it finds.
 */
import type { Context } from '../../command-support/context.js';
import { formatCount } from '../../io/numbers.js';
import { ledgerPlaceOf } from '../../ledger/open.js';
import type { LedgerKind, LedgerOpener } from '../../ledger/store.js';
import { listStatus } from './list.js';
import { type LedgerWhere, ledgerWhere, readService, serviceOf, servicesInScope } from './scope.js';
import { LEDGER_STATUSES, type LedgerListStatus } from './statuses.js';

type Counts = Record<LedgerListStatus, number> & { total: number };

/** The `--json` shape of `ledger status`. */
export interface LedgerStatusReport extends LedgerWhere {
  services: { service: string; kind: LedgerKind; counts: Counts }[];
  openers: { pid: number; host: string; alive: LedgerOpener['alive']; services: string[] }[];
}

export async function run(ctx: Context): Promise<void> {
  const place = await ledgerPlaceOf(ctx);
  const report: LedgerStatusReport = { ...ledgerWhere(place), services: [], openers: [] };
  const openers = new Map<string, LedgerStatusReport['openers'][number]>();
  for (const scope of await servicesInScope(place, undefined, undefined)) {
    await readService(place, scope, ctx.signal, async (store) => {
      const counts = emptyCounts();
      for (const { entry } of await store.list()) {
        counts[listStatus(entry)]++;
        counts.total++;
      }
      const service = serviceOf(store);
      report.services.push({ service, kind: scope.kind, counts });
      for (const { owner, alive } of await store.openers()) {
        const known = openers.get(owner.id) ?? { pid: owner.pid, host: owner.host, alive, services: [] };
        const named = scope.kind === 'orders' ? service : `${service} (${scope.kind})`;
        if (!known.services.includes(named)) known.services.push(named);
        openers.set(owner.id, known);
      }
    });
  }
  report.openers = [...openers.values()];
  if (ctx.json) {
    ctx.io.out(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  ctx.io.out(renderStatus(report));
}

function emptyCounts(): Counts {
  return { 'in-doubt': 0, claimed: 0, created: 0, validated: 0, failed: 0, 'not-created': 0, total: 0 };
}

/** The report as aligned text: one line per service and kind, then one per process. */
function renderStatus(report: LedgerStatusReport): string {
  const backend = report.backend === 'postgres' ? 'PostgreSQL' : 'local folder';
  const lines = [`Order ledger: ${report.location} (${backend})`];
  if (report.services.length === 0) {
    lines.push('It holds no keys yet.');
  } else {
    const header = [
      'SERVICE',
      'KIND',
      ...LEDGER_STATUSES.map((s) => s.toUpperCase().replace('-', ' ')),
      'TOTAL',
    ];
    const rows = report.services.map(({ service, kind, counts }) => [
      service,
      kind,
      ...LEDGER_STATUSES.map((status) => formatCount(counts[status])),
      formatCount(counts.total),
    ]);
    const widths = header.map((title, i) =>
      Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)),
    );
    const line = (cells: string[]) =>
      cells
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join('  ')
        .trimEnd();
    lines.push(line(header), ...rows.map(line));
  }
  if (report.openers.length === 0) {
    lines.push('No ordercli has it open.');
  } else {
    lines.push('Open by:');
    for (const opener of report.openers) {
      const alive = opener.alive === 'unknown' ? 'unknown (another host or PID namespace)' : opener.alive;
      lines.push(`  pid ${opener.pid} on ${opener.host}  ${alive}  ${opener.services.join(', ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
