/**
 * `demo`: the first run. It starts a sandbox in this process and then runs the real commands
 * (listen, webhooks subscribe, refs, orders import) against it, printing each one as the user
 * would type it, so that the same lines work against a real instance afterwards.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import stringWidth from 'string-width';
import type { Context } from '../../command-support/context.js';
import { CliError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { sleep } from '../../core/retry.js';
import { invocation } from '../../io/invocation.js';
import { prefixedIO } from '../../io/memory.js';
import type { IOStreams } from '../../io/streams.js';
import { wrapForStdout } from '../../io/wrap.js';
import type { Sandbox } from '../../sandbox/server.js';
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

/** What the demo's sections share. */
interface Demo {
  ctx: Context;
  io: IOStreams;
  paint: Painter;
  sandbox: Sandbox;
  /** A temporary folder for the demo's files and configuration, removed at the end. */
  workDir: string;
  /** How the sections run commands: in-process, against the sandbox. */
  step: Step;
}

/** The receiver of section 2, running until `stop()`. */
interface DemoReceiver {
  logFile: string;
  stop(): void;
  /** Its exit code, once stopped. */
  done: Promise<number>;
}

/** Starts a sandbox and a receiver in this process, then shows the real commands at work on them. */
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
  const demo: Demo = { ctx, io, paint, sandbox, workDir, step: stepOf(ctx, sandbox, webhookKey, workDir) };

  say(
    demo,
    `${paint.bold('ordercli demo')} — a first run on a sandbox embedded in this process; nothing leaves this machine.\n`,
  );
  showService(demo);
  const receiver = await startReceiver(demo);
  await showReferences(demo);
  const created = await importOrders(demo, file);
  const received = await awaitNotifications(demo, receiver, created);
  showNextCommands(demo);
  if (received < created) ctx.exitCode = ExitCode.Failure;
}

/** How the demo runs a command: in this process, on the sandbox, never on the user's profiles. */
function stepOf(ctx: Context, sandbox: Sandbox, webhookKey: string, workDir: string): Step {
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
  return {
    ctx,
    io: prefixedIO(ctx.io, '', undefined, { keepStderr: true }),
    env,
    signal: ctx.signal,
    cwd: ctx.cwd,
    color: ctx.io.colorEnabled,
    cli: invocation(ctx.env),
  };
}

function heading(demo: Demo, n: number, title: string): void {
  demo.io.out(`\n${demo.paint.bold(`${n}. ${title}`)}\n`);
}

/** Prose, wrapped at word boundaries on a terminal. */
function say(demo: Demo, text: string): void {
  demo.io.out(wrapForStdout(demo.io, text));
}

/**
 * A command to type, with why after it; on a terminal too narrow for both, why goes on the line
 * above (a comment cannot continue onto the next line), and a long command continues with \.
 */
function showCommand(demo: Demo, line: string, why: string): void {
  const { io, paint } = demo;
  const typed = line.replace(/^ordercli\b/, demo.step.cli);
  const oneLine = `  $ ${typed}   # ${why}`;
  if (!io.stdoutIsTTY || stringWidth(oneLine) <= io.columns) {
    io.out(`  ${paint.dim('$')} ${typed}   ${paint.dim(`# ${why}`)}\n`);
    return;
  }
  io.out(`${paint.dim(wrapForStdout(io, `  # ${why}`))}\n`);
  io.out(`${wrapForStdout(io, `  $ ${typed}`, { continuation: ' \\' })}\n`);
}

/** 1. The sandbox, and the environment every command below reads. */
function showService(demo: Demo): void {
  const { io, paint, sandbox } = demo;
  heading(demo, 1, 'A local service to talk to');
  say(demo, `Sandbox listening on ${sandbox.url}, seeded with contacts, packagings and reference lists.\n`);
  say(demo, 'Every command below reads the service address and the token from the environment:\n');
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
}

/**
 * 2. `listen` on a port the system picks (`--port 0`: a port found free first could be taken by
 * another program before listen binds it), logging what it accepts, and the sandbox's webhook
 * subscribed to the address its ready line gives.
 */
async function startReceiver(demo: Demo): Promise<DemoReceiver> {
  const { ctx, io, paint, workDir } = demo;
  heading(demo, 2, 'A receiver for webhook notifications');
  const logFile = join(workDir, 'events.ndjson');
  const listenAbort = new AbortController();
  const stop = () => listenAbort.abort();
  ctx.signal.addEventListener('abort', stop, { once: true });
  let ready: (url: string) => void = () => undefined;
  const readyLine = new Promise<string>((resolve) => {
    ready = resolve;
  });
  // The receiver says on stderr when it accepts connections, and where; scripts wait for that line too.
  const listenIO = prefixedIO(io, paint.cyan('  [listen] '), (line) => {
    const url = /^Ready: listening on (\S+)/.exec(line)?.[1];
    if (url !== undefined) ready(url);
  });
  showCommand(
    demo,
    'ordercli listen --port 0 --log events.ndjson',
    'key from ORDERCLI_WEBHOOK_KEY; 0: a free port',
  );
  const done = ctx.runCommand(['listen', '--port', '0', '--log', logFile], {
    io: listenIO,
    env: demo.step.env,
    signal: listenAbort.signal,
    cwd: workDir,
  });
  ctx.onClose(async () => {
    stop();
    await done;
  });
  const url = await waitUntilReady(readyLine, done, ctx.signal);
  await runStep(demo.step, ['webhooks', 'subscribe', '--event', SALES_ORDER_VALIDATED, '--url', url]);
  return { logFile, stop, done };
}

/** 3. The reference lists. */
async function showReferences(demo: Demo): Promise<void> {
  const { step, paint } = demo;
  heading(demo, 3, 'The reference lists orders are built from');
  await runStep(step, ['refs', 'contacts', 'list']);
  await runStep(step, ['refs', 'packagings', 'list', '--active', '--search', 'crème']);
  say(demo, paint.dim(`  (${step.cli} refs browse lets you search and pick them interactively.)\n`));
}

/** 4. `orders import` of the file; resolves with the number of orders the sandbox holds. */
async function importOrders(demo: Demo, file: string): Promise<number> {
  const { step, ctx } = demo;
  heading(demo, 4, 'Import orders from a spreadsheet export');
  // The order ledger is in the demo's own config folder (workDir): nothing is written beside the file.
  // No --report: its file would be in workDir, removed when the demo ends, yet named by the summary.
  const rel = relative(ctx.cwd, file);
  const shown = rel.startsWith('..') || rel === '' ? file : rel;
  const importCode = await runStep(step, ['orders', 'import', file], `${step.cli} orders import ${shown}`);
  const created = demo.sandbox.orders().length;
  if (importCode !== ExitCode.Ok) {
    throw new CliError(
      `The demo import did not create every order (exit ${importCode}); see the summary above.`,
      ExitCode.Failure,
    );
  }
  return created;
}

/** 5. The notifications of the created orders, counted in the receiver's log; then the receiver stops. */
async function awaitNotifications(demo: Demo, receiver: DemoReceiver, created: number): Promise<number> {
  const { paint } = demo;
  heading(demo, 5, `Notifications arriving (${SALES_ORDER_VALIDATED})`);
  say(
    demo,
    'The sandbox validates each order after a moment and notifies the receiver, which checks X-WEBHOOK-KEY:\n',
  );
  const received = await waitForEvents(receiver.logFile, created, demo.ctx.signal);
  receiver.stop();
  await receiver.done;
  say(
    demo,
    received >= created
      ? `${paint.green('✓')} ${received} of ${created} orders validated; every notification carried the right key.\n`
      : `${paint.red('✗')} only ${received} of ${created} notifications arrived within ${NOTIFICATION_WAIT_MS / 1000} s.\n`,
  );
  return received;
}

/** 6. The same commands against the user's own instance. */
function showNextCommands(demo: Demo): void {
  heading(demo, 6, 'Now against your instance');
  const next = [
    ['ordercli login', 'base URL, token and auth header, checked and saved in a profile'],
    ['ordercli refs packagings list --active', 'the ids to put in your orders'],
    [
      'ordercli orders import orders.csv --report report.csv',
      're-runnable: created orders are never sent twice',
    ],
    [
      'ordercli orders import orders.csv --await validated --tunnel cloudflared',
      'and wait for each validation (exit 5 when late)',
    ],
    [
      'ordercli listen --key "$ORDERCLI_WEBHOOK_KEY" --forward-to http://localhost:3000/webhooks',
      'notifications to your app, nothing lost',
    ],
    ['ordercli sandbox', 'this sandbox, standing, for your own tests'],
  ];
  for (const [line, why] of next) showCommand(demo, line ?? '', why ?? '');
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

/** Waits for the receiver's ready line, its address; fails if it exits first or takes more than 10 s. */
async function waitUntilReady(
  readyLine: Promise<string>,
  running: Promise<number>,
  signal: AbortSignal,
): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  let url = '';
  const outcome = await Promise.race([
    readyLine.then((address) => {
      url = address;
      return 'ready' as const;
    }),
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
  return url;
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
