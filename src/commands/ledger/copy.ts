/**
 * `ledger copy --to <url|dir>`: records in another ledger (PostgreSQL, or a folder) what the
 * configured one knows, every service and kind: what a move to a shared ledger needs so that it
 * forgets nothing. The copy is upgrade.ts `copyLedger`; this renders its result.
 */
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { urlPasswords } from '../../core/redact.js';
import { countOf, formatCount } from '../../io/numbers.js';
import { type LedgerPlace, ledgerPlaceOf, ledgerServices, openLedger } from '../../ledger/open.js';
import { type CopiedService, copyLedger } from '../../ledger/upgrade.js';
import type { LedgerCopyFlags } from './index.js';
import { ledgerWhere } from './scope.js';

/** The `--json` shape of `ledger copy`. */
export interface LedgerCopyReport {
  from: string;
  to: string;
  services: {
    service: string;
    kind: CopiedService['kind'];
    copied: number;
    known: number;
    conflicts: string[];
  }[];
}

/** Conflicting keys named in the warning (all of them are in `--json`). */
const CONFLICTS_NAMED = 10;

export async function run(flags: LedgerCopyFlags, ctx: Context): Promise<void> {
  if (flags.to.trim() === '') throw new UsageError('--to needs a postgres:// URL or a folder.');
  for (const password of urlPasswords(flags.to)) ctx.io.redactor.addSecret(password);
  if (urlPasswords(flags.to).length > 0) {
    ctx.io.err(
      'warning: a password given in --to stays in your shell history and shows in the process list; next time leave it out of the URL and set PGPASSWORD or a ~/.pgpass file (PostgreSQL reads both).\n',
    );
  }
  const from = await ledgerPlaceOf(ctx);
  const to: LedgerPlace = { ledger: flags.to, configFolder: from.configFolder, cwd: ctx.cwd };
  const report: LedgerCopyReport = {
    from: ledgerWhere(from).location,
    to: ledgerWhere(to).location,
    services: [],
  };
  if (report.from === report.to) {
    throw new UsageError(
      `--to names the ledger being copied, ${report.to}: name the ledger to copy from with --ledger (default: the config folder's).`,
    );
  }
  const copied = await copyLedger(from, to, { openLedger, ledgerServices }, ctx.signal);
  report.services = copied.map(({ baseUrl, kind, copied, known, conflicts }) => ({
    service: baseUrl,
    kind,
    copied,
    known,
    conflicts,
  }));
  if (ctx.json) {
    ctx.io.out(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  ctx.io.out(renderCopy(report));
  warnConflicts(ctx, report);
}

function renderCopy(report: LedgerCopyReport): string {
  if (report.services.length === 0) return `The order ledger ${report.from} holds nothing to copy.\n`;
  const lines = [`Copied the order ledger ${report.from} to ${report.to}:`];
  const width = Math.max(...report.services.map(({ service, kind }) => `${service}  ${kind}`.length));
  for (const { service, kind, copied, known } of report.services) {
    lines.push(
      `  ${`${service}  ${kind}`.padEnd(width)}  ${formatCount(copied)} copied, ${formatCount(known)} already there`,
    );
  }
  const total = report.services.reduce((sum, service) => sum + service.copied, 0);
  const known = report.services.reduce((sum, service) => sum + service.known, 0);
  lines.push(`${countOf(total, 'key')} copied, ${countOf(known, 'key')} already there.`);
  return `${lines.join('\n')}\n`;
}

/** Keys the target may send again although the source has them created or in doubt. */
function warnConflicts(ctx: Context, report: LedgerCopyReport): void {
  const conflicts = report.services.flatMap((service) => service.conflicts);
  if (conflicts.length === 0) return;
  const named = conflicts.slice(0, CONFLICTS_NAMED).join(', ');
  const more =
    conflicts.length > CONFLICTS_NAMED ? ` and ${formatCount(conflicts.length - CONFLICTS_NAMED)} more` : '';
  ctx.io.err(
    `warning: ${countOf(conflicts.length, 'key')} (${named}${more}) ${conflicts.length === 1 ? 'is' : 'are'} failed or not created in ${report.to} but created or in doubt in ${report.from}; they were left as they are: check them at the service and record what you find with ordercli orders resolve.\n`,
  );
}
