// `npm install` in a fresh clone leaves `git status` clean under every npm a supported Node ships:
// npm 10 (Node 20, 22) drops the `libc` fields of optional native packages from package-lock.json,
// npm 11 (Node 24) writes them for a new lockfile but keeps a lockfile without them as it is. So
// the committed lockfile is npm 10's form: without `libc`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

describe('package-lock.json', () => {
  it('holds no libc field, so npm 10 and npm 11 both leave it unchanged', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      lockfileVersion: number;
      packages: Record<string, { libc?: unknown }>;
    };
    expect(lock.lockfileVersion).toBe(3);
    const withLibc = Object.entries(lock.packages)
      .filter(([, entry]) => entry.libc !== undefined)
      .map(([name]) => name);
    expect(
      withLibc,
      'rewrite the lockfile as npm 10 writes it: npx -y npm@10 install --package-lock-only --ignore-scripts',
    ).toEqual([]);
  });
});
