/**
 * `orders resolve <input|journal> --created <externalId>[=<id>] … --not-created <externalId> …
 * [--from-events <listen log>]`: records in the order ledger what the user checked at the
 * service, so that the next run of the same import skips the orders that exist and sends those
 * that do not — from any runner that shares the ledger. An id the ledger does not hold refuses
 * the whole command before anything is written; an order another ordercli is sending right now is
 * refused by the ledger.
 *
 * Without `<input|journal>`, `--created` and `--not-created` are recorded in the order ledger of
 * the configured service alone: what `orders create` and `orders new` sent.
 */
import { resolve as resolvePath } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { identitiesOf } from '../../import/input-identity.js';
import {
  historyPlace,
  LEDGER_PLACE,
  type PlannedResolution,
  planResolutions,
  type ResolutionRequest,
  readValidatedOrders,
  requestsFromEvents,
  requestsFromFlags,
  type ValidatedOrders,
} from '../../import/send/resolutions.js';
import { formatCount } from '../../io/numbers.js';
import { ledgerPlaceOf, openLedger } from '../../ledger/open.js';
import type { LedgerEntry } from '../../ledger/record.js';
import type { LedgerStore } from '../../ledger/store.js';
import { readHistory, type ServiceHistory } from '../../orders/history.js';
import type { ResolveFlags } from './index.js';

/** `orders resolve`'s flags and its argument. */
export type ResolveOptions = ResolveFlags & {
  /** The input or journal; absent: the order ledger of the configured service alone. */
  target?: string;
};

/** The `--json` shape of `orders resolve`. */
export interface ResolveReport {
  /** Null when only the order ledger was written (no `<input|journal>`). */
  journal: string | null;
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
  /** Orders of this base URL whose outcome is still unknown (in the input's history; null without one). */
  stillUnknown: number | null;
  events: { file: string; lines: number; validated: number; skipped: number; matched: number } | null;
}

export async function run(options: ResolveOptions, ctx: Context): Promise<void> {
  const explicit = requestsFromFlags(options.created ?? [], options.notCreated ?? []);
  if (explicit.length === 0 && options.fromEvents === undefined) {
    throw new UsageError(
      'Say what you found at the service: --created <externalId>[=<id>], --not-created <externalId>, or --from-events <listen log>.',
    );
  }
  if (options.target === undefined) {
    await resolveInLedger(explicit, options, ctx);
    return;
  }
  const target = options.target;
  const validated: ValidatedOrders | undefined =
    options.fromEvents === undefined
      ? undefined
      : await readValidatedOrders(resolvePath(ctx.cwd, options.fromEvents), options.fromEvents);
  const history = await readHistory(
    await ledgerPlaceOf(ctx),
    identitiesOf(target, ctx.cwd),
    (await ctx.settings()).baseUrl,
    ctx.signal,
    target,
  );
  if (history.main === undefined) {
    throw new UsageError(
      `The order ledger holds no order sent from ${target}, so nothing was recorded: check the input's name (as the import named it: orders import <input> or --journal <name>), --ledger and --base-url.`,
    );
  }
  const recorded = await recordResolutions(ctx, target, history.main, explicit, validated, options);
  const report = buildReport(target, history.main.baseUrl, recorded, validated, options.fromEvents);
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
  // Named by its --journal name, the import's input is not the target: the hint names no file then.
  const names = new Set(identitiesOf(target, ctx.cwd));
  const isInput = history.main.entries.some(({ entry }) => names.has(entry.input ?? ''));
  ctx.io.out(renderReport(report, target, isInput ? target : undefined));
}

/**
 * `orders resolve --created … --not-created …` without an input: the user's word recorded in the
 * order ledger of the configured service, where `orders create` and `orders new` record what they
 * sent; the next `orders create` of the same order then sends it (not created) or refuses it.
 */
async function resolveInLedger(
  requests: ResolutionRequest[],
  options: ResolveOptions,
  ctx: Context,
): Promise<void> {
  if (options.fromEvents !== undefined) {
    throw new UsageError(
      '--from-events settles the orders of an import: name its input or journal (ordercli orders resolve <input> --from-events <file>).',
    );
  }
  const { baseUrl } = await ctx.settings();
  if (baseUrl === undefined) {
    throw new UsageError(
      'Without an input or a journal, orders resolve records in the order ledger of the service: give its --base-url (or ORDERCLI_BASE_URL, or a profile).',
    );
  }
  const ledger = await openLedger(await ledgerPlaceOf(ctx), {
    baseUrl,
    kind: 'orders',
    source: { by: 'orders resolve' },
    signal: ctx.signal,
    // Only keys this ledger holds are resolved: a ledger new to the service refuses them all
    // anyway, so the move check (and its --force, which resolve has not) has nothing to add.
    allowNewLedger: true,
  });
  let plan: PlannedResolution[];
  try {
    const states = new Map<string, LedgerEntry>();
    for (const request of requests) {
      const entry = await ledger.lookup(request.externalId);
      if (entry !== undefined) states.set(request.externalId, entry);
    }
    plan = planResolutions(requests, states, LEDGER_PLACE, baseUrl);
    await applyPlan(ledger, plan);
  } finally {
    await ledger.close();
  }
  const report = buildReport(null, baseUrl, { plan, matched: 0, stillUnknown: null }, undefined, undefined);
  ctx.io.out(ctx.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report, undefined, undefined));
}

interface Recorded {
  plan: PlannedResolution[];
  /** Orders named by the notifications of --from-events. */
  matched: number;
  stillUnknown: number | null;
}

/**
 * Plans and records the user's word in the ledger (it refuses an order another ordercli is sending
 * right now); the whole plan is checked before anything is written.
 */
async function recordResolutions(
  ctx: Context,
  target: string,
  history: ServiceHistory,
  explicit: ResolutionRequest[],
  validated: ValidatedOrders | undefined,
  options: ResolveOptions,
): Promise<Recorded> {
  const states = new Map(history.entries.map(({ externalId, entry }) => [externalId, entry]));
  const ledger = await openLedger(await ledgerPlaceOf(ctx), {
    baseUrl: history.baseUrl,
    kind: history.kind,
    source: { by: 'orders resolve' },
    signal: ctx.signal,
    // Only keys this ledger holds are resolved: a ledger new to the service refuses them all
    // anyway, so the move check (and its --force, which resolve has not) has nothing to add.
    allowNewLedger: true,
  });
  try {
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
    // An order of the input's history, or any other the ledger holds for this service.
    const current = new Map(states);
    for (const request of requests) {
      if (current.has(request.externalId)) continue;
      const entry = await ledger.lookup(request.externalId);
      if (entry !== undefined) current.set(request.externalId, entry);
    }
    const plan = planResolutions(requests, current, historyPlace(target), history.baseUrl);
    await applyPlan(ledger, plan);
    const settled = new Set(plan.filter((p) => p.change).map((p) => p.request.externalId));
    let stillUnknown = 0;
    for (const [externalId, state] of states)
      if (state.status === 'in-doubt' && !settled.has(externalId)) stillUnknown++;
    return { plan, matched, stillUnknown };
  } finally {
    await ledger.close();
  }
}

/** Writes each change of the plan to the ledger. */
async function applyPlan(ledger: LedgerStore, plan: readonly PlannedResolution[]): Promise<void> {
  for (const { request, change } of plan) {
    if (!change) continue;
    const details: { id?: string | number; code?: string; evidence: string } = {
      evidence: request.evidence,
    };
    if (request.id !== undefined) details.id = request.id;
    if (request.code !== undefined) details.code = request.code;
    await ledger.resolved(request.externalId, request.resolution, details);
  }
}

function buildReport(
  shown: string | null,
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

/** What `orders resolve` prints; `target` is undefined when only the order ledger was written. */
function renderReport(report: ResolveReport, target: string | undefined, input: string | undefined): string {
  const where =
    report.journal === null
      ? `the order ledger of ${report.baseUrl}`
      : `the order ledger of ${report.baseUrl} (the history of ${report.journal})`;
  const lines: string[] = [];
  if (report.changed.length === 0) {
    lines.push(`Nothing changed in ${where}.`);
  } else {
    lines.push(`Recorded in ${where}:`);
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
          : `not created: the next ${target === undefined ? 'orders create' : 'run'} sends it`;
      lines.push(`  ${change.externalId.padEnd(width)}  ${change.from} → ${to}   [${change.evidence}]`);
    }
  }
  if (report.unchanged.length > 0) {
    lines.push('Unchanged:');
    const width = Math.max(...report.unchanged.map((c) => c.externalId.length));
    for (const same of report.unchanged) lines.push(`  ${same.externalId.padEnd(width)}  ${same.note}`);
  }
  if (report.stillUnknown !== null && report.stillUnknown > 0) {
    lines.push(
      `${report.stillUnknown === 1 ? '1 order still has' : `${formatCount(report.stillUnknown)} orders still have`} an unknown outcome: ordercli orders journal ${target} lists ${report.stillUnknown === 1 ? 'it' : 'them'}.`,
    );
  }
  if (report.changed.length > 0) {
    lines.push(`Next: ${nextStep(target, input)}`);
  }
  return `${lines.join('\n')}\n`;
}

function nextStep(target: string | undefined, input: string | undefined): string {
  if (target === undefined) {
    return 'run the same ordercli orders create again: it refuses an order recorded as created and sends one recorded as not created.';
  }
  const rerun =
    input === undefined
      ? 'run the same import again'
      : `run the same import again (ordercli orders import ${input} …)`;
  return `${rerun}: it skips the orders recorded as created and sends those recorded as not created.`;
}
