import { defineConfig } from 'vitest/config';

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
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests start real servers and child processes; two cores here.
    pool: 'forks',
    maxWorkers: 2,
  },
});
