/**
 * `npm test` runs every stage (build, typecheck, lint, vitest, the other Nodes) even when one
 * fails, reports each, and exits non-zero if any failed. Checked on a scratch project that has
 * this repository's "test" script and scripts/ folder, and stand-in stages that pass or fail.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
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
    const skipped = "SKIPPED: the inspector's browser test did not run: no Chromium found.";
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
});
