#!/usr/bin/env node
// kill -9 torture of `orders import` (the built binary): per round, import 300 orders from a
// fresh input and SIGKILL the process at a random moment, one to three times; then run it to the
// end; then once more with --retry-unknown. Checked at the sandbox after each round:
//   - before --retry-unknown, no externalId exists twice;
//   - every externalId missing at the sandbox was reported `unknown`;
//   - after --retry-unknown none is missing, and only `unknown` ones can exist twice.
// Usage: npm run build && node bench/kill9.mjs [rounds=20] [orders=300]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/ordercli.js');
const rounds = Number(process.argv[2] ?? 20);
const count = Number(process.argv[3] ?? 300);

const { startSandbox } = await import(join(root, 'dist/index.js'));
const sandbox = await startSandbox({
  port: 0,
  quiet: true,
  latencyMs: 20,
  validationDelayMs: 10,
  logLimit: 10_000,
});
const configDir = mkdtempSync(join(tmpdir(), 'ordercli-kill9-config-'));
const env = {
  ...process.env,
  ORDERCLI_CONFIG_DIR: configDir,
  ORDERCLI_BASE_URL: sandbox.url,
  ORDERCLI_TOKEN: sandbox.tokens.partner,
};
for (const key of ['ORDERCLI_PROFILE', 'ORDERCLI_AUTH_HEADER', 'ORDERCLI_DEBUG', 'CI']) delete env[key];

function order(i, prefix) {
  return {
    externalId: `${prefix}-${String(i).padStart(5, '0')}`,
    externalReference: `PO-${i}`,
    contact: { internalReferenceId: 301 + (i % 8) },
    customer: { name: `Client ${i}` },
    items: [{ internalReferenceId: 401 + (i % 12), orderedQuantity: 1 + (i % 5) }],
  };
}

/** Runs the binary; SIGKILLs it after `killAfterMs` if given. Resolves to { code, signal, stderr }. */
function run(args, killAfterMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'orders', 'import', ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    const timer =
      killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

function createdCounts() {
  const counts = new Map();
  for (const stored of sandbox.orders())
    counts.set(stored.externalId, (counts.get(stored.externalId) ?? 0) + 1);
  return counts;
}

const failures = [];
let passed = 0;
const started = Date.now();
for (let round = 1; round <= rounds; round++) {
  sandbox.reset();
  const dir = mkdtempSync(join(tmpdir(), 'ordercli-kill9-'));
  const input = join(dir, 'orders.ndjson');
  writeFileSync(
    input,
    `${Array.from({ length: count }, (_, i) => JSON.stringify(order(i + 1, `R${round}`))).join('\n')}\n`,
  );
  const problems = [];
  const moments = [];
  let killedMidway = 0;
  const kills = 1 + Math.floor(Math.random() * 3);
  for (let k = 0; k < kills; k++) {
    const moment = 100 + Math.floor(Math.random() * 1100);
    moments.push(moment);
    const result = await run([input, '--concurrency', '8'], moment);
    if (result.signal === 'SIGKILL') killedMidway++;
  }
  const createdByKilled = sandbox.orders().length;

  const report = join(dir, 'report.ndjson');
  const full = await run([input, '--concurrency', '8', '--report', report]);
  if (full.code !== 0 && full.code !== 4)
    problems.push(`full run exited ${full.code}: ${full.stderr.trim()}`);
  const status = new Map(
    readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .map((line) => [line.externalId, line.status]),
  );
  const created = createdCounts();
  for (const [id, n] of created) if (n > 1) problems.push(`${id} created ${n} times before --retry-unknown`);
  let unknown = 0;
  for (const [id, s] of status) {
    if (s === 'unknown') unknown++;
    if (!created.has(id) && s !== 'unknown')
      problems.push(`${id} is missing at the service but was reported ${s}`);
  }
  if (status.size !== count) problems.push(`the report has ${status.size} lines, not ${count}`);

  const retried = await run([input, '--concurrency', '8', '--retry-unknown']);
  if (retried.code !== 0) problems.push(`--retry-unknown exited ${retried.code}: ${retried.stderr.trim()}`);
  const after = createdCounts();
  if (after.size !== count) problems.push(`${count - after.size} orders missing after --retry-unknown`);
  let doubled = 0;
  for (const [id, n] of after) {
    if (n > 1) {
      doubled++;
      if (status.get(id) !== 'unknown') problems.push(`${id} created ${n} times, and it was not unknown`);
    }
  }

  const line = `round ${String(round).padStart(2)}: killed at ${moments.join(', ')} ms (${killedMidway} mid-run), ${createdByKilled} created before the full run, ${unknown} unknown, ${doubled} of them had been created (re-sent by --retry-unknown)`;
  if (problems.length === 0) {
    passed++;
    console.log(`ok   ${line}`);
    rmSync(dir, { recursive: true, force: true });
  } else {
    failures.push(round);
    console.log(`FAIL ${line}\n     ${problems.slice(0, 10).join('\n     ')}\n     files kept in ${dir}`);
  }
}
await sandbox.close();
rmSync(configDir, { recursive: true, force: true });
console.log(
  `bench/kill9: ${passed}/${rounds} rounds passed${failures.length ? ` (failed: ${failures.join(', ')})` : ' in a row'}, ${count} orders each, ${((Date.now() - started) / 1000).toFixed(0)} s (node ${process.version})`,
);
process.exitCode = failures.length === 0 ? 0 : 1;
