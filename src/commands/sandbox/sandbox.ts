/** `sandbox`: the local service, until Ctrl-C. */
import type { Context } from '../../command-support/context.js';
import { parseDuration } from '../../config/duration.js';
import { UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { isLoopbackHost } from '../../core/url.js';
import { invocation } from '../../io/invocation.js';
import { wrapForStderr, wrapForStdout } from '../../io/wrap.js';
import { MAX_DELIVERY_RETRIES } from '../../sandbox/delivery.js';
import type { Sandbox, SandboxOptions } from '../../sandbox/server.js';
import type { SandboxFlags } from './index.js';

function number(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`${flag} must be a number from ${min} to ${max}, not ${JSON.stringify(value)}.`);
  }
  return n;
}

/** A duration option; a bare number is milliseconds, as it always was. */
function duration(value: string | undefined, flag: string, maxMs: number): number | undefined {
  return value === undefined ? undefined : parseDuration(value, { name: flag, bare: 'ms', maxMs });
}

/** Turns the flags into sandbox options, rejecting values out of range. */
export function sandboxOptions(flags: SandboxFlags, env: NodeJS.ProcessEnv): SandboxOptions {
  const port = number(flags.port, '--port', 0, 65535);
  if (port !== undefined && !Number.isInteger(port)) throw new UsageError('--port must be a whole number.');
  return {
    port,
    host: flags.host,
    dataDir: flags.data,
    latencyMs: duration(flags.latency, '--latency', 600_000),
    failRate: number(flags.failRate, '--fail-rate', 0, 1),
    throttleRate: number(flags.throttleRate, '--throttle-rate', 0, 1),
    resetRate: number(flags.resetRate, '--reset-rate', 0, 1),
    webhookKey: flags.webhookKey ?? (env.ORDERCLI_WEBHOOK_KEY || undefined),
    extraPackagingReferences: number(flags.packagingReferences, '--packaging-references', 0, 10_000_000),
    validationDelayMs: duration(flags.validationDelay, '--validation-delay', 3_600_000),
    validationFailRate: number(flags.validationFailRate, '--validation-fail-rate', 0, 1),
    quiet: Boolean(flags.quiet),
    deliveryRetries: wholeNumber(flags.deliveryRetries, '--delivery-retries', 0, MAX_DELIVERY_RETRIES),
  };
}

function wholeNumber(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  const n = number(value, flag, min, max);
  if (n !== undefined && !Number.isInteger(n)) throw new UsageError(`${flag} must be a whole number.`);
  return n;
}

/** Where the webhook key comes from, for the banner and the ready file (never the key itself). */
type KeySource = 'flag' | 'env' | 'generated';

function keySourceOf(flags: SandboxFlags, options: SandboxOptions): KeySource {
  if (flags.webhookKey !== undefined) return 'flag';
  return options.webhookKey !== undefined ? 'env' : 'generated';
}

/**
 * What `--ready-file` holds besides the pid: enough to connect, never a secret (the tokens by their
 * names, the key by where it comes from).
 */
function readyFileContent(sandbox: Pick<Sandbox, 'url' | 'tokens'>, keySource: KeySource) {
  return {
    url: sandbox.url,
    tokens: Object.keys(sandbox.tokens),
    webhookKey: { source: keySource },
  };
}

export async function run(flags: SandboxFlags, ctx: Context): Promise<void> {
  const options = sandboxOptions(flags, ctx.env);
  // Checked, and a file left by a killed run removed, before listening: until the new file is
  // written, the path never says "ready".
  const { ReadyFile } = await import('../../io/ready-file.js');
  const ready =
    flags.readyFile === undefined
      ? undefined
      : await ReadyFile.prepare(flags.readyFile, ctx.cwd, 'the sandbox did not start');
  const sandbox = await start(options, ctx);
  ctx.onClose(() => sandbox.close());
  const keySource = keySourceOf(flags, options);
  printBanner(sandbox, options, keySource, ctx);
  // Last, once the server listens (startSandbox resolved once it did) and the banner is out: a
  // client told by the file connects at once.
  if (ready !== undefined) {
    // Registered after close(), so it runs first: the file goes before the port closes.
    ctx.onClose(() => ready.remove());
    await ready.write(readyFileContent(sandbox, keySource));
  }
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  ctx.io.err('Stopping the sandbox.\n');
  // Ctrl-C is the only way it ends: 130 like every interrupted command, which is also what the
  // shell sees through `npx ordercli` (npm runs it under sh, which dash ends with the same SIGINT).
  ctx.exitCode = ExitCode.Interrupted;
}

/** Starts the sandbox of the options, its console on stderr; a port it cannot take is bad usage. */
async function start(options: SandboxOptions, ctx: Context): Promise<Sandbox> {
  const { startSandbox } = await import('../../sandbox/server.js');
  const { lockWaitFromEnv } = await import('../../io/file-lock.js');
  const { io } = ctx;
  return startSandbox({
    ...options,
    lockWaitMs: lockWaitFromEnv(ctx.env),
    onLockWait: (message) => io.err(`${message}\n`),
    logger: (line) => io.err(`${line}\n`),
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE') {
      throw new UsageError(
        `Port ${options.port} on ${options.host} is already in use: stop what runs there, or pick another with --port (0 picks a free one).`,
      );
    }
    if (error.code === 'EADDRNOTAVAIL' || error.code === 'EACCES') {
      throw new UsageError(
        `Cannot listen on ${options.host}:${options.port} (${error.code}): choose another --host or --port.`,
      );
    }
    throw error;
  });
}

/** The banner on stdout (or its `--json` line), and the warning of a non-loopback host. */
function printBanner(sandbox: Sandbox, options: SandboxOptions, keySource: KeySource, ctx: Context): void {
  const { io } = ctx;
  if (!isLoopbackHost(options.host ?? '127.0.0.1')) {
    io.err(
      wrapForStderr(
        io,
        `warning: the sandbox listens on ${options.host}, reachable from other machines; it is a development tool.\n`,
      ),
    );
  }
  // The commands to try as they can be typed where this one was.
  const cli = invocation(ctx.env);
  // A random key changes at every start, so a receiver configured with it stops matching.
  const keyOrigin = {
    flag: '(from --webhook-key)',
    env: '(from ORDERCLI_WEBHOOK_KEY)',
    generated: '(random, new at each start: --webhook-key <key> keeps one)',
  }[keySource];
  const banner = [
    `Sandbox listening on ${sandbox.url}`,
    `  base URL        ${sandbox.url}`,
    `  full token      ${sandbox.tokens.full}   (CRM and catalog access)`,
    `  partner token   ${sandbox.tokens.partner}   (reference lists only)`,
    `  webhook key     ${sandbox.webhookKey}   ${keyOrigin}`,
    '',
    'Try:',
  ];
  const commands = [
    `  ${cli} --base-url ${sandbox.url} --token ${sandbox.tokens.partner} refs packagings list`,
    `  export ORDERCLI_BASE_URL=${sandbox.url} ORDERCLI_TOKEN=${sandbox.tokens.full}`,
  ];
  if (ctx.json) {
    io.out(
      `${JSON.stringify({ url: sandbox.url, tokens: sandbox.tokens, webhookKey: sandbox.webhookKey })}\n`,
    );
  } else {
    // On a narrow terminal the commands wrap with a trailing \ so that they still run when copied.
    io.out(
      wrapForStdout(io, `${banner.join('\n')}\n`) +
        wrapForStdout(io, `${commands.join('\n')}\n`, { continuation: ' \\' }) +
        '\nPress Ctrl-C to stop.\n',
    );
  }
}
