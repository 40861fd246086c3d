/**
 * What a test needs of the machine that it may lack (a PostgreSQL server, Chromium, a working
 * `unshare`, `mkfifo`, `curl`, `chattr`…), and the one rule for its absence: never a silent pass.
 *
 * - Outside CI, or for a tool CI need not have, the tests that need it do not run and a line
 *   `SKIPPED: <what did not run>: <why>. To enable: <how>.` says so on stdout (scripts/test.mjs
 *   repeats each such line in `npm test`'s summary).
 * - With `CI` set (any non-empty value), a tool marked `ciRequired` (PostgreSQL's server, Chromium,
 *   a working `unshare`) that is missing fails the run, saying what is missing and how to install
 *   it: CI exists to run those tests.
 */
import { spawnSync } from 'node:child_process';
import { it, type TestContext } from 'vitest';

/** What needs a tool, and what to do without it. */
export interface Need {
  /** What does not run without it: `the PostgreSQL ledger tests`. */
  what: string;
  /** Why it cannot be used here (see `probe`); undefined when it can. */
  missing: string | undefined;
  /** How to get it: `apt-get install -y postgresql`. */
  how: string;
  /** With `CI` set, its absence fails the run instead of skipping. */
  ciRequired?: boolean;
}

export type Verdict = { run: true } | { run: false; skipped: string } | { run: false; failure: string };

/** Whether this run is CI's: `CI` set to anything but the empty string. */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.CI ?? '') !== '';
}

/**
 * Why `command args…` does not work here (not installed, or it fails: a namespace not permitted),
 * or undefined when it exits 0.
 */
export function probe(command: string, ...args: string[]): string | undefined {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: 'pipe', timeout: 10_000 });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
    return `${command} is not installed (not on PATH)`;
  if (result.error) return `${[command, ...args].join(' ')} did not run (${result.error.message})`;
  if (result.status === 0) return undefined;
  const said = (result.stderr || result.stdout).trim().split('\n')[0];
  const exit = result.status === null ? `signal ${result.signal}` : `exit ${result.status}`;
  return `${[command, ...args].join(' ')} fails here (${exit}${said ? `: ${said}` : ''})`;
}

/** How to get a working `unshare`: util-linux's, run as root (namespaces need the privilege). */
export const HOW_TO_GET_UNSHARE =
  'apt-get install -y util-linux, and run the tests as root (a PID or mount namespace needs it)';

/**
 * `requireTool` for `unshare <args> true` (`-p -f --mount-proc`, `-m`), which CI must have
 * working: the tests of owners in another PID namespace and of a full disk need it.
 */
export function requireUnshare(what: string, ...args: string[]): boolean {
  return requireTool('unshare', {
    what,
    missing:
      process.platform === 'linux'
        ? probe('unshare', ...args, 'true')
        : `namespaces are Linux's (this is ${process.platform})`,
    how: HOW_TO_GET_UNSHARE,
    ciRequired: true,
  });
}

/** Run, skip with this SKIPPED line, or fail with this message: the rule above, for `tool`. */
export function judgeNeed(tool: string, need: Need, env: NodeJS.ProcessEnv = process.env): Verdict {
  if (need.missing === undefined) return { run: true };
  if (need.ciRequired && inCi(env)) {
    return {
      run: false,
      failure: `${need.what} cannot run: ${need.missing}. With CI set (CI=${env.CI}) that fails the run instead of a skip; install ${tool}: ${need.how}.`,
    };
  }
  return { run: false, skipped: `SKIPPED: ${need.what}: ${need.missing}. To enable: ${need.how}.` };
}

/**
 * At a test file's top level or in a `describe`: true when the tests needing `tool` can run. Else
 * false, having printed the SKIPPED line, or, in CI for a `ciRequired` tool, added a test that
 * fails with what is missing and how to install it (the rest of the file still runs).
 */
export function requireTool(tool: string, need: Need): boolean {
  const verdict = judgeNeed(tool, need);
  if (verdict.run) return true;
  if ('failure' in verdict) {
    const failure = verdict.failure;
    it(`${need.what}: needs ${tool}`, () => {
      throw new Error(failure);
    });
  } else {
    console.log(verdict.skipped);
  }
  return false;
}

/**
 * Inside a running test: returns when `tool` can be used; else prints the SKIPPED line and marks
 * the test skipped, or, in CI for a `ciRequired` tool, fails it.
 */
export function requireToolNow(context: TestContext, tool: string, need: Need): void {
  const verdict = judgeNeed(tool, need);
  if (verdict.run) return;
  if ('failure' in verdict) throw new Error(verdict.failure);
  console.log(verdict.skipped);
  context.skip(verdict.skipped);
}
