/**
 * Helpers of the release tests: run a command with an explicit environment (nothing from
 * ORDERCLI_*, a private config folder, npm kept offline) and remove temp folders afterwards.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tempDir } from '../support/cli.js';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** process.env without ORDERCLI_*, colour settings or the variables of the npm script running us. */
export function releaseEnv(configDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('ORDERCLI_') || key.startsWith('npm_lifecycle_') || key.startsWith('npm_package_'))
      continue;
    if (['NO_COLOR', 'FORCE_COLOR', 'CI', 'INIT_CWD', 'npm_command', 'npm_config_offline'].includes(key))
      continue;
    env[key] = value;
  }
  return { ...env, ORDERCLI_CONFIG_DIR: configDir, ...extra };
}

/**
 * The environment of a fresh machine: this PATH without npm's additions, nothing from npm or
 * ORDERCLI_*, and `home` and `npmCache` (empty folders) as HOME and the npm cache, so that no
 * user config (~/.npmrc, ~/.config/ordercli) and no cached package is found. The npm registry
 * stays reachable.
 */
export function freshMachineEnv(home: string, npmCache: string, extra: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(ORDERCLI_|npm_|VITEST|XDG_)/i.test(key)) continue;
    if (
      ['NO_COLOR', 'FORCE_COLOR', 'CI', 'INIT_CWD', 'TEST', 'HOME', 'NODE_ENV', 'NODE_OPTIONS'].includes(key)
    )
      continue;
    env[key] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => !/node_modules[/\\]\.bin|node-gyp-bin/.test(dir))
    .join(':');
  return { ...env, HOME: home, npm_config_cache: npmCache, ...extra };
}

/** Runs `command args` and collects its output; kills it (exit 137) after timeoutMs. */
export function exec(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<ExecResult> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 137 : 1), stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Runs a shell command line exactly as written (as a reader would paste it). */
export function sh(line: string, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }) {
  return exec('/bin/sh', ['-c', line], options);
}

/** A readable dump of a failed run, for assertion messages. */
export function describeRun(what: string, result: ExecResult): string {
  return `${what} exited ${result.code} after ${result.ms} ms\n--- stdout\n${result.stdout.slice(-4000)}\n--- stderr\n${result.stderr.slice(-4000)}`;
}

/** Temp folders removed in afterAll. */
export class TempDirs {
  readonly #paths: string[] = [];
  make(prefix: string): string {
    const path = tempDir(prefix);
    this.#paths.push(path);
    return path;
  }
  track(path: string): string {
    this.#paths.push(path);
    return path;
  }
  cleanup(): void {
    for (const path of this.#paths.splice(0)) rmSync(path, { recursive: true, force: true });
  }
}
