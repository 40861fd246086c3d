/**
 * `orders resolve <input|journal> --created <externalId>[=<id>] … --not-created <externalId> …
 * [--from-events <listen log>]`: records in the journal what the user checked at the service, so
 * that the next run of the same import skips the orders that exist and sends those that do not.
 * Written under the journal's lock (never beside a running import) and synced; an id the journal
 * does not hold refuses the whole command before anything is written.
 */
import { resolve as resolvePath } from 'node:path';
import type { Context } from '../../cli/context.js';
import { UsageError } from '../../core/errors.js';
import { type JournalState, OrderJournal } from '../../import/journal.js';
import { locateJournal } from '../../import/journal-location.js';
import { ambiguousBaseUrl, chooseBaseUrl, journalBaseUrls } from '../../import/journal-summary.js';
import { ledgerPlaceOf, openLedger } from '../../import/ledger/open.js';
import { formatCount } from '../../import/progress.js';
import {
  type PlannedResolution,
  planResolutions,
  type ResolutionRequest,
  readValidatedOrders,
  requestsFromEvents,
  requestsFromFlags,
  type ValidatedOrders,
} from '../../import/resolutions.js';
import { lockWaitFromEnv } from '../../io/file-lock.js';

export interface ResolveOptions {
  target: string;
  created?: string[];
  notCreated?: string[];
  fromEvents?: string;
}

/** The `--json` shape of `orders resolve`. */
export interface ResolveReport {
  journal: string;
  baseUrl: string;
  changed: {
    externalId: string;
    from: string;
    to: 'created' | 'not-created';
    id: string | number | null;
    code: string | null;
    evidence: string;
  }[];
  unchanged: { externalId: string; state: string; note: string }[];
  /** Orders of this base URL whose outcome is still unknown. */
  stillUnknown: number;
  events: { file: string; lines: number; validated: number; skipped: number; matched: number } | null;
}

export async function run(options: ResolveOptions, ctx: Context): Promise<void> {
  const explicit = requestsFromFlags(options.created ?? [], options.notCreated ?? []);
  if (explicit.length === 0 && options.fromEvents === undefined) {
    throw new UsageError(
      'Say what you found at the service: --created <externalId>[=<id>], --not-created <externalId>, or --from-events <listen log>.',
    );
  }
  const location = await locateJournal(options.target, ctx.cwd);
  const baseUrl = await baseUrlOf(location, ctx);
  const validated: ValidatedOrders | undefined =
    options.fromEvents === undefined
      ? undefined
      : await readValidatedOrders(resolvePath(ctx.cwd, options.fromEvents), options.fromEvents);
  const recorded = await recordResolutions(ctx, location, baseUrl, explicit, validated, options);
  const report = buildReport(location.shown, baseUrl, recorded, validated, options.fromEvents);
  if (ctx.json) {
    ctx.io.out(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  if (report.events) {
    const { file, lines, validated: notified, skipped, matched } = report.events;
    ctx.io.err(
      `${file}: ${formatCount(lines)} lines, ${formatCount(notified)} sales_order_validated notifications${skipped > 0 ? `, ${formatCount(skipped)} lines that are not a recorded event (passed over)` : ''}; they name ${formatCount(matched)} of the orders whose outcome was unknown.\n`,
    );
  }
  // Named by its journal, the import's input is not known here.
  const input = location.path === resolvePath(ctx.cwd, options.target) ? undefined : options.target;
  ctx.io.out(renderReport(report, options.target, input));
}

/** The base URL whose orders are resolved; a journal emptied or lost leaves the configured one. */
async function baseUrlOf(location: { path: string; shown: string }, ctx: Context): Promise<string> {
  const baseUrls = await journalBaseUrls(location.path);
  const settings = await ctx.settings();
  // The ledger still knows the orders of a journal emptied or lost, at the configured base URL.
  const baseUrl =
    chooseBaseUrl(baseUrls, settings.baseUrl) ?? (baseUrls.length === 0 ? settings.baseUrl : undefined);
  if (baseUrl !== undefined) return baseUrl;
  if (baseUrls.length === 0)
    throw new UsageError(`The journal ${location.shown} holds no orders yet: nothing to resolve.`);
  throw ambiguousBaseUrl(location.shown, baseUrls, settings.baseUrl);
}

interface Recorded {
  plan: PlannedResolution[];
  /** Orders named by the notifications of --from-events. */
  matched: number;
  stillUnknown: number;
}

/**
 * Plans and records the user's word, in the ledger first (it refuses an order another ordercli
 * is sending right now), then in the journal, under the journal's lock (no import sends meanwhile).
 */
async function recordResolutions(
  ctx: Context,
  location: { path: string; shown: string },
  baseUrl: string,
  explicit: ResolutionRequest[],
  validated: ValidatedOrders | undefined,
  options: ResolveOptions,
): Promise<Recorded> {
  const journalPath = location.path;
  const journal = await OrderJournal.open(journalPath, {
    baseUrl,
    recordRun: false,
    allowOtherBaseUrls: true,
    lockWaitMs: lockWaitFromEnv(ctx.env),
    onLockWait: (message) => ctx.io.err(`${message}\n`),
    signal: ctx.signal,
  });
  const contacts = journal.replay.command === 'refs contacts import';
  const ledger = await openLedger(await ledgerPlaceOf(ctx), {
    baseUrl,
    kind: contacts ? 'contact-references' : 'orders',
    source: { by: 'orders resolve', journal: journalPath },
    signal: ctx.signal,
  }).catch(async (error: unknown) => {
    await journal.close();
    throw error;
  });
  try {
    const states = journal.knownOrders();
    const requests = [...explicit];
    let matched = 0;
    if (validated) {
      const given = new Set(explicit.map((request) => request.externalId));
      const fromEvents = requestsFromEvents(validated, states, options.fromEvents!).filter(
        (request) => !given.has(request.externalId),
      );
      matched = fromEvents.length;
      requests.push(...fromEvents);
    }
    // The ledger decides: what it says of each order named stands over the journal's older word.
    const current = new Map<string, JournalState>(states);
    for (const request of requests) {
      const entry = await ledger.lookup(request.externalId);
      if (entry !== undefined) current.set(request.externalId, entry);
    }
    const plan = planResolutions(requests, current, location.shown, baseUrl);
    for (const { request, change } of plan) {
      if (!change) continue;
      const details: { id?: string | number; code?: string; evidence: string } = {
        evidence: request.evidence,
      };
      if (request.id !== undefined) details.id = request.id;
      if (request.code !== undefined) details.code = request.code;
      await ledger.resolved(request.externalId, request.resolution, details);
      journal.resolved(request.externalId, request.resolution, details);
    }
    await journal.sync();
    let stillUnknown = 0;
    for (const state of states.values())
      if (state.status === 'in-doubt' || state.status === 'claimed') stillUnknown++;
    return { plan, matched, stillUnknown };
  } finally {
    try {
      await ledger.close();
    } finally {
      await journal.close();
    }
  }
}

function buildReport(
  shown: string,
  baseUrl: string,
  { plan, matched, stillUnknown }: Recorded,
  validated: ValidatedOrders | undefined,
  fromEvents: string | undefined,
): ResolveReport {
  return {
    journal: shown,
    baseUrl,
    changed: plan
      .filter((p) => p.change)
      .map(({ request, from }) => ({
        externalId: request.externalId,
        from,
        to: request.resolution,
        id: request.id ?? null,
        code: request.code ?? null,
        evidence: request.evidence,
      })),
    unchanged: plan
      .filter((p) => !p.change)
      .map(({ request, from, note }) => ({ externalId: request.externalId, state: from, note: note ?? '' })),
    stillUnknown,
    events:
      validated && fromEvents !== undefined
        ? {
            file: fromEvents,
            lines: validated.lines,
            validated: validated.validated,
            skipped: validated.skipped,
            matched,
          }
        : null,
  };
}

function renderReport(report: ResolveReport, target: string, input: string | undefined): string {
  const lines: string[] = [];
  if (report.changed.length === 0) {
    lines.push(`Nothing changed in the journal ${report.journal} (${report.baseUrl}).`);
  } else {
    lines.push(`Recorded in the journal ${report.journal} (${report.baseUrl}):`);
    const width = Math.max(...report.changed.map((c) => c.externalId.length));
    for (const change of report.changed) {
      const ids = [
        change.id === null ? '' : `id ${change.id}`,
        change.code === null ? '' : `code ${change.code}`,
      ]
        .filter(Boolean)
        .join(', ');
      const to =
        change.to === 'created'
          ? `created${ids ? ` (${ids})` : ''}: never sent again`
          : 'not created: the next run sends it';
      lines.push(`  ${change.externalId.padEnd(width)}  ${change.from} → ${to}   [${change.evidence}]`);
    }
  }
  if (report.unchanged.length > 0) {
    lines.push('Unchanged:');
    const width = Math.max(...report.unchanged.map((c) => c.externalId.length));
    for (const same of report.unchanged) lines.push(`  ${same.externalId.padEnd(width)}  ${same.note}`);
  }
  if (report.stillUnknown > 0) {
    lines.push(
      `${report.stillUnknown === 1 ? '1 order still has' : `${formatCount(report.stillUnknown)} orders still have`} an unknown outcome: ordercli orders journal ${target} lists ${report.stillUnknown === 1 ? 'it' : 'them'}.`,
    );
  }
  if (report.changed.length > 0) {
    const rerun =
      input === undefined
        ? 'run the same import again'
        : `run the same import again (ordercli orders import ${input} …)`;
    lines.push(
      `Next: ${rerun}: it skips the orders recorded as created and sends those recorded as not created.`,
    );
  }
  return `${lines.join('\n')}\n`;
}
