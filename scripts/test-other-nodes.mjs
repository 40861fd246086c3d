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
import { spawn } from 'node:child_process';
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

/**
 * Runs the smoke set under one Node; resolves with its output and verdict line. The Nodes run at
 * the same time (most of a smoke run waits on child processes and servers, so two share the two
 * cores well); each one's output is printed whole once it ends, so the two never interleave.
 */
function runUnder(major) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npx, ['-y', `node@${major}`, join(root, 'node_modules/vitest/vitest.mjs'), 'run'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', ORDERCLI_TEST_SET: 'smoke' },
    });
    let output = `\n== end-to-end tests under Node ${major}: the smoke set of test/smoke.ts\n`;
    const keep = (chunk) => {
      output += chunk;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const finish = (status) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(0);
      const passed = status === 0;
      output += passed
        ? `== Node ${major}: passed (${seconds} s)\n`
        : `== Node ${major}: FAILED (exit ${status}, ${seconds} s)\n`;
      resolve({ passed, output });
    };
    child.on('error', (error) => {
      output += `cannot start ${npx} node@${major}: ${error.message}\n`;
      finish('not started');
    });
    child.on('close', (code, signal) => finish(code ?? signal));
  });
}

const runs = await Promise.all(majors.map(runUnder));
for (const run of runs) process.stdout.write(run.output);
process.exitCode = runs.every((run) => run.passed) ? 0 : 1;
