/**
 * argv in, exit code out. The only place where errors become messages and exit codes.
 */
import { CommanderError } from 'commander';
import { Context } from '../command-support/context.js';
import { CancelledError, CliError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { escapeControl, escapeControlKeepingLines } from '../io/quote.js';
import { type IOStreams, processIO } from '../io/streams.js';
import { buildProgram, expandHelpCommand } from './program.js';

export interface MainOptions {
  io?: IOStreams;
  env?: NodeJS.ProcessEnv;
  /** Aborting it acts as Ctrl-C (tests); the real process wires SIGINT to it. */
  signal?: AbortSignal;
  cwd?: string;
}

/** Runs one command line and returns its exit code. Never throws, never calls process.exit. */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const io = options.io ?? processIO();
  const env = options.env ?? process.env;
  const interrupt = new AbortController();
  const detachSignals = options.signal ? linkSignal(options.signal, interrupt) : trapSigint(io, interrupt);
  const ctx = new Context({ io, env, signal: interrupt.signal, cwd: options.cwd, runCommand: main });
  let code: number;
  try {
    const program = buildProgram(ctx);
    await program.parseAsync(expandHelpCommand(program, argv), { from: 'user' });
    code = ctx.exitCode;
  } catch (error) {
    code = await renderError(error, ctx);
  } finally {
    await ctx.close().catch(() => undefined);
    detachSignals();
  }
  return code;
}

function linkSignal(signal: AbortSignal, interrupt: AbortController): () => void {
  const onAbort = () => interrupt.abort(new CancelledError());
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/** First Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) asks the command to stop cleanly; a second one exits at once. */
function trapSigint(io: IOStreams, interrupt: AbortController): () => void {
  const onSigint = () => {
    if (interrupt.signal.aborted) {
      io.err('\nInterrupted again: exiting now.\n');
      process.exit(ExitCode.Interrupted);
    }
    interrupt.abort(new CancelledError());
  };
  // A closed terminal (SIGHUP) and Ctrl-\ (SIGQUIT) stop as cleanly as Ctrl-C and SIGTERM.
  const signals: NodeJS.Signals[] = [
    'SIGINT',
    'SIGTERM',
    ...(process.platform === 'win32' ? [] : (['SIGHUP', 'SIGQUIT'] as const)),
  ];
  for (const signal of signals) {
    process.on(signal, onSigint);
    // The binary's listeners of the start-up go once these are in place (never none in between).
    for (const listener of process.listeners(signal)) {
      if ((listener as { ordercliEarly?: boolean }).ordercliEarly) process.off(signal, listener);
    }
  }
  return () => {
    for (const signal of signals) process.off(signal, onSigint);
  };
}

async function renderError(error: unknown, ctx: Context): Promise<number> {
  const { io } = ctx;
  if (error instanceof CommanderError) {
    // Commander has already printed its message (or the help).
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.Ok;
    return ExitCode.Usage;
  }
  const paint = await painter(io);
  // Messages quote inputs and the service's answers: no control character of theirs reaches the terminal.
  // Long messages wrap at word boundaries on a terminal; piped, each stays one line.
  const { wrapForStderr } = await import('../io/wrap.js');
  if (error instanceof CliError) {
    let text = `${paint.red('error:')} ${escapeControlKeepingLines(error.message)}\n`;
    for (const line of error.details) text += `  ${escapeControl(line)}\n`;
    if (error.hint) text += `${paint.yellow('hint:')} ${escapeControlKeepingLines(error.hint)}\n`;
    io.err(wrapForStderr(io, text));
    return error.exitCode;
  }
  if (isAbort(error) || ctx.signal.aborted) {
    io.err('Interrupted.\n');
    return ExitCode.Interrupted;
  }
  const message = escapeControlKeepingLines(error instanceof Error ? error.message : String(error));
  io.err(
    wrapForStderr(
      io,
      `${paint.red('error:')} ordercli failed unexpectedly: ${message}. Run it again with --verbose; if it persists, report it with that output.\n`,
    ),
  );
  if (ctx.env.ORDERCLI_DEBUG && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
  return ExitCode.Failure;
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'AbortError' || (error as { code?: string }).code === 'ABORT_ERR')
  );
}

interface Painter {
  red(text: string): string;
  yellow(text: string): string;
}

async function painter(io: IOStreams): Promise<Painter> {
  if (!io.colorEnabled || !io.stderrIsTTY) return { red: (t) => t, yellow: (t) => t };
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return { red: (t) => chalk.red(t), yellow: (t) => chalk.yellow(t) };
}
