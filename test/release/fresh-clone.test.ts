/**
 * A fresh clone of what is committed (HEAD; uncommitted work is not in it) runs the README's first
 * command as written, with npm kept offline: `npm install && npx ordercli demo`. The clone's own
 * `npm test` is not run (it would run this test again); instead `.ci/run` is checked to run exactly
 * the README's `npm install` and `npm test`. Inside such a clone, ORDERCLI_IN_FRESH_CLONE is set
 * and this file skips itself, so that no clone ever clones again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { describeRun, exec, releaseEnv, sh, TempDirs } from './support.js';

const README_COMMAND = 'npm install && npx ordercli demo';
const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** Lines of the first fenced code block of a Markdown text, comments after `#` removed. */
function firstCodeBlock(markdown: string): string[] {
  const match = /^```[a-z]*\n([\s\S]*?)^```/m.exec(markdown);
  if (!match?.[1]) return [];
  return match[1].split('\n').map((line) => line.replace(/\s+#.*$/, '').trim());
}

describe.skipIf(process.env.ORDERCLI_IN_FRESH_CLONE)('a fresh clone of HEAD', () => {
  it('runs the README first command (npm install, offline, then npx ordercli demo)', async () => {
    const env = releaseEnv(dirs.make('ordercli-config-'), {
      ORDERCLI_IN_FRESH_CLONE: '1',
      npm_config_offline: 'true',
    });
    const clone = join(dirs.make('ordercli-clone-'), 'ordercli');
    const cloned = await exec('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], {
      cwd: ROOT,
      env,
      timeoutMs: 60_000,
    });
    expect(cloned.code, describeRun('git clone', cloned)).toBe(0);

    // The test follows the README of the clone: its first code block starts with this command.
    const readme = readFileSync(join(clone, 'README.md'), 'utf8');
    expect(firstCodeBlock(readme)).toContain(README_COMMAND);

    const offline = README_COMMAND.replace('npm install', 'npm install --offline --no-audit --no-fund');
    const result = await sh(offline, { cwd: clone, env, timeoutMs: 240_000 });
    expect(
      result.code,
      `${describeRun(offline, result)}\nENOTCACHED means the npm cache lacks a dependency of the lockfile: ` +
        'run npm install once with the network (as .ci/run does on a fresh machine).',
    ).toBe(0);
    expect(result.stdout).toContain('orders validated');
  }, 300_000);

  it('has a .ci/run that runs exactly npm install and npm test', () => {
    const script = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const commands = script
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
      .filter((line) => line !== 'set -euo pipefail' && !/^cd "\$\(dirname "\$0"\)\/\.\."$/.test(line));
    expect(commands).toEqual(['npm install', 'npm test']);
    expect(firstCodeBlock(readFileSync(join(ROOT, 'README.md'), 'utf8'))).toContain('npm test');
  });
});
