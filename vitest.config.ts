import { defineConfig } from 'vitest/config';
import { SMOKE_TESTS } from './test/smoke.js';

/** ORDERCLI_TEST_SET: `all` (the default) or `smoke`, the files of test/smoke.ts. */
function testFiles(set = process.env.ORDERCLI_TEST_SET ?? 'all'): string[] {
  if (set === 'all' || set === '') return ['test/**/*.test.ts'];
  if (set === 'smoke') return SMOKE_TESTS;
  throw new Error(`ORDERCLI_TEST_SET must be all or smoke, not ${JSON.stringify(set)}.`);
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
  },
});
