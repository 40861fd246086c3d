/**
 * A fresh clone of what is committed (HEAD; uncommitted work is not in it) runs the README's two
 * commands as written:
 * - on a fresh machine: HOME and the npm cache are empty folders, npm reaches the registry (and
 *   nothing else does: the tests stay on 127.0.0.1); `npm install && npx ordercli demo`, then
 *   `npm test` with ORDERCLI_TEST_SET=smoke: every stage (build, typecheck, lint, vitest, the
 *   other Nodes) runs as written, vitest on the smoke set of test/smoke.ts (the whole suite runs
 *   in this checkout, on the same commit in CI), and the other-Node stage is skipped (it says
 *   so) to save the two Node downloads;
 * - with this machine's npm cache and npm offline: `npm install && npx ordercli demo`, which shows
 *   that the lockfile's packages are all in the cache once the project is installed.
 * `.ci/run` is checked to run exactly the README's `npm install` and `npm test`. Inside such a
 * clone ORDERCLI_IN_FRESH_CLONE is set and this file skips itself, so that no clone clones again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SMOKE_TESTS } from '../smoke.js';
import { ROOT } from '../support/cli.js';
import { describeRun, type ExecResult, exec, freshMachineEnv, releaseEnv, sh, TempDirs } from './support.js';

const README_INSTALL = 'npm install && npx ordercli demo';
const README_TEST = 'npm test';
const dirs = new TempDirs();
// Two clones with their node_modules, and an npm cache: removing them takes a while on a busy disk.
afterAll(() => dirs.cleanup(), 180_000);

/** Lines of the first fenced code block of a Markdown text, comments after `#` removed. */
function firstCodeBlock(markdown: string): string[] {
  const match = /^```[a-z]*\n([\s\S]*?)^```/m.exec(markdown);
  if (!match?.[1]) return [];
  return match[1].split('\n').map((line) => line.replace(/\s+#.*$/, '').trim());
}

/** Clones HEAD into an empty folder; returns the clone and the README's first code block. */
async function cloneHead(env: NodeJS.ProcessEnv): Promise<{ clone: string; block: string[] }> {
  const clone = join(dirs.make('ordercli-clone-'), 'ordercli');
  const cloned = await exec('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], {
    cwd: ROOT,
    env,
    timeoutMs: 60_000,
  });
  expect(cloned.code, describeRun('git clone', cloned)).toBe(0);
  return { clone, block: firstCodeBlock(readFileSync(join(clone, 'README.md'), 'utf8')) };
}

function seconds(result: ExecResult): string {
  return `${(result.ms / 1000).toFixed(0)} s`;
}

describe.skipIf(process.env.ORDERCLI_IN_FRESH_CLONE)('a fresh clone of HEAD', () => {
  it.concurrent('on a fresh machine runs the README two commands: install and demo, then npm test (its smoke set)', async () => {
    const env = freshMachineEnv(dirs.make('ordercli-home-'), dirs.make('ordercli-npm-cache-'), {
      ORDERCLI_IN_FRESH_CLONE: '1',
      ORDERCLI_SKIP_OTHER_NODES: '1',
      ORDERCLI_TEST_SET: 'smoke',
    });
    const { clone, block } = await cloneHead(env);
    // The test follows the README of the clone: its first code block is these two commands.
    expect(block.filter((line) => line !== '')).toEqual([README_INSTALL, README_TEST]);

    const install = await sh(README_INSTALL, { cwd: clone, env, timeoutMs: 300_000 });
    expect(
      install.code,
      `${describeRun(README_INSTALL, install)}\nThe install needs the npm registry (and only it).`,
    ).toBe(0);
    expect(install.stdout).toContain('orders validated');

    const test = await sh(README_TEST, { cwd: clone, env, timeoutMs: 300_000 });
    expect(test.code, describeRun(README_TEST, test)).toBe(0);
    const output = test.stdout.replace(/\x1b\[[0-9;]*m/g, '');
    const summary = output.slice(output.indexOf('== npm test: summary'));
    for (const stage of ['build', 'typecheck', 'lint', 'test:vitest', 'test:other-nodes'])
      expect(summary).toMatch(new RegExp(`${stage} +passed`));
    expect(summary).toContain('all passed');
    expect(output).toContain('SKIPPED: the end-to-end tests under Node 22 and 24');
    // Vitest ran the smoke set, every file of it and nothing else, and the summary says so.
    expect(summary).toMatch(
      new RegExp(`Test Files +${SMOKE_TESTS.length} passed \\(${SMOKE_TESTS.length}\\)`),
    );
    expect(summary).toContain('SKIPPED: every test file outside the smoke set of test/smoke.ts');
    for (const file of SMOKE_TESTS) expect(output).toContain(`✓ ${file}`);
    console.log(`fresh machine: ${README_INSTALL} ${seconds(install)}, ${README_TEST} ${seconds(test)}`);
  }, 660_000);

  it.concurrent('with the npm cache of this machine, offline, runs npm install && npx ordercli demo', async () => {
    const env = releaseEnv(dirs.make('ordercli-config-'), {
      ORDERCLI_IN_FRESH_CLONE: '1',
      npm_config_offline: 'true',
    });
    const { clone, block } = await cloneHead(env);
    expect(block).toContain(README_INSTALL);

    const offline = README_INSTALL.replace('npm install', 'npm install --offline --no-audit --no-fund');
    const result = await sh(offline, { cwd: clone, env, timeoutMs: 240_000 });
    expect(
      result.code,
      `${describeRun(offline, result)}\nENOTCACHED means the npm cache lacks a dependency of the lockfile: ` +
        'run npm install once with the network (as .ci/run does on a fresh machine).',
    ).toBe(0);
    expect(result.stdout).toContain('orders validated');
  }, 300_000);

  it('has a .ci/run that runs exactly npm install and npm test (after installing Chromium, PostgreSQL, zsh and fish)', () => {
    const script = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const commands = script
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
      .filter((line) => line !== 'set -euo pipefail' && !/^cd "\$\(dirname "\$0"\)\/\.\."$/.test(line))
      // The machine's part: Chromium for the inspector's browser test, PostgreSQL's server for
      // the shared ledger's tests, zsh and fish for the completion tests, installed when missing.
      .filter(
        (line) => !['.ci/install-chromium', '.ci/install-postgresql', '.ci/install-shells'].includes(line),
      );
    expect(commands).toEqual(['npm install', 'npm test']);
    expect(firstCodeBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toContain('npm test');
  });
});
