#!/usr/bin/env node
// The order ledger at scale: a ledger of --entries records (default 5,000,000: half `sending`,
// half `created`, for --entries/2 orders) written straight into its shard files, then
//  1. `orders create` against the sandbox, refused because its externalId is known and accepted
//     because it is new, beside today's start-up (`node -e 0`, an API command as in
//     bench/startup.mjs, and `orders create` of an order without externalId, which never opens
//     the ledger): medians of interleaved runs;
//  2. the ledger check of a --rows (default 1,000,000) order import: `orders import --dry-run`
//     reads the shards of every externalId of the input once, one at a time; its time and peak
//     RSS beside the same dry run with an empty ledger; then the same input imported for real,
//     every order skipped because the ledger says another input created it.
// Not a test: run it by hand on a quiet machine. Everything stays on 127.0.0.1.
//
// Usage: npm run build && node bench/ledger.mjs [--entries 5000000] [--runs 15] [--rows 1000000]
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/ordercli.js');
const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '5000000' },
    runs: { type: 'string', default: '15' },
    rows: { type: 'string', default: '1000000' },
  },
});
const ENTRIES = Number(values.entries);
const RUNS = Number(values.runs);
const ROWS = Number(values.rows);
const ORDERS_IN_LEDGER = Math.floor(ENTRIES / 2);
const MEMORY_BOUND_MB = 150;

if (!existsSync(join(root, 'dist/cli/main.js'))) throw new Error('run `npm run build` first');
const { startSandbox, ledgerFolder, shardOf, shardFileName, LEDGER_SHARDS } = await import(
  join(root, 'dist/index.js')
);
const sandbox = await startSandbox({ port: 0, quiet: true, logLimit: 100 });
const work = mkdtempSync(join(tmpdir(), 'ordercli-bench-ledger-'));
const configDir = join(work, 'config');
const emptyConfigDir = join(work, 'empty-config');
const env = { ...process.env, ORDERCLI_CONFIG_DIR: configDir };
for (const key of Object.keys(env))
  if (key.startsWith('ORDERCLI_') && key !== 'ORDERCLI_CONFIG_DIR') delete env[key];
delete env.CI;

const USAGE_HOOK = `data:text/javascript,${encodeURIComponent(
  "import{writeFileSync}from'node:fs';process.on('exit',()=>{if(process.env.BENCH_USAGE_FILE)writeFileSync(process.env.BENCH_USAGE_FILE,JSON.stringify(process.resourceUsage()))});",
)}`;

/** Runs the built CLI (or node) asynchronously: the sandbox answers in this process. */
function run(args, { expect = 0, configDir: dir = configDir, usage = false } = {}) {
  const usageFile = join(work, `usage-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, usage ? ['--import', USAGE_HOOK, ...args] : args, {
      env: { ...env, ORDERCLI_CONFIG_DIR: dir, BENCH_USAGE_FILE: usageFile },
      cwd: work,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== expect)
        return reject(new Error(`${args.join(' ')} exited ${code}, not ${expect}: ${stderr}`));
      const usage = existsSync(usageFile) ? JSON.parse(readFileSync(usageFile, 'utf8')) : undefined;
      resolve({ ms, usage, stderr });
    });
  });
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const id = (n) => `BIG-${String(n).padStart(8, '0')}`;

const lines = [];
try {
  // 1. The ledger, written directly: shard by shard, a batch of orders at a time.
  const folder = ledgerFolder(configDir, sandbox.url);
  mkdirSync(folder, { recursive: true });
  const started = performance.now();
  const BATCH = 250_000;
  let bytes = 0;
  for (let first = 1; first <= ORDERS_IN_LEDGER; first += BATCH) {
    const shards = Array.from({ length: LEDGER_SHARDS }, () => []);
    const last = Math.min(ORDERS_IN_LEDGER, first + BATCH - 1);
    for (let n = first; n <= last; n++) {
      const externalId = id(n);
      const at = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
      const source =
        n % 3 === 0
          ? '"by":"orders create","input":"/home/ops/orders/order.json"'
          : `"by":"orders import","input":"/data/export-${n % 50}.csv","journal":"/data/export-${n % 50}.csv.journal.ndjson"`;
      shards[shardOf(externalId)].push(
        `{"externalId":"${externalId}","event":"sending","at":"${at}",${source},"bodyHash":"Xq2Yb0FQnK8r6V5s0m3LcA"}\n` +
          `{"externalId":"${externalId}","event":"created","at":"${at}",${source},"httpStatus":201,"id":${n},"code":"SO-2026-${String(n).padStart(6, '0')}"}\n`,
      );
    }
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (shards[shard].length === 0) continue;
      const text = shards[shard].join('');
      bytes += Buffer.byteLength(text);
      appendFileSync(join(folder, shardFileName(shard)), text);
    }
  }
  lines.push(
    `ledger: ${ENTRIES.toLocaleString('en-US')} entries (${ORDERS_IN_LEDGER.toLocaleString('en-US')} orders) in ${LEDGER_SHARDS} shards, ${(bytes / 1e6).toFixed(0)} MB, written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  // 2. `orders create` against the sandbox.
  const order = JSON.parse(readFileSync(join(root, 'fixtures/orders/order.json'), 'utf8'));
  const { externalId: _none, ...withoutId } = order;
  writeFileSync(join(work, 'no-id.json'), JSON.stringify(withoutId));
  writeFileSync(join(work, 'known.json'), JSON.stringify({ ...order, externalId: id(ORDERS_IN_LEDGER - 7) }));
  const api = ['--base-url', sandbox.url, '--token', sandbox.tokens.partner];
  let fresh = 0;
  const cases = [
    ['node -e 0', () => ['-e', '0']],
    ['ordercli get packaging_references 401', () => [bin, ...api, 'get', 'packaging_references', '401']],
    [
      'orders create, no externalId (no ledger)',
      () => [bin, ...api, 'orders', 'create', '--file', 'no-id.json'],
    ],
    [
      'orders create, known: refused (exit 2)',
      () => [bin, ...api, 'orders', 'create', '--file', 'known.json'],
      2,
    ],
    [
      'orders create, new: accepted',
      () => {
        fresh++;
        writeFileSync(join(work, 'new.json'), JSON.stringify({ ...order, externalId: `NEW-${fresh}` }));
        return [bin, ...api, 'orders', 'create', '--file', 'new.json'];
      },
    ],
  ];
  const samples = cases.map(() => []);
  for (let round = -2; round < RUNS; round++) {
    for (const [index, [, args, expect]] of cases.entries()) {
      const { ms } = await run(args(), { expect: expect ?? 0 });
      if (round >= 0) samples[index].push(ms);
    }
    if (sandbox.orders().length > 500) sandbox.reset();
  }
  const base = median(samples[0]);
  const today = median(samples[2]);
  lines.push(`orders create with that ledger: ${RUNS} interleaved runs each, medians`);
  lines.push(
    `${'command'.padEnd(44)}${'median ms'.padStart(10)}${'× node'.padStart(8)}${'× create without ledger'.padStart(25)}`,
  );
  for (const [index, [name]] of cases.entries()) {
    const m = median(samples[index]);
    lines.push(
      `${name.padEnd(44)}${m.toFixed(1).padStart(10)}${(m / base).toFixed(2).padStart(8)}${(m / today).toFixed(2).padStart(25)}`,
    );
  }

  // 3. The ledger check of a large import: a dry run reads every shard its ids fall in, once.
  const csv = join(work, 'big.csv');
  const gen = spawnSync(
    process.execPath,
    [
      join(root, 'bench/gen-orders.mjs'),
      '--rows',
      String(ROWS),
      '--format',
      'csv',
      '--items',
      '1',
      '--prefix',
      'BIG-',
      '--out',
      csv,
    ],
    { stdio: 'inherit' },
  );
  if (gen.status !== 0) throw new Error('gen-orders failed');
  const dry = [...api, 'orders', 'import', csv, '--dry-run'];
  mkdirSync(emptyConfigDir, { recursive: true });
  const without = await run([bin, ...dry], { configDir: emptyConfigDir, usage: true });
  const withLedger = await run([bin, ...dry], { usage: true });
  const summary = withLedger.stderr.trim().split('\n');
  if (!summary.some((line) => line.includes('order ledger')))
    throw new Error(`no ledger line: ${withLedger.stderr}`);
  const mb = (usage) => usage.maxRSS / 1024;
  const within = mb(withLedger.usage) < MEMORY_BOUND_MB;
  lines.push(
    `import --dry-run of ${ROWS.toLocaleString('en-US')} orders, empty ledger: ${(without.ms / 1000).toFixed(1)} s, peak RSS ${mb(without.usage).toFixed(0)} MB`,
    `import --dry-run of ${ROWS.toLocaleString('en-US')} orders, ${ENTRIES.toLocaleString('en-US')}-entry ledger: ${(withLedger.ms / 1000).toFixed(1)} s (the check: ${((withLedger.ms - without.ms) / 1000).toFixed(1)} s more), peak RSS ${mb(withLedger.usage).toFixed(0)} MB (bound ${MEMORY_BOUND_MB} MB) ${within ? 'ok' : 'OVER'}`,
    `  ${summary.join('\n  ')}`,
  );
  // The same input imported for real: the ledger says another input created every order, so the
  // check keeps a compact record of each (for its message) and every order is skipped, unsent.
  sandbox.reset();
  const real = await run(
    [bin, ...api, 'orders', 'import', csv, '--journal', join(work, 'big.journal.ndjson')],
    {
      usage: true,
    },
  );
  const skipped = [...real.stderr.matchAll(/skipped\s+([\d,]+)/g)].pop()?.[1];
  const realWithin = mb(real.usage) < MEMORY_BOUND_MB;
  lines.push(
    `import of the same ${ROWS.toLocaleString('en-US')} orders, every one created by another input per the ledger: ${(real.ms / 1000).toFixed(1)} s, ${skipped} skipped, ${sandbox.orders().length} sent, peak RSS ${mb(real.usage).toFixed(0)} MB ${realWithin ? 'ok' : 'OVER'}`,
  );
  process.exitCode = within && realWithin ? 0 : 1;
} finally {
  await sandbox.close();
  rmSync(work, { recursive: true, force: true });
}
console.log(
  `bench/ledger (node ${process.version}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
);
for (const line of lines) console.log(line);
