/**
 * `demo`: the first run. It starts a sandbox in this process and then runs the real commands
 * (listen, webhooks subscribe, refs, orders import) against it, printing each one as the user
 * would type it, so that the same lines work against a real instance afterwards.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import stringWidth from 'string-width';
import type { Context } from '../../cli/context.js';
import { CliError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { sleep } from '../../core/retry.js';
import { invocation } from '../../io/invocation.js';
import { prefixedIO } from '../../io/memory.js';
import type { IOStreams } from '../../io/streams.js';
import { wrapForStdout } from '../../io/wrap.js';
import { SALES_ORDER_VALIDATED } from '../../schemas/webhook.js';
import type { DemoFlags } from './index.js';

/** How long the demo waits for the notifications of the imported orders. */
const NOTIFICATION_WAIT_MS = 15_000;

interface Step {
  ctx: Context;
  io: IOStreams;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  cwd: string;
  color: boolean;
  /** `ordercli` or `npx ordercli`, as the user can type it where the demo was started. */
  cli: string;
}

export async function run(flags: DemoFlags, ctx: Context): Promise<void> {
  const { io } = ctx;
  const file = resolve(ctx.cwd, flags.file ?? join(packageRoot(), 'fixtures/orders/orders.csv'));
  if (!existsSync(file)) throw new UsageError(`Cannot find the orders to import: ${file} does not exist.`);
  const paint = await painter(io);
  const workDir = await mkdtemp(join(tmpdir(), 'ordercli-demo-'));
  ctx.onClose(() => rm(workDir, { recursive: true, force: true }));

  const { startSandbox } = await import('../../sandbox/server.js');
  const webhookKey = `whk_demo_${randomBytes(16).toString('hex')}`;
  const sandbox = await startSandbox({ port: 0, quiet: true, webhookKey, validationDelayMs: 300 });
  ctx.onClose(() => sandbox.close());

  const env: NodeJS.ProcessEnv = {
    ...ctx.env,
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.partner,
    ORDERCLI_WEBHOOK_KEY: webhookKey,
    // The demo never reads nor writes the user's profiles.
    ORDERCLI_CONFIG_DIR: workDir,
  };
  delete env.ORDERCLI_PROFILE;
  delete env.ORDERCLI_AUTH_HEADER;
  // The steps' output is wrapped at word boundaries on a terminal, as the demo's own prose is.
  const step: Step = {
    ctx,
    io: prefixedIO(io, '', undefined, { keepStderr: true }),
    env,
    signal: ctx.signal,
    cwd: ctx.cwd,
    color: io.colorEnabled,
    cli: invocation(ctx.env),
  };
  const shown = (path: string) => {
    const rel = relative(ctx.cwd, path);
    return rel.startsWith('..') || rel === '' ? path : rel;
  };
  const heading = (n: number, title: string) => io.out(`\n${paint.bold(`${n}. ${title}`)}\n`);
  /** Prose, wrapped at word boundaries on a terminal. */
  const say = (text: string) => io.out(wrapForStdout(io, text));

  say(
    `${paint.bold('ordercli demo')} — a first run on a sandbox embedded in this process; nothing leaves this machine.\n`,
  );

  heading(1, 'A local service to talk to');
  say(`Sandbox listening on ${sandbox.url}, seeded with contacts, packagings and reference lists.\n`);
  say('Every command below reads the service address and the token from the environment:\n');
  io.out(
    paint.dim(
      wrapForStdout(
        io,
        `  $ export ORDERCLI_BASE_URL=${sandbox.url} ORDERCLI_TOKEN=${sandbox.tokens.partner}\n`,
        {
          continuation: ' \\',
        },
      ),
    ),
  );

  heading(2, 'A receiver for webhook notifications');
  const port = await freePort();
  const logFile = join(workDir, 'events.ndjson');
  const listenAbort = new AbortController();
  const stopListen = () => listenAbort.abort();
  ctx.signal.addEventListener('abort', stopListen, { once: true });
  let ready: () => void = () => undefined;
  const readyLine = new Promise<void>((resolve) => {
    ready = resolve;
  });
  // The receiver says on stderr when it accepts connections; scripts wait for that line too.
  const listenIO = prefixedIO(io, paint.cyan('  [listen] '), (line) => {
    if (line.startsWith('Ready: listening on')) ready();
  });
  showCommand(`ordercli listen --port ${port} --log events.ndjson`, 'key from ORDERCLI_WEBHOOK_KEY');
  const listening = ctx.runCommand(['listen', '--port', String(port), '--log', logFile], {
    io: listenIO,
    env,
    signal: listenAbort.signal,
    cwd: workDir,
  });
  ctx.onClose(async () => {
    stopListen();
    await listening;
  });
  await waitUntilReady(readyLine, listening, ctx.signal);
  await runStep(step, [
    'webhooks',
    'subscribe',
    '--event',
    SALES_ORDER_VALIDATED,
    '--url',
    `http://127.0.0.1:${port}/`,
  ]);

  heading(3, 'The reference lists orders are built from');
  await runStep(step, ['refs', 'contacts', 'list']);
  await runStep(step, ['refs', 'packagings', 'list', '--active', '--search', 'crème']);
  say(paint.dim(`  (${step.cli} refs browse lets you search and pick them interactively.)\n`));

  heading(4, 'Import orders from a spreadsheet export');
  const journal = join(workDir, 'import.journal.ndjson');
  const report = join(workDir, 'report.csv');
  const importCode = await runStep(
    step,
    ['orders', 'import', file, '--journal', journal, '--report', report],
    `${step.cli} orders import ${shown(file)} --report report.csv`,
  );
  const created = sandbox.orders().length;
  if (importCode !== ExitCode.Ok) {
    throw new CliError(
      `The demo import did not create every order (exit ${importCode}); see the summary above.`,
      ExitCode.Failure,
    );
  }

  heading(5, `Notifications arriving (${SALES_ORDER_VALIDATED})`);
  say(
    'The sandbox validates each order after a moment and notifies the receiver, which checks X-WEBHOOK-KEY:\n',
  );
  const received = await waitForEvents(logFile, created, ctx.signal);
  stopListen();
  await listening;
  say(
    received >= created
      ? `${paint.green('✓')} ${received} of ${created} orders validated; every notification carried the right key.\n`
      : `${paint.red('✗')} only ${received} of ${created} notifications arrived within ${NOTIFICATION_WAIT_MS / 1000} s.\n`,
  );

  heading(6, 'Now against your instance');
  const next = [
    ['ordercli login', 'base URL, token and auth header, checked and saved in a profile'],
    ['ordercli refs packagings list --active', 'the ids to put in your orders'],
    [
      'ordercli orders import orders.csv --report report.csv',
      're-runnable: created orders are never sent twice',
    ],
    [
      'ordercli listen --key "$ORDERCLI_WEBHOOK_KEY" --forward-to http://localhost:3000/webhooks',
      'notifications to your app, nothing lost',
    ],
    ['ordercli sandbox', 'this sandbox, standing, for your own tests'],
  ];
  for (const [line, why] of next) showCommand(line ?? '', why ?? '');
  if (received < created) ctx.exitCode = ExitCode.Failure;

  /**
   * A command to type, with why after it; on a terminal too narrow for both, why goes on the line
   * above (a comment cannot continue onto the next line), and a long command continues with \.
   */
  function showCommand(line: string, why: string): void {
    const typed = line.replace(/^ordercli\b/, step.cli);
    const oneLine = `  $ ${typed}   # ${why}`;
    if (!io.stdoutIsTTY || stringWidth(oneLine) <= io.columns) {
      io.out(`  ${paint.dim('$')} ${typed}   ${paint.dim(`# ${why}`)}\n`);
      return;
    }
    io.out(`${paint.dim(wrapForStdout(io, `  # ${why}`))}\n`);
    io.out(`${wrapForStdout(io, `  $ ${typed}`, { continuation: ' \\' })}\n`);
  }
}

/** Runs one real command in-process, after printing it as the user would type it. */
async function runStep(step: Step, args: string[], display?: string): Promise<number> {
  const typed = `  $ ${display ?? `${step.cli} ${args.map(quote).join(' ')}`}`;
  step.io.out(`${wrapForStdout(step.io, typed, { continuation: ' \\' })}\n`);
  const code = await step.ctx.runCommand(step.color ? args : ['--no-color', ...args], {
    io: step.io,
    env: step.env,
    signal: step.signal,
    cwd: step.cwd,
  });
  if (step.signal.aborted) throw step.signal.reason;
  if (code === ExitCode.Usage || code === ExitCode.Auth) {
    throw new CliError(`The demo step "ordercli ${args.join(' ')}" failed (exit ${code}).`, ExitCode.Failure);
  }
  return code;
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The package folder, where fixtures/ lives, from dist/chunks/ or src/commands/demo/. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'fixtures'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

/** A port nobody listens on right now, for the receiver. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** Waits for the receiver's ready line; fails if it exits first or takes more than 10 s. */
async function waitUntilReady(
  readyLine: Promise<void>,
  running: Promise<number>,
  signal: AbortSignal,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    readyLine.then(() => 'ready' as const),
    running.then((code) => code),
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 10_000);
    }),
  ]);
  clearTimeout(timer);
  if (signal.aborted) throw signal.reason;
  if (outcome === 'timeout')
    throw new CliError('The demo receiver did not start within 10 s.', ExitCode.Failure);
  if (outcome !== 'ready')
    throw new CliError(`The demo's receiver stopped (exit ${outcome}).`, ExitCode.Failure);
}

/** Counts logged notifications until `expected` arrived or the wait is over. */
async function waitForEvents(path: string, expected: number, signal: AbortSignal): Promise<number> {
  const deadline = Date.now() + NOTIFICATION_WAIT_MS;
  let count = 0;
  while (Date.now() < deadline && !signal.aborted) {
    const text = await readFile(path, 'utf8').catch(() => '');
    count = text.split('\n').filter((line) => line.includes(SALES_ORDER_VALIDATED)).length;
    if (count >= expected) break;
    await sleep(50);
  }
  return count;
}

interface Painter {
  bold(t: string): string;
  dim(t: string): string;
  cyan(t: string): string;
  green(t: string): string;
  red(t: string): string;
}

async function painter(io: IOStreams): Promise<Painter> {
  if (!io.colorEnabled) {
    const plain = (t: string) => t;
    return { bold: plain, dim: plain, cyan: plain, green: plain, red: plain };
  }
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return {
    bold: (t) => chalk.bold(t),
    dim: (t) => chalk.dim(t),
    cyan: (t) => chalk.cyan(t),
    green: (t) => chalk.green(t),
    red: (t) => chalk.red(t),
  };
}
