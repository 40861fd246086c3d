#!/usr/bin/env node
// The kill -9 torture test, many rounds in a row: test/import/send/submit.kill9.test.ts (the one
// definition of the checks) run by vitest with KILL9_ITERATIONS rounds, a line per round. Per
// round, 300 orders are imported by the built binary, which is SIGKILLed at random moments, one to
// three times; then a full run, then --retry-unknown. Checked at the sandbox each round:
//   - before --retry-unknown, no externalId exists twice;
//   - every externalId missing at the sandbox was reported `unknown`;
//   - after --retry-unknown none is missing, and only `unknown` ones can exist twice.
// Usage: npm run build && node bench/kill9.mjs [rounds=20]
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 20);
const started = Date.now();
const run = spawnSync(
  process.execPath,
  [join(root, 'node_modules/vitest/vitest.mjs'), 'run', 'test/import/send/submit.kill9.test.ts'],
  { cwd: root, stdio: 'inherit', env: { ...process.env, KILL9_ITERATIONS: String(rounds) } },
);
const seconds = ((Date.now() - started) / 1000).toFixed(0);
console.log(
  run.status === 0
    ? `bench/kill9: ${rounds}/${rounds} rounds passed in a row, 300 orders each, ${seconds} s (node ${process.version})`
    : `bench/kill9: FAILED (see the round above), ${seconds} s (node ${process.version})`,
);
process.exitCode = run.status === 0 ? 0 : 1;
