/**
 * Runs ordercli in-process with test IO (`runCli`) or as the built binary (`runBin`), with an
 * environment isolated from the developer's: its own config folder and no ORDERCLI_* variables.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { createTestIO } from '../../src/io/memory.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/ordercli.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  tty?: boolean;
  env?: Record<string, string | undefined>;
  stdin?: string | Readable;
  columns?: number;
  signal?: AbortSignal;
  cwd?: string;
}

/** A fresh folder for config files and outputs of one test. */
export function tempDir(prefix = 'ordercli-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A config folder holding these profiles, its config.json mode 0600 as ordercli writes it. */
export function configFolder(profiles: Record<string, Record<string, unknown>>, prefix?: string): string {
  const dir = tempDir(prefix);
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles }), { mode: 0o600 });
  return dir;
}

/** The environment a test run sees: a private config folder, nothing inherited from ORDERCLI_*. */
export function testEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_command says how the runner was started (`npx vitest` or `npm test`): not the program's.
    // GITHUB_*: the tests' imports must not annotate nor write the job summary of a CI run of the tests.
    const inherited =
      !key.startsWith('ORDERCLI_') &&
      !key.startsWith('GITHUB_') &&
      !['NO_COLOR', 'CI', 'FORCE_COLOR', 'npm_command'].includes(key);
    if (inherited) env[key] = value;
  }
  env.ORDERCLI_CONFIG_DIR = extra.ORDERCLI_CONFIG_DIR ?? tempDir('ordercli-config-');
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

/** Runs the program in this process and returns its exit code and output. */
export async function runCli(args: string[], options: RunOptions = {}): Promise<CliResult> {
  const io = createTestIO({ tty: options.tty, stdin: options.stdin, columns: options.columns });
  const code = await main(args, {
    io,
    env: testEnv(options.env),
    signal: options.signal ?? new AbortController().signal,
    cwd: options.cwd,
  });
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

/** Runs the built `bin/ordercli.js` as a child process (what users really run). */
export function runBin(
  args: string[],
  options: Omit<RunOptions, 'tty' | 'signal'> & { timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: testEnv(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    if (typeof options.stdin === 'string') child.stdin.end(options.stdin);
    else if (options.stdin) options.stdin.pipe(child.stdin);
    else child.stdin.end();
  });
}

/**
 * Whether the binary running as `pid` has put its own signal listeners in place (Linux: SIGHUP in
 * the SigCgt mask of /proc/<pid>/status; Node itself catches SIGINT and SIGTERM from its first
 * instant, SIGHUP only when a listener asks, and the child is a copy of this process until its
 * exec). From then on a signal ends it through ordercli (exit 130), never by its default action.
 */
export function listensForSignals(pid: number): boolean {
  try {
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(BIN)) return false;
    const mask = /SigCgt:\s*([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 1n) !== 0n;
  } catch {
    return false;
  }
}
