#!/usr/bin/env node
// The order ledger at scale: a ledger of --entries records (default 5,000,000: for each of
// --entries/2 orders a `claim` then its `created`, as this release writes them, or with
// --record-format legacy the `sending` / `created` without token of the release before claims)
// written straight into its shard files, then
//  1. `orders create` against the sandbox with that ledger, refused because its externalId is
//     known and accepted because it is new, beside the same accepted create with an empty ledger
//     and today's start-up (`node -e 0`, an API command as in bench/startup.mjs, and
//     `orders create` of an order without externalId, which never opens the ledger): medians of
//     interleaved runs;
//  2. the ledger check of a --rows (default 1,000,000) order import: `orders import --dry-run`
//     reads the shards of every externalId of the input once; its time and peak RSS (target
//     < 150 MB) beside the same dry run with an empty ledger;
//  3. the same input imported for real, every order already created per the ledger (by another
//     input), so each one's claim is refused and nothing is sent: time and peak RSS (target
//     < 200 MB; the release before claims peaked at 762 MB).
// Peak RSS is the child's own process.resourceUsage().maxRSS (written by a --import hook at exit).
// Not a test: run it by hand on a quiet machine. Everything stays on 127.0.0.1.
//
// Usage: npm run build && node bench/ledger.mjs [--entries 5000000] [--runs 15] [--rows 1000000]
//          [--record-format claims|legacy] [--only create,dry-run,real] [--cpu-prof DIR]
//          [--node-flags='--max-old-space-size=128'] (with '=': its value starts with a dash)
// --cpu-prof DIR: the dry runs and the real import write a V8 CPU profile each into DIR.
// --node-flags: more node options for the dry runs and the real import (space-separated), e.g.
// a heap limit, to tell the live memory from the garbage a lazy collector leaves in the peak.
// Quick run: node bench/ledger.mjs --entries 400000 --rows 100000 --runs 7
// BENCH_KEEP=1 keeps the work folder (ledger, input, config) for experiments by hand.
// BENCH_BIN=<another build's bin/ordercli.js> runs that build (and its dist/index.js's sandbox),
// e.g. a copy of bin/ and dist/ taken so that a rebuild during a long run changes nothing.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
const bin = process.env.BENCH_BIN ?? join(root, 'bin/ordercli.js');
const dist = join(dirname(bin), '../dist');
const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '5000000' },
    runs: { type: 'string', default: '15' },
    rows: { type: 'string', default: '1000000' },
    'record-format': { type: 'string', default: 'claims' },
    only: { type: 'string', default: 'create,dry-run,real' },
    'cpu-prof': { type: 'string' },
    'node-flags': { type: 'string', default: '' },
  },
});
const ENTRIES = Number(values.entries);
const RUNS = Number(values.runs);
const ROWS = Number(values.rows);
const FORMAT = values['record-format'];
const ONLY = new Set(values.only.split(','));
const ORDERS_IN_LEDGER = Math.floor(ENTRIES / 2);
const PROFILE = [
  ...(values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof']] : []),
  ...values['node-flags'].split(' ').filter((flag) => flag !== ''),
];
const DRY_RUN_BOUND_MB = 150;
const REAL_IMPORT_BOUND_MB = 200;
if (!['claims', 'legacy'].includes(FORMAT))
  throw new Error(`--record-format must be claims or legacy, not ${FORMAT}`);
if (ROWS > ORDERS_IN_LEDGER)
  throw new Error(
    `--rows ${ROWS} is more than the ${ORDERS_IN_LEDGER} orders of the ledger: raise --entries`,
  );

if (!existsSync(join(dist, 'cli/main.js'))) throw new Error('run `npm run build` first');
const { startSandbox, ledgerFolder, shardOf, shardFileName, LEDGER_SHARDS } = await import(
  join(dist, 'index.js')
);
const sandbox = await startSandbox({ port: 0, quiet: true, logLimit: 100 });
const work = mkdtempSync(join(tmpdir(), 'ordercli-bench-ledger-'));
const configDir = join(work, 'config');
/** A config folder whose ledger stays empty but for the few orders its creates add. */
const emptyCreateConfigDir = join(work, 'empty-create-config');
/** A config folder with no ledger at all, for the dry run. */
const emptyConfigDir = join(work, 'empty-config');
// The ledger is gigabytes: removed on Ctrl-C too.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
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
    const child = spawn(process.execPath, usage ? [...PROFILE, '--import', USAGE_HOOK, ...args] : args, {
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
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const mb = (usage) => usage.maxRSS / 1024;
const cpu = (usage) => (usage.userCPUTime + usage.systemCPUTime) / 1e6;

/** The claim owners of the bulk records: one process per input file, one for `orders create`. */
const BOOT = '3f0c2a9e-5d1b-4c7e-9a8f-2b6d4e1c0a57';
const owners = Array.from({ length: 51 }, (_, i) =>
  JSON.stringify({
    host: `ci-runner-${i % 4}`,
    boot: BOOT,
    pidns: 'pid:[4026531836]',
    pid: 20_000 + i,
    start: String(1_000_000 + i * 977),
    id: randomBytes(8).toString('hex'),
  }),
);

/** The two lines of order n, as this release (`claims`) or the release before claims writes them. */
function recordsOf(n, token) {
  const externalId = id(n);
  const at = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  const done = new Date(Date.UTC(2026, 0, 1) + n * 1000 + 87).toISOString();
  const byCreate = n % 3 === 0;
  const source = byCreate
    ? '"by":"orders create","input":"/home/ops/orders/order.json"'
    : `"by":"orders import","input":"/data/export-${n % 50}.csv","journal":"/data/export-${n % 50}.csv.journal.ndjson"`;
  const code = `"httpStatus":201,"id":${n},"code":"SO-2026-${String(n).padStart(6, '0')}"`;
  if (FORMAT === 'legacy') {
    return (
      `{"externalId":"${externalId}","event":"sending","at":"${at}",${source},"bodyHash":"Xq2Yb0FQnK8r6V5s0m3LcA"}\n` +
      `{"externalId":"${externalId}","event":"created","at":"${done}",${source},${code}}\n`
    );
  }
  // Key order as JSON.stringify writes a LocalLedger claim and its outcome (which repeats the
  // claim's bodyHash and line, so that the outcome alone says what the order became).
  const owner = owners[byCreate ? 50 : n % 50];
  const line = byCreate ? '' : `,"line":${(n % 20_000) + 2}`;
  const hash = '"bodyHash":"Xq2Yb0FQnK8r6V5s0m3LcA"';
  return (
    `{"externalId":"${externalId}","event":"claim","at":"${at}","token":"${token}",${source},"owner":${owner},${hash}${line}}\n` +
    `{"externalId":"${externalId}","at":"${done}","token":"${token}",${source},"event":"created",${code},${hash}${line}}\n`
  );
}

const lines = [];
const results = {
  node: process.version,
  entries: ENTRIES,
  rows: ROWS,
  runs: RUNS,
  format: FORMAT,
  nodeFlags: PROFILE,
};
let ok = true;
try {
  // 1. The ledger, written directly: shard by shard, a batch of orders at a time.
  const folder = ledgerFolder(join(configDir, 'ledger'), sandbox.url);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'service.json'), `${JSON.stringify({ baseUrl: sandbox.url })}\n`);
  const started = performance.now();
  const BATCH = 250_000;
  let bytes = 0;
  for (let first = 1; first <= ORDERS_IN_LEDGER; first += BATCH) {
    // A turn of the event loop between batches, so that a Ctrl-C is seen.
    await new Promise((resolve) => setImmediate(resolve));
    const shards = Array.from({ length: LEDGER_SHARDS }, () => []);
    const last = Math.min(ORDERS_IN_LEDGER, first + BATCH - 1);
    const tokens = randomBytes(9 * (last - first + 1));
    for (let n = first; n <= last; n++) {
      const at = 9 * (n - first);
      const token = tokens.toString('base64url', at, at + 9);
      shards[shardOf(id(n))].push(recordsOf(n, token));
    }
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (shards[shard].length === 0) continue;
      const text = shards[shard].join('');
      bytes += Buffer.byteLength(text);
      appendFileSync(join(folder, shardFileName(shard)), text);
    }
  }
  results.ledgerBytes = bytes;
  lines.push(
    `ledger: ${ENTRIES.toLocaleString('en-US')} entries (${ORDERS_IN_LEDGER.toLocaleString('en-US')} orders, ${FORMAT === 'claims' ? 'claim + created with token' : 'legacy sending + created'}) in ${LEDGER_SHARDS} shards, ${(bytes / 1e6).toFixed(0)} MB, written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const api = ['--base-url', sandbox.url, '--token', sandbox.tokens.partner];

  // 2. `orders create` against the sandbox.
  if (ONLY.has('create')) {
    const order = JSON.parse(readFileSync(join(root, 'fixtures/orders/order.json'), 'utf8'));
    const { externalId: _none, ...withoutId } = order;
    writeFileSync(join(work, 'no-id.json'), JSON.stringify(withoutId));
    writeFileSync(
      join(work, 'known.json'),
      JSON.stringify({ ...order, externalId: id(ORDERS_IN_LEDGER - 7) }),
    );
    let fresh = 0;
    const newOrder = () => {
      fresh++;
      writeFileSync(join(work, 'new.json'), JSON.stringify({ ...order, externalId: `NEW-${fresh}` }));
      return [bin, ...api, 'orders', 'create', '--file', 'new.json'];
    };
    const cases = [
      ['node -e 0', () => ['-e', '0']],
      ['ordercli get packaging_references 401', () => [bin, ...api, 'get', 'packaging_references', '401']],
      [
        'orders create, no externalId (no ledger)',
        () => [bin, ...api, 'orders', 'create', '--file', 'no-id.json'],
      ],
      ['orders create, new: accepted, empty ledger', newOrder, 0, emptyCreateConfigDir],
      ['orders create, new: accepted, big ledger', newOrder],
      [
        'orders create, known: refused (exit 2), big',
        () => [bin, ...api, 'orders', 'create', '--file', 'known.json'],
        2,
      ],
    ];
    const samples = cases.map(() => []);
    for (let round = -2; round < RUNS; round++) {
      for (const [index, [, args, expect, dir]] of cases.entries()) {
        const { ms } = await run(args(), { expect: expect ?? 0, configDir: dir ?? configDir });
        if (round >= 0) samples[index].push(ms);
      }
      if (sandbox.orders().length > 500) sandbox.reset();
    }
    const base = median(samples[0]);
    const empty = median(samples[3]);
    lines.push(`orders create with that ledger: ${RUNS} interleaved runs each, medians (load ${load()})`);
    lines.push(
      `${'command'.padEnd(46)}${'median ms'.padStart(10)}${'× node'.padStart(8)}${'× create, empty ledger'.padStart(24)}`,
    );
    results.create = {};
    for (const [index, [name]] of cases.entries()) {
      const m = median(samples[index]);
      results.create[name] = { medianMs: m, samples: samples[index] };
      lines.push(
        `${name.padEnd(46)}${m.toFixed(1).padStart(10)}${(m / base).toFixed(2).padStart(8)}${(m / empty).toFixed(2).padStart(24)}`,
      );
    }
  }

  // 3. The ledger check of a large import: a dry run reads every shard its ids fall in, once.
  if (ONLY.has('dry-run') || ONLY.has('real')) {
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
    const rows = ROWS.toLocaleString('en-US');
    if (ONLY.has('dry-run')) {
      const dry = [...api, 'orders', 'import', csv, '--dry-run'];
      mkdirSync(emptyConfigDir, { recursive: true });
      const without = await run([bin, ...dry], { configDir: emptyConfigDir, usage: true });
      const loadEmpty = load();
      const withLedger = await run([bin, ...dry], { usage: true });
      const summary = withLedger.stderr.trim().split('\n');
      if (!summary.some((line) => line.includes('order ledger')))
        throw new Error(`no ledger line: ${withLedger.stderr}`);
      const within = mb(withLedger.usage) < DRY_RUN_BOUND_MB;
      ok &&= within;
      results.dryRun = {
        empty: { seconds: without.ms / 1000, cpuSeconds: cpu(without.usage), peakRssMb: mb(without.usage) },
        ledger: {
          seconds: withLedger.ms / 1000,
          cpuSeconds: cpu(withLedger.usage),
          peakRssMb: mb(withLedger.usage),
        },
      };
      lines.push(
        `import --dry-run of ${rows} orders, empty ledger: ${(without.ms / 1000).toFixed(1)} s, ${cpu(without.usage).toFixed(1)} CPU s, peak RSS ${mb(without.usage).toFixed(0)} MB (load ${loadEmpty})`,
        `import --dry-run of ${rows} orders, ${ENTRIES.toLocaleString('en-US')}-entry ledger: ${(withLedger.ms / 1000).toFixed(1)} s (the check: ${((withLedger.ms - without.ms) / 1000).toFixed(1)} s more), ${cpu(withLedger.usage).toFixed(1)} CPU s, peak RSS ${mb(withLedger.usage).toFixed(0)} MB (target < ${DRY_RUN_BOUND_MB} MB) ${within ? 'ok' : 'OVER'} (load ${load()})`,
        `  ${summary.join('\n  ')}`,
      );
    }
    if (ONLY.has('real')) {
      // The same input imported for real: the ledger says another input created every order, so
      // every claim is refused and every order skipped, unsent.
      sandbox.reset();
      const real = await run([bin, ...api, 'orders', 'import', csv], { usage: true });
      const skipped = [...real.stderr.matchAll(/skipped\s+([\d,]+)/g)].pop()?.[1];
      const sent = sandbox.orders().length;
      const realWithin = mb(real.usage) < REAL_IMPORT_BOUND_MB;
      ok &&= realWithin && sent === 0;
      results.realImport = {
        seconds: real.ms / 1000,
        cpuSeconds: cpu(real.usage),
        peakRssMb: mb(real.usage),
        skipped,
        sent,
        summary: real.stderr.trim(),
      };
      lines.push(
        `import of the same ${rows} orders, every one created by another input per the ledger: ${(real.ms / 1000).toFixed(1)} s, ${cpu(real.usage).toFixed(1)} CPU s, ${skipped} skipped, ${sent} sent, peak RSS ${mb(real.usage).toFixed(0)} MB (target < ${REAL_IMPORT_BOUND_MB} MB; the release before claims: 762 MB) ${realWithin ? 'ok' : 'OVER'} (load ${load()})`,
        `  ${real.stderr.trim().split('\n').slice(-8).join('\n  ')}`,
      );
    }
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  await sandbox.close();
  if (process.env.BENCH_KEEP) console.log(`kept: ${work} (BENCH_KEEP)`);
  else rmSync(work, { recursive: true, force: true });
}
results.at = new Date().toISOString();
results.loadAverageAfter = load();
console.log(
  `bench/ledger (node ${process.version}${PROFILE.length > 0 ? ` ${PROFILE.join(' ')}` : ''}, ${bin}, load ${results.loadAverageAfter})`,
);
for (const line of lines) console.log(line);
mkdirSync(join(root, 'bench/results'), { recursive: true });
const out = join(root, 'bench/results', `ledger-${results.at.replace(/[:.]/g, '-')}.json`);
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`results: ${out}`);
