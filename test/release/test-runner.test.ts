/**
 * `npm test` runs every stage (build, typecheck, lint, vitest, the other Nodes) even when one
 * fails, reports each, and exits non-zero if any failed. Checked on a scratch project that has
 * this repository's "test" script and scripts/ folder, and stand-in stages that pass or fail.
 * Nothing is skipped silently: a part that cannot run says so in a SKIPPED line, and with `CI`
 * set a missing PostgreSQL, Chromium or working unshare fails the run (the real test files, run
 * by a vitest stage with those taken away).
 */
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { describeRun, exec, releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const ours = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** A scratch project with our "test" script, our scripts/, and these stages. */
function scratchProject(stages: Record<string, string>): string {
  const dir = dirs.make('ordercli-runner-');
  cpSync(join(ROOT, 'scripts'), join(dir, 'scripts'), { recursive: true });
  const scripts = { test: ours.scripts.test, ...stages };
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'scratch', private: true, scripts })}\n`,
  );
  return dir;
}

const STAGES = ['build', 'typecheck', 'lint', 'test:vitest', 'test:other-nodes'];

describe('npm test', () => {
  it('has every stage in its "test" script', () => {
    for (const stage of STAGES) expect(ours.scripts.test?.split(/[ +]/)).toContain(stage);
    expect(ours.scripts['test:vitest']).toBe('vitest run');
  });

  it('runs the stages after a failed one, reports each, and exits 1', async () => {
    const project = scratchProject({
      build: 'echo stage-build-ran',
      typecheck: 'echo stage-typecheck-ran && exit 3',
      lint: 'echo stage-lint-ran',
      'test:vitest': "echo stage-vitest-ran && echo ' Test Files  2 failed | 5 passed (7)' && exit 1",
      'test:other-nodes': 'echo stage-other-nodes-ran',
    });
    const result = await exec('npm', ['test'], { cwd: project, env: releaseEnv(project), timeoutMs: 60_000 });
    expect(result.code, describeRun('npm test', result)).not.toBe(0);
    for (const stage of ['build', 'typecheck', 'lint', 'vitest', 'other-nodes'])
      expect(result.stdout).toContain(`stage-${stage}-ran`);
    const summary = result.stdout.slice(result.stdout.indexOf('== npm test: summary'));
    expect(summary).toMatch(/typecheck +FAILED \(exit 3\)/);
    expect(summary).toMatch(/test:vitest +FAILED \(exit 1\)/);
    expect(summary).toMatch(/lint +passed/);
    expect(summary).toMatch(/test:other-nodes +passed/);
    // Vitest's closing line stays visible at the end.
    expect(summary).toContain('Test Files  2 failed | 5 passed (7)');
    expect(summary).toContain('FAILED: typecheck, test:vitest');
  }, 60_000);

  it('exits 0 when every stage passed', async () => {
    const project = scratchProject(Object.fromEntries(STAGES.map((stage) => [stage, 'echo ok'])));
    const result = await exec('npm', ['test'], { cwd: project, env: releaseEnv(project), timeoutMs: 60_000 });
    expect(result.code, describeRun('npm test', result)).toBe(0);
    expect(result.stdout).toContain('all passed');
  }, 60_000);

  it('with ORDERCLI_TEST_SET=smoke, runs every stage and says in the summary that it left tests out', async () => {
    const project = scratchProject(Object.fromEntries(STAGES.map((stage) => [stage, 'echo ok'])));
    const env = releaseEnv(project, { ORDERCLI_TEST_SET: 'smoke' });
    const result = await exec('npm', ['test'], { cwd: project, env, timeoutMs: 60_000 });
    expect(result.code, describeRun('npm test', result)).toBe(0);
    const summary = result.stdout.slice(result.stdout.indexOf('== npm test: summary'));
    for (const stage of STAGES) expect(summary).toMatch(new RegExp(`${stage} +passed`));
    expect(summary).toContain(
      'SKIPPED: every test file outside the smoke set of test/smoke.ts (ORDERCLI_TEST_SET=smoke)',
    );
  }, 60_000);

  it('names a part that did not run once in the summary, however many stages said so', async () => {
    const skipped = 'SKIPPED: a pipe as the lock: mkfifo is not installed (not on PATH).';
    const project = scratchProject({
      ...Object.fromEntries(STAGES.map((stage) => [stage, 'echo ok'])),
      // As vitest prints a test's console line (colours on), and again under Node 22 and 24.
      'test:vitest': `printf '\\033[22m\\033[39m%s\\n' "${skipped}"`,
      'test:other-nodes': `echo "${skipped}" && echo "${skipped}"`,
    });
    const result = await exec('npm', ['test'], { cwd: project, env: releaseEnv(project), timeoutMs: 60_000 });
    expect(result.code, describeRun('npm test', result)).toBe(0);
    const summary = result.stdout.slice(result.stdout.indexOf('== npm test: summary'));
    expect(summary.split(skipped)).toHaveLength(2);
    expect(summary).toMatch(/all passed \(what did not run is named by the SKIPPED line above\)/);
  }, 60_000);

  /**
   * The vitest stage on the real files that need PostgreSQL's server, Chromium and unshare, on a
   * machine without them: no server binaries in ORDERCLI_POSTGRES_BINDIR, no file at
   * ORDERCLI_CHROMIUM, and a PATH holding node alone (no unshare, no chattr).
   */
  function withoutTheirTools(ci: boolean): Promise<{ code: number; output: string; summary: string }> {
    const nothing = dirs.make('ordercli-nothing-');
    const nodeOnly = dirs.make('ordercli-path-');
    symlinkSync(process.execPath, join(nodeOnly, 'node'));
    const files = [
      'test/ledger/postgres.test.ts',
      'test/webhooks/inspector.browser.test.ts',
      'test/io/append-log.test.ts',
    ];
    const vitest = `cd '${ROOT}' && PATH='${nodeOnly}' node node_modules/vitest/vitest.mjs run ${files.join(' ')}`;
    const project = scratchProject({
      ...Object.fromEntries(STAGES.map((stage) => [stage, 'echo ok'])),
      'test:vitest': vitest,
    });
    const env = releaseEnv(project, {
      ORDERCLI_POSTGRES_BINDIR: nothing,
      ORDERCLI_CHROMIUM: join(nothing, 'chromium'),
      NO_COLOR: '1',
      ...(ci ? { CI: 'true' } : {}),
    });
    // The vitest inside is a run of its own, not a worker of this one.
    for (const key of Object.keys(env)) if (key.startsWith('VITEST')) delete env[key];
    return exec('npm', ['test'], { cwd: project, env, timeoutMs: 120_000 }).then((result) => {
      const output = `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
      expect(output, describeRun('npm test', result)).toContain('== npm test: summary');
      return { code: result.code, output, summary: output.slice(output.indexOf('== npm test: summary')) };
    });
  }

  const MISSING = [
    ['PostgreSQL', 'the PostgreSQL ledger tests', 'apt-get install -y postgresql'],
    ['Chromium', "the inspector's browser test", 'apt-get install -y chromium'],
    ['unshare', 'a full disk', 'apt-get install -y util-linux'],
  ] as const;

  it('with CI set, fails when PostgreSQL, Chromium or a working unshare is missing, naming each and how to install it', async () => {
    const { code, output, summary } = await withoutTheirTools(true);
    expect(code, output).toBe(1);
    expect(summary).toMatch(/test:vitest +FAILED \(exit 1\)/);
    for (const [tool, what, how] of MISSING) {
      expect(output).toMatch(new RegExp(`FAIL .*${what}.*: needs ${tool}`));
      expect(output).toContain(
        `With CI set (CI=true) that fails the run instead of a skip; install ${tool}: ${how}`,
      );
      // A failure, not a skip.
      expect(summary).not.toContain(`SKIPPED: ${what}`);
    }
    // What CI need not have is still a skip that says so.
    expect(summary).toContain('SKIPPED: a log file that cannot be opened (test/io/append-log.test.ts)');
  }, 120_000);

  it('without CI, skips them, each named in a SKIPPED line with how to install it, and passes', async () => {
    const { code, output, summary } = await withoutTheirTools(false);
    expect(code, output).toBe(0);
    for (const [, what, how] of MISSING)
      expect(summary).toMatch(new RegExp(`SKIPPED: ${what}.*To enable: ${how}`));
    expect(summary).toMatch(/all passed \(what did not run is named by the SKIPPED lines above\)/);
  }, 120_000);
});
