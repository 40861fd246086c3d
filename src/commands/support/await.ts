/**
 * `--await validated` of the commands that create orders (`orders import`, `orders create`,
 * `orders new`): its flags, checked before anything is sent, and the request the import pipeline
 * (or the one-order wait below) runs with: how long each order waits, and how notifications arrive
 * (src/import/await-receiver.ts).
 */
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { parseDuration } from '../../config/duration.js';
import { UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { isLoopbackHost } from '../../core/url.js';
import { chooseWebhookKey } from '../../core/webhook-key.js';
import { ValidationWaiter } from '../../import/await-validation.js';
import { AwaitProgress, type ProgressOptions } from '../../import/report/progress.js';
import type { ImportCounts } from '../../import/report/report.js';
import type { AwaitRequest } from '../../import/run-import.js';
import type { IOStreams } from '../../io/streams.js';
import { ledgerPlaceOf, openLedger } from '../../ledger/open.js';
import type { RecordSource } from '../../ledger/record.js';
import { TUNNEL_KINDS, type TunnelKind } from '../../webhooks/tunnel.js';
import { type AwaitFlags, DEFAULT_TIMEOUT } from './await-options.js';

/**
 * The `--await` request of the flags, or undefined without `--await`; exit 2 before anything is sent
 * for flags that cannot work (the others without --await, a remote service with no way back,
 * `--await-from` naming the orders' own `input`).
 */
export async function awaitRequest(
  flags: AwaitFlags,
  ctx: Context,
  input?: string,
): Promise<AwaitRequest | undefined> {
  const given = ['awaitTimeout', 'awaitFrom', 'tunnel', 'publicUrl', 'awaitPort'] as const;
  if (flags.await === undefined) {
    const stray = given.find((name) => flags[name] !== undefined);
    if (stray !== undefined)
      throw new UsageError(
        `${flagName(stray)} goes with --await validated; add it, or drop ${flagName(stray)}.`,
      );
    return undefined;
  }
  const timeoutMs = parseDuration(flags.awaitTimeout ?? DEFAULT_TIMEOUT, {
    name: '--await-timeout',
    minMs: 100,
    maxMs: 7 * 24 * 3_600_000,
  });
  const tunnel = tunnelOf(flags);
  const publicUrl = flags.publicUrl === undefined ? undefined : publicUrlOf(flags.publicUrl);
  const port = portOf(flags.awaitPort);
  if (publicUrl !== undefined && port === undefined) {
    throw new UsageError(
      `--public-url ${publicUrl.href} reaches this machine at a port of yours: add --await-port <the port it forwards to>.`,
    );
  }
  const api = await ctx.api();
  const { checkReachable, startReceiving } = await import('../../import/await-receiver.js');
  const from = flags.awaitFrom;
  if (from !== undefined && input !== undefined && input !== '-') checkNotInput(from, input, ctx.cwd);
  checkReachable(api.baseUrl, { from, tunnel, publicUrl });
  const settings = await ctx.settings();
  const key = chooseWebhookKey(undefined, ctx.env, settings);
  if (key.key !== undefined) ctx.io.redactor.addSecret(key.key);
  return {
    timeoutMs,
    receive: (waiter) =>
      startReceiving(
        {
          api,
          key,
          apiToken: settings.token,
          redactor: ctx.io.redactor,
          signal: ctx.signal,
          env: ctx.env,
          from: from === undefined ? undefined : resolve(ctx.cwd, from),
          tunnel,
          publicUrl,
          port,
          warn: (text) => ctx.io.err(text),
        },
        waiter,
      ),
  };
}

/** `--await-from` follows a `listen --log` file: the orders' input there is a slip, waited out to exit 5. */
function checkNotInput(from: string, input: string, cwd: string): void {
  const real = (path: string) => {
    const absolute = resolve(cwd, path);
    return existsSync(absolute) ? realpathSync(absolute) : absolute;
  };
  if (real(from) !== real(input)) return;
  throw new UsageError(
    `--await-from ${from} is the input of the orders, not a log of notifications; nothing was sent.`,
    ['Name the file an ordercli listen --log <file> writes.'],
  );
}

function flagName(name: keyof AwaitFlags): string {
  return `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

function tunnelOf(flags: AwaitFlags): TunnelKind | undefined {
  if (flags.tunnel === undefined) return undefined;
  const kind = flags.tunnel.toLowerCase();
  if (!(TUNNEL_KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--tunnel takes cloudflared or ngrok, not ${JSON.stringify(flags.tunnel)}.`);
  if (flags.publicUrl !== undefined)
    throw new UsageError('--tunnel gives the public address itself: leave --public-url out.');
  return kind as TunnelKind;
}

function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 1 || port > 65_535)
    throw new UsageError(`--await-port takes a port from 1 to 65535, not ${JSON.stringify(value)}.`);
  return port;
}

function publicUrlOf(value: string): URL {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || !/^https?:$/.test(url.protocol))
    throw new UsageError(
      `--public-url takes an http(s) address, such as https://orders-hook.example.com/, not ${JSON.stringify(value)}.`,
    );
  // The key travels with every notification: not in clear across the internet.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname))
    throw new UsageError(
      `--public-url ${url.href} is plain http:// on another host: the service would send the webhook key in clear. Use the tunnel's https:// address.`,
    );
  return url;
}

/**
 * One order's wait (`orders create`, `orders new`): started before it is sent, so that a fast
 * validation is not missed; `created` registers the answer, `end` waits and says the outcome (exit
 * 5 when not validated in time), recording a validation in the ledger.
 */
export class OneOrderWait {
  private constructor(
    private readonly ctx: Context,
    private readonly waiter: ValidationWaiter,
    private readonly receiving: { close(): Promise<string | undefined> },
    private readonly source: RecordSource,
  ) {}

  static async start(request: AwaitRequest, ctx: Context, source: RecordSource): Promise<OneOrderWait> {
    const waiter = new ValidationWaiter(request.timeoutMs, () => undefined);
    const receiving = await request.receive(waiter);
    return new OneOrderWait(ctx, waiter, receiving, source);
  }

  /** The create answer's order; undefined when it was not created (nothing to wait for). */
  async end(
    created: { externalId?: string; code?: string; id?: string | number } | undefined,
  ): Promise<void> {
    const { ctx, waiter } = this;
    const key = created && (created.externalId ?? `(no externalId ${created.code ?? created.id})`);
    try {
      if (created && key) {
        waiter.expect({ key, code: created.code, id: created.id, since: performance.now() });
        ctx.io.err('Waiting for its validation (sales_order_validated)…\n');
      }
      await waiter.wait(ctx.signal);
    } finally {
      const note = await this.receiving.close().catch(() => undefined);
      if (note) ctx.io.err(`note: ${note}\n`);
    }
    if (!created || !key) return;
    const outcome = waiter.outcome(key);
    if (outcome?.validated) {
      ctx.io.err(`Validated after ${(outcome.afterMs / 1000).toFixed(1)} s (${outcome.validatedAt}).\n`);
      if (created.externalId !== undefined) await this.record(created.externalId, outcome.validatedAt);
      return;
    }
    if (outcome?.reason === 'interrupted') {
      ctx.exitCode = ExitCode.Interrupted;
      ctx.io.err('Interrupted while waiting for its validation: it was created, not yet validated.\n');
      return;
    }
    ctx.io.err('error: the order was created, but not validated within the --await-timeout.\n');
    ctx.exitCode = ExitCode.Unconfirmed;
  }

  private async record(externalId: string, validatedAt: string): Promise<void> {
    const api = await this.ctx.api();
    const ledger = await openLedger(await ledgerPlaceOf(this.ctx), {
      baseUrl: api.baseUrl,
      kind: 'orders',
      source: this.source,
      signal: this.ctx.signal,
      allowNewLedger: true,
    });
    try {
      ledger.validated(externalId, validatedAt);
      await ledger.sync();
    } finally {
      await ledger.close();
    }
  }
}

/** The progress of the wait for validations, once sending ended; returns what stops it. */
export function awaitProgress(
  io: IOStreams,
  waiter: ValidationWaiter,
  counts: Readonly<ImportCounts>,
  options: ProgressOptions,
): () => void {
  const progress = new AwaitProgress(io, counts, waiter, options);
  progress.start();
  return () => progress.stop();
}
