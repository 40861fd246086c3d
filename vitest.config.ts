import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { SMOKE_TESTS } from './test/smoke.js';

/** ORDERCLI_TEST_SET: `all` (the default) or `smoke`, the files of test/smoke.ts. */
function testFiles(set = process.env.ORDERCLI_TEST_SET ?? 'all'): string[] {
  if (set === 'all' || set === '') return ['test/**/*.test.ts'];
  if (set === 'smoke') return SMOKE_TESTS;
  throw new Error(`ORDERCLI_TEST_SET must be all or smoke, not ${JSON.stringify(set)}.`);
}

/**
 * The longest files (a fresh clone and its npm test, npm pack and installs, races of many processes),
 * started first so that neither worker is left running one of them alone at the end. Vitest
 * otherwise starts the longest by the durations it cached in node_modules/.vite, and without them
 * (a fresh checkout, as in CI) the largest files, which these are not.
 */
const LONGEST_FIRST = [
  'test/release/fresh-clone.test.ts',
  'test/release/pack.test.ts',
  'test/commands/orders/import.never-twice.test.ts',
  'test/release/readme-commands.test.ts',
  'test/release/ci-recipes.test.ts',
  'test/release/docs-examples.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  plugins: [
    {
      name: 'html-as-text',
      enforce: 'pre',
      transform(code, id) {
        if (id.endsWith('.html')) return { code: `export default ${JSON.stringify(code)};`, map: null };
      },
    },
  ],
  test: {
    include: testFiles(),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits for something to happen (a page showing "Copied."); its default bound of 1 s
    // failed the browser test on a loaded machine, where a click and its answer can take longer.
    expect: { poll: { timeout: 10_000 } },
    // Tests start real servers and child processes; two cores here.
    pool: 'forks',
    maxWorkers: 2,
    // Each worker runs its files one after another in one process, loading src/ and the libraries
    // once rather than once per file: 182 s instead of 236 s for the suite here (docs/performance.md).
    // Nothing a file does outlives it: signal handlers and conf's are removed when a command ends,
    // tests set their environment per run (testEnv), and the one module mock (verify.test.ts)
    // loads its subject again after it.
    isolate: false,
    sequence: { sequencer: LongestFirst },
  },
});
