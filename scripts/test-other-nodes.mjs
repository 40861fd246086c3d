#!/usr/bin/env node
// The smoke set of test/smoke.ts (the built binary end to end, and the parts that lean on the
// platform: undici, Node's HTTP parser, readline, file locks, signals) again under Node 22 and
// Node 24, the `node` package run by npx (from the npm cache when it is there, otherwise fetched
// once from the npm registry, like any install step). The tests spawn `process.execPath`, so the
// binary under test runs on that Node too. Part of `npm test`, hence of CI. The whole suite runs
// under Node 20; what differs between Nodes is the platform, which the smoke set exercises.
//
//   node scripts/test-other-nodes.mjs            # both
//   node scripts/test-other-nodes.mjs 24         # one
//   ORDERCLI_SKIP_OTHER_NODES=1 npm test         # skip them (offline work); says so loudly
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['22', '24'];

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
  console.log(`\n== end-to-end tests under Node ${major}: the smoke set of test/smoke.ts`);
  const run = spawnSync(npx, ['-y', `node@${major}`, join(root, 'node_modules/vitest/vitest.mjs'), 'run'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NO_COLOR: '1', ORDERCLI_TEST_SET: 'smoke' },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (run.status === 0) {
    console.log(`== Node ${major}: passed (${seconds} s)`);
  } else {
    failed++;
    console.log(`== Node ${major}: FAILED (exit ${run.status ?? run.signal}, ${seconds} s)`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
