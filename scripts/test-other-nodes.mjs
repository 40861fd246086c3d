#!/usr/bin/env node
// The end-to-end part of the test suite (everything that runs the real binary against a real
// sandbox: test/cli, test/commands, test/api, test/config, test/webhooks) again under Node 22 and
// Node 24, the `node` package run by npx (from the npm cache when it is there, otherwise fetched
// once from the npm registry, like any install step). The tests spawn `process.execPath`, so the
// binary under test runs on that Node too. Part of `npm test`, hence of CI.
//
//   node scripts/test-other-nodes.mjs            # both
//   node scripts/test-other-nodes.mjs 24         # one
//   ORDERCLI_SKIP_OTHER_NODES=1 npm test         # skip them (offline work); says so loudly
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['22', '24'];
const SUITES = ['test/cli', 'test/commands', 'test/api', 'test/config', 'test/webhooks'];

if (process.env.ORDERCLI_SKIP_OTHER_NODES) {
  console.log(
    `SKIPPED: the end-to-end tests under Node ${majors.join(' and ')} (ORDERCLI_SKIP_OTHER_NODES is set).`,
  );
  process.exit(0);
}

const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
let failed = 0;
for (const major of majors) {
  const started = Date.now();
  console.log(`\n== end-to-end tests under Node ${major}: ${SUITES.join(' ')}`);
  const run = spawnSync(
    npx,
    ['-y', `node@${major}`, join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...SUITES],
    { cwd: root, stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } },
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (run.status === 0) {
    console.log(`== Node ${major}: passed (${seconds} s)`);
  } else {
    failed++;
    console.log(`== Node ${major}: FAILED (exit ${run.status ?? run.signal}, ${seconds} s)`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
