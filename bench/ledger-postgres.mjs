#!/usr/bin/env node
// The PostgreSQL order ledger against the local one: `orders import` of --orders (default 10,000)
// orders against the sandbox with --latency (default 20 ms) of added latency, at each
// --concurrency (default 8 and 16), with `--ledger postgres://…` (given as ORDERCLI_LEDGER, so
// that the password is not on a command line) and with the config folder's local ledger,
// alternating runs; the rate of each (median), the PostgreSQL/local ratio (target ≥ 0.8), CPU
// seconds per 1,000 orders of the ordercli process (the server's own CPU is not in it, but it
// runs on the same cores).
//
// The server: ORDERCLI_BENCH_PG_URL (postgres://user:password@host:port/database of a role that
// may create tables; the bench truncates the ledger's tables between runs, so never name a
// ledger in use), or else a throwaway cluster made here as test/support/postgres.ts does: the
// server binaries from ORDERCLI_POSTGRES_BINDIR, `pg_config --bindir`, /usr/lib/postgresql/<v>/bin
// or initdb on PATH (apt-get install postgresql); initdb as the `postgres` user (runuser) when
// run as root; on a free port of 127.0.0.1 only, with a role and a password; durable (fsync and
// synchronous_commit on, as a fleet's server would be) unless --no-durable; removed at the end.
// Not a test: run it by hand on a quiet machine. Everything stays on 127.0.0.1.
//
// Usage: npm run build && node bench/ledger-postgres.mjs [--orders 10000] [--runs 3]
//          [--concurrency 8,16] [--latency 20] [--no-durable]
// Quick run: node bench/ledger-postgres.mjs --orders 2000 --runs 2
// BENCH_BIN=<another build's bin/ordercli.js> runs that build (and its dist/index.js's sandbox).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chownSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.BENCH_BIN ?? join(root, 'bin/ordercli.js');
const dist = join(dirname(bin), '../dist');
const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8,16' },
    latency: { type: 'string', default: '20' },
    'no-durable': { type: 'boolean', default: false },
  },
});
const ORDERS = Number(values.orders);
const RUNS = Number(values.runs);
const CONCURRENCIES = values.concurrency.split(',').map(Number);
const LATENCY_MS = Number(values.latency);
const DURABLE = !values['no-durable'];
const TARGET_RATIO = 0.8;
const WARM_UP_ORDERS = 200;

if (!existsSync(join(dist, 'cli/main.js'))) throw new Error('run `npm run build` first');
const { default: pg } = await import('pg');

// ---- A throwaway PostgreSQL cluster (the steps of test/support/postgres.ts) ----

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function findPostgresBinaries() {
  const hasServer = (dir) =>
    dir !== undefined &&
    dir !== '' &&
    ['initdb', 'pg_ctl', 'postgres', 'pg_isready'].every((name) => isExecutable(join(dir, name)));
  const candidates = [process.env.ORDERCLI_POSTGRES_BINDIR];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: 'pipe' }).trim());
  } catch {
    // No pg_config: the usual places below.
  }
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  } catch {
    // Not Debian's layout.
  }
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (folder !== '' && isExecutable(join(folder, 'initdb'))) {
      try {
        candidates.push(dirname(realpathSync(join(folder, 'initdb'))));
      } catch {
        candidates.push(folder);
      }
    }
  }
  return candidates.find(hasServer);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs a server binary, as `owner` (runuser) when given; throws with its output when it fails. */
function runAs(owner, command, args, allowFailure = false) {
  const [file, argv] =
    owner === undefined ? [command, args] : ['runuser', ['-u', owner, '--', command, ...args]];
  const result = spawnSync(file, argv, { encoding: 'utf8', stdio: 'pipe', timeout: 60_000 });
  if ((result.status !== 0 || result.error) && !allowFailure) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr}${result.stdout}`,
    );
  }
  return result.stdout;
}

/** Creates and starts a cluster with a role `bench` owning a database `ledger`; its URL and stop(). */
async function startPostgres() {
  const bindir = findPostgresBinaries();
  if (bindir === undefined)
    throw new Error(
      'no PostgreSQL server binaries (apt-get install postgresql), and no ORDERCLI_BENCH_PG_URL',
    );
  const binary = (name) => join(bindir, name);
  const owner = process.getuid?.() === 0 ? 'postgres' : undefined;
  const folder = mkdtempSync(join(tmpdir(), 'ordercli-bench-pg-'));
  const data = join(folder, 'data');
  const superPassword = randomBytes(12).toString('hex');
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const passwordFile = join(folder, 'superuser-password');
  writeFileSync(passwordFile, `${superPassword}\n`, { mode: 0o600 });
  if (owner !== undefined) {
    const uid = Number(execFileSync('id', ['-u', owner], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', owner], { encoding: 'utf8' }).trim());
    chownSync(folder, uid, gid);
    chownSync(passwordFile, uid, gid);
  }
  const superuser = owner ?? userInfo().username;
  let started = false;
  const stop = () => {
    if (started) runAs(owner, binary('pg_ctl'), ['stop', '-D', data, '-m', 'fast', '-s'], true);
    started = false;
    rmSync(folder, { recursive: true, force: true });
  };
  // Removed however the bench ends (an error, Ctrl-C).
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      stop();
      process.exit(130);
    });
  try {
    runAs(owner, binary('initdb'), [
      '-D',
      data,
      '-U',
      superuser,
      `--pwfile=${passwordFile}`,
      '--auth-local=scram-sha-256',
      '--auth-host=scram-sha-256',
      '--no-sync',
      '--no-instructions',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    const port = await freePort();
    const settings = [
      `-k ${folder}`,
      '-h 127.0.0.1',
      `-p ${port}`,
      '-c max_connections=40',
      '-c shared_buffers=64MB',
      ...(DURABLE ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    ].join(' ');
    runAs(owner, binary('pg_ctl'), [
      'start',
      '-D',
      data,
      '-W',
      '-s',
      '-l',
      join(folder, 'server.log'),
      '-o',
      settings,
    ]);
    started = true;
    const deadline = performance.now() + 30_000;
    for (;;) {
      const ready = spawnSync(binary('pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port), '-t', '1']);
      if (ready.status === 0) break;
      if (performance.now() > deadline) throw new Error(`the server on port ${port} never got ready`);
      await sleep(50);
    }
    const admin = new pg.Client({
      host: '127.0.0.1',
      port,
      user: superuser,
      password: superPassword,
      database: 'postgres',
    });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE bench LOGIN PASSWORD '${password}'`);
      await admin.query('CREATE DATABASE ledger OWNER bench');
    } finally {
      await admin.end();
    }
    const version = runAs(owner, binary('postgres'), ['--version']).trim();
    return { url: `postgres://bench:${password}@127.0.0.1:${port}/ledger`, version, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

// ---- The bench ----

const USAGE_HOOK = `data:text/javascript,${encodeURIComponent(
  "import{writeFileSync}from'node:fs';process.on('exit',()=>{if(process.env.BENCH_USAGE_FILE)writeFileSync(process.env.BENCH_USAGE_FILE,JSON.stringify(process.resourceUsage()))});",
)}`;
const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const cpuSeconds = (usage) => (usage ? (usage.userCPUTime + usage.systemCPUTime) / 1e6 : Number.NaN);

const given = process.env.ORDERCLI_BENCH_PG_URL;
const server = given
  ? { url: given, version: '(ORDERCLI_BENCH_PG_URL)', stop: () => undefined }
  : await startPostgres();
const { startSandbox } = await import(join(dist, 'index.js'));
const sandbox = await startSandbox({ port: 0, quiet: true, latencyMs: LATENCY_MS, logLimit: 1000 });
const resetSandbox = () => {
  sandbox.reset();
  sandbox.setFaults({ latencyMs: LATENCY_MS });
};
const work = mkdtempSync(join(tmpdir(), 'ordercli-bench-ledger-pg-'));
const configDir = join(work, 'config');
const env = { ...process.env, ORDERCLI_CONFIG_DIR: configDir };
for (const key of Object.keys(env))
  if (key.startsWith('ORDERCLI_') && key !== 'ORDERCLI_CONFIG_DIR') delete env[key];
delete env.CI;
const sql = new pg.Client({ connectionString: server.url });
await sql.connect();

/** Forgets what both ledgers know (the reset sandbox has none of it), keeping files and tables. */
async function forgetLedgers() {
  const local = join(configDir, 'ledger');
  if (existsSync(local)) {
    for (const service of readdirSync(local)) {
      for (const shard of readdirSync(join(local, service))) {
        if (shard.endsWith('.ndjson')) truncateSync(join(local, service, shard), 0);
      }
    }
  }
  const tables = await sql.query(
    "SELECT count(to_regclass(name))::integer AS n FROM unnest(ARRAY['ordercli_ledger','ordercli_ledger_records']) AS name",
  );
  if (tables.rows[0].n === 2) await sql.query('TRUNCATE ordercli_ledger, ordercli_ledger_records');
}

/** One import of `csv` with the local ledger or the PostgreSQL one. */
function importRun(csv, count, concurrency, ledger) {
  const usageFile = join(work, `usage-${Math.random().toString(36).slice(2)}.json`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        '--import',
        USAGE_HOOK,
        bin,
        '--base-url',
        sandbox.url,
        '--token',
        sandbox.tokens.partner,
        'orders',
        'import',
        csv,
        '--concurrency',
        String(concurrency),
        // The two ledgers are compared side by side: each is new while the other knows the service.
        '--force',
      ],
      {
        env: {
          ...env,
          BENCH_USAGE_FILE: usageFile,
          ...(ledger === 'postgres' ? { ORDERCLI_LEDGER: server.url } : {}),
        },
        cwd: work,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      const created = sandbox.orders().length;
      if (code !== 0 || created !== count)
        return reject(new Error(`${ledger} import exited ${code}, ${created} created: ${stderr}`));
      const usage = existsSync(usageFile) ? JSON.parse(readFileSync(usageFile, 'utf8')) : undefined;
      resolve({ rate: count / (wallMs / 1000), cpu: cpuSeconds(usage), rss: usage?.maxRSS });
    });
  });
}

async function ledgerRows() {
  const rows = await sql.query('SELECT status, count(*)::integer AS n FROM ordercli_ledger GROUP BY status');
  return Object.fromEntries(rows.rows.map((row) => [row.status, row.n]));
}

function generate(rows, out) {
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'bench/gen-orders.mjs'),
      '--rows',
      String(rows),
      '--format',
      'csv',
      '--items',
      '1',
      '--prefix',
      'PG-',
      '--out',
      out,
    ],
    { stdio: 'inherit' },
  );
  if (result.status !== 0) throw new Error('gen-orders failed');
  return out;
}

const lines = [];
const results = {
  node: process.version,
  postgres: server.version,
  durable: given ? undefined : DURABLE,
  orders: ORDERS,
  runs: RUNS,
  latencyMs: LATENCY_MS,
  at: new Date().toISOString(),
  concurrency: {},
};
let ok = true;
try {
  mkdirSync(configDir, { recursive: true });
  const csv = generate(ORDERS, join(work, 'orders.csv'));
  const warmUp = generate(WARM_UP_ORDERS, join(work, 'warm-up.csv'));
  // Not counted: creates the tables, the shard files and the page cache of both.
  for (const ledger of ['local', 'postgres']) {
    resetSandbox();
    await forgetLedgers();
    await importRun(warmUp, WARM_UP_ORDERS, CONCURRENCIES[0], ledger);
  }
  for (const c of CONCURRENCIES) {
    const ideal = c / (LATENCY_MS / 1000);
    const runs = { local: [], postgres: [] };
    for (let run = 0; run < RUNS; run++) {
      // Alternating, and in the other order every other run, so that a drift of the machine's
      // load weighs on both alike.
      const order = run % 2 === 0 ? ['local', 'postgres'] : ['postgres', 'local'];
      for (const ledger of order) {
        resetSandbox();
        await forgetLedgers();
        runs[ledger].push(await importRun(csv, ORDERS, c, ledger));
        if (ledger === 'postgres') {
          const rows = await ledgerRows();
          if (rows.created !== ORDERS) throw new Error(`PostgreSQL ledger rows: ${JSON.stringify(rows)}`);
        }
      }
    }
    const local = median(runs.local.map((x) => x.rate));
    const postgres = median(runs.postgres.map((x) => x.rate));
    const ratio = postgres / local;
    const pass = ratio >= TARGET_RATIO;
    ok &&= pass;
    const per1000 = (list) => (median(list.map((x) => x.cpu)) * 1000) / ORDERS;
    const rssMb = (list) => median(list.map((x) => x.rss)) / 1024;
    results.concurrency[c] = {
      ideal,
      local: {
        ordersPerSecond: local,
        runs: runs.local,
        cpuSecondsPer1000: per1000(runs.local),
        peakRssMb: rssMb(runs.local),
      },
      postgres: {
        ordersPerSecond: postgres,
        runs: runs.postgres,
        cpuSecondsPer1000: per1000(runs.postgres),
        peakRssMb: rssMb(runs.postgres),
      },
      ratio,
      loadAverage: load(),
    };
    const show = (list) => list.map((x) => x.rate.toFixed(0)).join(' ');
    lines.push(
      `c=${String(c).padEnd(2)} local ledger    ${local.toFixed(0).padStart(5)}/s = ${((100 * local) / ideal).toFixed(1)}% of ideal ${ideal}/s, ${per1000(runs.local).toFixed(3)} CPU s/1000, peak RSS ${rssMb(runs.local).toFixed(0)} MB; runs ${show(runs.local)}/s`,
      `     PostgreSQL ledger ${postgres.toFixed(0).padStart(5)}/s = ${((100 * postgres) / ideal).toFixed(1)}% of ideal, ${per1000(runs.postgres).toFixed(3)} CPU s/1000, peak RSS ${rssMb(runs.postgres).toFixed(0)} MB; runs ${show(runs.postgres)}/s`,
      `     PostgreSQL / local: ${ratio.toFixed(2)} (target ≥ ${TARGET_RATIO}) ${pass ? 'ok' : 'BELOW'} (load ${load()})`,
    );
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  await sql.end().catch(() => undefined);
  await sandbox.close();
  rmSync(work, { recursive: true, force: true });
  server.stop();
}
results.loadAverageAfter = load();
console.log(
  `bench/ledger-postgres: ${ORDERS} orders, sandbox latency ${LATENCY_MS} ms, median of ${RUNS} alternating runs (node ${process.version}, ${server.version}${given ? '' : DURABLE ? ', fsync on' : ', fsync off'}, load ${results.loadAverageAfter})`,
);
for (const line of lines) console.log(line);
mkdirSync(join(root, 'bench/results'), { recursive: true });
const out = join(root, 'bench/results', `ledger-postgres-${results.at.replace(/[:.]/g, '-')}.json`);
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`results: ${out}`);
