/**
 * The built package is readable by every user, like any package's files: installed by root (the
 * build runs at `npm install`), it must run for another account. The build stages dist/ in a
 * mkdtemp folder, which only its owner may enter, before it swaps it into place; a build that
 * changes nothing swaps nothing.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

describe('dist/', () => {
  it('every folder may be entered and every file read by other users', () => {
    const closed: string[] = [];
    const visit = (path: string): void => {
      const mode = statSync(path).mode & 0o777;
      const isDir = statSync(path).isDirectory();
      if ((mode & (isDir ? 0o005 : 0o004)) !== (isDir ? 0o005 : 0o004))
        closed.push(`${relative(ROOT, path) || '.'} ${mode.toString(8)}`);
      if (isDir) for (const name of readdirSync(path)) visit(join(path, name));
    };
    visit(join(ROOT, 'dist'));
    expect(closed).toEqual([]);
  });

  it('a build that changes nothing leaves dist/ in place (a swap would leave no dist/ for a moment)', () => {
    // Tests rebuild (npm pack runs prepare) while others run the binary from dist/.
    const before = statSync(join(ROOT, 'dist')).ino;
    const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    expect(statSync(join(ROOT, 'dist')).ino).toBe(before);
    expect(readdirSync(ROOT).filter((name) => /^\.dist-|^dist-old-/.test(name))).toEqual([]);
  });
});
