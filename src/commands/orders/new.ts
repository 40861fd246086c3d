/**
 * `orders new`: a guided order on a terminal (src/orders/guided-order.ts asks the questions),
 * then saved to a new file, sent through the same path as `orders create` (its ledger check and
 * exit codes), or both. Escape goes back a step; Ctrl-C, or Escape at the first question, leaves
 * with nothing sent or saved (exit 130).
 */
import { writeFile } from 'node:fs/promises';
import type { ApiClient } from '../../api/client.js';
import { fetchList, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { readRecentAddresses, rememberAddresses } from '../../config/recent-addresses.js';
import { CancelledError, UsageError } from '../../core/errors.js';
import type { AwaitRequest } from '../../import/run-import.js';
import { describeEntry } from '../../import/send/describe-entry.js';
import { createdOrder, createdSummary, sendOrder } from '../../import/send/send-order.js';
import { createPrompter, PromptEscape, requirePrompts } from '../../io/prompter.js';
import { writeAnswerJson } from '../../io/service-answer.js';
import { type LedgerPlace, ledgerPlaceOf, openLedger } from '../../ledger/open.js';
import { runGuidedOrder } from '../../orders/guided-order.js';
import { awaitRequest, OneOrderWait } from '../support/await.js';
import type { AwaitFlags } from '../support/await-options.js';

const NOTHING_DONE = 'no order was sent or saved';

export async function run(ctx: Context, flags: AwaitFlags & { force?: boolean } = {}): Promise<void> {
  const { io } = ctx;
  requirePrompts(
    io,
    'orders new',
    `Write the order as JSON and send it with ordercli orders create --file <order.json> instead.`,
  );
  const settings = await ctx.settings();
  const api = await ctx.api();
  // --await's flags are checked before the first question: a wrong one is exit 2 at once.
  const awaiting = await awaitRequest(flags, ctx);
  const place = await ledgerPlaceOf(ctx);
  const ledger = await openLedger(place, {
    baseUrl: api.baseUrl,
    kind: 'orders',
    source: { by: 'orders new' },
    readOnly: true,
    signal: ctx.signal,
  });
  const prompter = createPrompter(io, ctx.signal);
  let guided: Awaited<ReturnType<typeof runGuidedOrder>>;
  try {
    guided = await runGuidedOrder({
      io,
      prompter,
      contactReferences: async () => (await fetchList(api, PATHS.contactReferences, ctx.signal)).records,
      packagingReferences: async () => (await fetchList(api, PATHS.packagingReferences, ctx.signal)).records,
      recentAddresses: await readRecentAddresses(ctx.env, settings.profileName),
      knownExternalId: async (externalId) => {
        const known = await ledger.lookup(externalId);
        return known && known.status !== 'not-created' ? describeEntry(known) : undefined;
      },
      baseUrl: api.baseUrl,
      cwd: ctx.cwd,
      today: new Date(),
    });
  } catch (error) {
    await ledger.close();
    if (error instanceof PromptEscape) throw new CancelledError(`Left: ${NOTHING_DONE}.`);
    if (error instanceof CancelledError) throw new CancelledError(`Interrupted: ${NOTHING_DONE}.`);
    throw error;
  }

  await ledger.close();
  await rememberAddresses(ctx.env, settings.profileName, guided.addresses);
  if (guided.saveTo !== undefined) {
    try {
      await writeFile(guided.saveTo, `${JSON.stringify(guided.order, null, 2)}\n`, { flag: 'wx' });
    } catch (error) {
      throw new UsageError(
        `Cannot save the order to ${guided.saveTo}: ${(error as Error).message}; nothing was sent.`,
      );
    }
    io.err(`Saved the order to ${guided.saveTo}.\n`);
  }
  if (!guided.send) {
    io.err(`Nothing was sent. Send it later with: ordercli orders create --file ${guided.saveTo}\n`);
    return;
  }
  await sendGuided(ctx, { api, place, awaiting, allowNewLedger: flags.force }, guided);
}

/** Sends the order built (`orders create`'s path), and with --await waits for its validation. */
async function sendGuided(
  ctx: Context,
  {
    api,
    place,
    awaiting,
    allowNewLedger,
  }: {
    api: ApiClient;
    place: LedgerPlace;
    awaiting: AwaitRequest | undefined;
    allowNewLedger?: boolean | undefined;
  },
  guided: { order: Record<string, unknown>; saveTo?: string | undefined },
): Promise<void> {
  const { io } = ctx;
  const source = {
    by: 'orders new',
    ...(guided.saveTo !== undefined ? { input: guided.saveTo } : {}),
  } as const;
  const wait = awaiting && (await OneOrderWait.start(awaiting, ctx, source));
  let response: Awaited<ReturnType<typeof sendOrder>> | undefined;
  try {
    response = await sendOrder(guided.order, {
      api,
      ledger: place,
      source,
      signal: ctx.signal,
      allowNewLedger,
      warn: (text) => io.err(text),
      forceAdvice:
        guided.saveTo !== undefined
          ? `send ${guided.saveTo} with ordercli orders create --file ${guided.saveTo} --force`
          : 'save the order with ordercli orders new and send it with ordercli orders create --file <file> --force',
    });
    if (ctx.json) writeAnswerJson(io, response.body, { showWith: 'ordercli get orders <id> --show-secrets' });
    else io.out(`${createdSummary(response.status, response.body)}\n`);
  } finally {
    await wait?.end(response && createdOrder(guided.order, response.body));
  }
}
