/**
 * test/ mirrors src/: a test file is `test/<module>.test.ts` or `test/<module>.<behaviour>.test.ts`,
 * where `src/<module>.ts` is the module whose behaviour it exercises (`src/commands/orders/import.ts`
 * → `test/commands/orders/import.never-twice.test.ts`), so that a module's tests are found by its
 * name. Outside the rule: test/release/ (the repository and the package as a whole), test/support/
 * and test/fixtures/.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, posix, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

/** The folders of test/ whose files are not tests of one module. */
const OUTSIDE_THE_RULE = ['release/', 'support/', 'fixtures/'];

/** The src module a test file (relative to test/, with `/`) belongs to: `<dir>/<name up to the first dot>.ts`. */
function moduleOf(testFile: string): string {
  const dir = posix.dirname(testFile);
  const name = posix.basename(testFile).split('.')[0] ?? '';
  return dir === '.' ? `${name}.ts` : `${dir}/${name}.ts`;
}

/** The test files (relative to test/) that name no module of src/, each with the module it names. */
function misplaced(testFiles: string[], moduleExists: (module: string) => boolean): string[] {
  return testFiles
    .filter((file) => file.endsWith('.test.ts'))
    .filter((file) => !OUTSIDE_THE_RULE.some((folder) => file.startsWith(folder)))
    .filter((file) => !moduleExists(moduleOf(file)))
    .map((file) => `test/${file} (no src/${moduleOf(file)})`)
    .sort();
}

function testFilesOfTheRepository(): string[] {
  return readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .map((file) => file.split(sep).join('/'))
    .filter((file) => !file.split('/').some((part) => part.startsWith('.')));
}

describe('test/ mirrors src/', () => {
  it('names every test file outside test/release/ after the src module it exercises', () => {
    const wrong = misplaced(testFilesOfTheRepository(), (module) => existsSync(join(ROOT, 'src', module)));
    expect(
      wrong,
      'name a test test/<path of a src module without .ts>.test.ts, or .<behaviour>.test.ts after it ' +
        '(test/commands/orders/import.never-twice.test.ts); a test of the repository or the package ' +
        'as a whole goes in test/release/',
    ).toEqual([]);
  });

  it('judges test files as intended (the checker itself)', () => {
    const modules = new Set(['commands/orders/import.ts', 'io/file-lock.ts', 'version.ts']);
    const files = [
      'commands/orders/import.test.ts',
      'commands/orders/import.never-twice.test.ts',
      'io/file-lock.namespace.test.ts',
      'version.test.ts',
      'release/pack.test.ts',
      'support/cli.ts',
      'fixtures/upgrade-0.1/notes.test.ts',
      'commands/orders/never-twice.test.ts',
      'io/file-lock-namespace.test.ts',
      'commands/orders.test.ts',
      'smoke.test.ts',
    ];
    expect(misplaced(files, (module) => modules.has(module))).toEqual([
      'test/commands/orders.test.ts (no src/commands/orders.ts)',
      'test/commands/orders/never-twice.test.ts (no src/commands/orders/never-twice.ts)',
      'test/io/file-lock-namespace.test.ts (no src/io/file-lock-namespace.ts)',
      'test/smoke.test.ts (no src/smoke.ts)',
    ]);
  });
});
