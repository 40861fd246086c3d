/**
 * docs/commands.md is generated from the program's own help (scripts/gen-commands-doc.mjs, run by
 * `npm run docs`); this test regenerates it from the built binary and fails when the committed
 * file differs, so the reference never drifts from the commands.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { describeRun, exec, releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe('docs/commands.md', () => {
  it('is what npm run docs generates from the help of every command', async () => {
    const result = await exec(process.execPath, ['scripts/gen-commands-doc.mjs', '--stdout'], {
      cwd: ROOT,
      env: releaseEnv(dirs.make('ordercli-config-')),
      timeoutMs: 60_000,
    });
    expect(result.code, describeRun('gen-commands-doc', result)).toBe(0);
    const generated = result.stdout;
    // The walk found the whole tree: every group and a few leaves of it.
    for (const heading of [
      '## ordercli orders import',
      '## ordercli refs packagings list',
      '## ordercli config set',
    ])
      expect(generated).toContain(`${heading}\n`);
    expect(generated).not.toContain('## ordercli help');

    const committed = readFileSync(join(ROOT, 'docs/commands.md'), 'utf8');
    if (committed !== generated) {
      const a = committed.split('\n');
      const b = generated.split('\n');
      const line = a.findIndex((text, i) => text !== b[i]);
      const at = line === -1 ? a.length : line;
      expect.fail(
        `docs/commands.md is out of date: run npm run docs\n` +
          `first difference at line ${at + 1}:\n  committed: ${JSON.stringify(a[at])}\n  generated: ${JSON.stringify(b[at])}`,
      );
    }
  }, 60_000);
});
