/**
 * `ledger forget --service <url>`: drops every record of a service (orders and contact
 * references) from the order ledger — a test service, a sandbox — after a confirmation on a
 * terminal. A service with keys in doubt or being sent is refused (exit 2) unless `--force`:
 * forgetting them is how an order gets created twice.
 */
import type { Context } from '../../command-support/context.js';
import { CancelledError, UsageError } from '../../core/errors.js';
import { countOf } from '../../io/numbers.js';
import { shellWord } from '../../io/quote.js';
import { forgetService, type LedgerPlace, ledgerPlaceOf } from '../../ledger/open.js';
import type { LedgerForgetFlags } from './index.js';
import { listStatus } from './list.js';
import { ledgerWhere, readService, serviceFlag, serviceOf, servicesInScope } from './scope.js';

/** What the ledger holds of the service, before anything is dropped. */
interface Held {
  /** The service as the ledger names it (another name of it may have been given). */
  service: string;
  keys: number;
  unsettled: number;
}

export async function run(flags: LedgerForgetFlags, ctx: Context): Promise<void> {
  const place = await ledgerPlaceOf(ctx);
  const { location } = ledgerWhere(place);
  const held = await heldOf(place, serviceFlag(flags.service), ctx.signal);
  if (held.keys === 0) {
    ctx.io.err(`The order ledger ${location} holds nothing of ${held.service}: nothing to forget.\n`);
    if (ctx.json) ctx.io.out(`${JSON.stringify({ service: held.service, location, dropped: 0 })}\n`);
    return;
  }
  if (held.unsettled > 0 && !flags.force) {
    const error = new UsageError(
      `The order ledger ${location} holds ${countOf(held.unsettled, 'key')} of ${held.service} in doubt or being sent: forgetting them could create them twice, so nothing was dropped.`,
    );
    error.hint = `See them with ordercli ledger list --service ${shellWord(held.service)} --status in-doubt,claimed and settle them with ordercli orders resolve; or pass --force to forget them anyway.`;
    throw error;
  }
  await confirm(ctx, held, location);
  const dropped = await forgetService(place, held.service);
  if (ctx.json) {
    ctx.io.out(`${JSON.stringify({ service: held.service, location, dropped })}\n`);
    return;
  }
  ctx.io.out(`Forgot ${countOf(dropped, 'key')} of ${held.service} in the order ledger ${location}.\n`);
}

/** Counts the keys of the service, every kind, and those in doubt or claimed. */
async function heldOf(place: LedgerPlace, service: string, signal: AbortSignal): Promise<Held> {
  const held: Held = { service, keys: 0, unsettled: 0 };
  for (const scope of await servicesInScope(place, service, undefined)) {
    await readService(place, scope, signal, async (store) => {
      const entries = await store.list();
      if (entries.length > 0 && scope.kind === 'orders') held.service = serviceOf(store);
      held.keys += entries.length;
      for (const { entry } of entries) {
        const status = listStatus(entry);
        if (status === 'in-doubt' || status === 'claimed') held.unsettled++;
      }
    });
  }
  return held;
}

/** Asks on a terminal (not under --yes, CI, or without one); declining is exit 130, nothing dropped. */
async function confirm(ctx: Context, held: Held, location: string): Promise<void> {
  if (!ctx.io.canPrompt()) return;
  const { createPrompter, PromptEscape } = await import('../../io/prompter.js');
  const forget = await createPrompter(ctx.io, ctx.signal)
    .select<boolean>(
      `Forget ${countOf(held.keys, 'key')} of ${held.service} in ${location}? Orders it created could then be sent again.`,
      [
        { value: false, name: 'No, keep them' },
        { value: true, name: `Yes, forget ${held.service}` },
      ],
    )
    .catch((error: unknown) => {
      if (error instanceof PromptEscape) return false;
      throw error;
    });
  if (!forget) throw new CancelledError('Nothing was forgotten.');
}
