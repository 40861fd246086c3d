#!/usr/bin/env node
// Benchmark of `ordercli refs packagings list` (the built binary) on a sandbox seeded with 50,000
// extra packaging references: wall time and peak memory (maxRSS) of `--json`, of the table (run
// under `script`, so that stdout is a real terminal), and, for reference, of the piped TSV and a
// `--search`. Each case runs BENCH_RUNS times (default 3): the median time and the highest peak
// are reported.
//
//   npm run build && node bench/refs.mjs
//   BENCH_REFERENCES=100000 BENCH_RUNS=5 node bench/refs.mjs
//
// Targets: `--json` and the table each within 2 s and under 300 MB peak RSS. Exit code 1 if a
// target is missed or a run fails. The peak is the child's own `process.resourceUsage().maxRSS`,
// written at exit by a module preloaded with --import (no /usr/bin/time here).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/ordercli.js');
const references = Number(process.env.BENCH_REFERENCES ?? 50_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const LIMIT_MS = 2000;
const LIMIT_MB = 300;

if (!existsSync(join(root, 'dist/cli/main.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}
if (spawnSync('script', ['--version']).error) {
  console.error('The table case needs `script` (util-linux) to give the CLI a terminal.');
  process.exit(2);
}

const work = await mkdtemp(join(tmpdir(), 'ordercli-bench-refs-'));
const preload = join(work, 'max-rss.mjs');
await writeFile(
  preload,
  `import { writeFileSync } from 'node:fs';
process.on('exit', () => writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)));
`,
);

// The sandbox runs in its own process: its memory and CPU are not the CLI's.
const sandbox = spawn(
  process.execPath,
  [bin, 'sandbox', '--port', '0', '--quiet', '--json', '--packaging-references', String(references)],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ORDERCLI_CONFIG_DIR: work } },
);
let sandboxErrors = '';
sandbox.stderr.setEncoding('utf8').on('data', (chunk) => (sandboxErrors += chunk));
const { url, tokens } = await new Promise((resolve, reject) => {
  let text = '';
  sandbox.stdout.setEncoding('utf8').on('data', (chunk) => {
    text += chunk;
    const line = text.split('\n')[0];
    if (text.includes('\n')) resolve(JSON.parse(line));
  });
  sandbox.on('exit', (code) =>
    reject(new Error(`the sandbox exited (${code}) before it was ready: ${sandboxErrors}`)),
  );
});

const env = { ...process.env, ORDERCLI_CONFIG_DIR: work, NODE_OPTIONS: '' };
for (const key of Object.keys(env))
  if (key.startsWith('ORDERCLI_') && key !== 'ORDERCLI_CONFIG_DIR') delete env[key];
Object.assign(env, { ORDERCLI_BASE_URL: url, ORDERCLI_TOKEN: tokens.partner });

const shellQuote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

/** Runs the CLI once; returns its wall time, peak RSS and stdout size. */
async function measure(args, { tty }) {
  const rssFile = join(work, `rss-${Math.random().toString(36).slice(2)}`);
  const node = [process.execPath, '--import', pathToFileURL(preload).href, bin, ...args];
  // `script` gives the CLI a pseudo-terminal (120 columns); its copy of the output is counted.
  const [command, commandArgs] = tty
    ? ['script', ['-qefc', `stty cols 120 rows 40; exec ${node.map(shellQuote).join(' ')}`, '/dev/null']]
    : [node[0], node.slice(1)];
  const started = process.hrtime.bigint();
  const child = spawn(command, commandArgs, {
    env: { ...env, BENCH_RSS_FILE: rssFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let bytes = 0;
  let stderr = '';
  child.stdout.on('data', (chunk) => (bytes += chunk.length));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (code !== 0) throw new Error(`ordercli ${args.join(' ')} exited ${code}: ${stderr}`);
  const maxRssMb = Number(await readFile(rssFile, 'utf8')) / 1024;
  return { ms, maxRssMb, bytes };
}

const cases = [
  {
    name: 'refs packagings list --json',
    args: ['refs', 'packagings', 'list', '--json'],
    tty: false,
    target: true,
  },
  {
    name: 'refs packagings list (table, TTY)',
    args: ['refs', 'packagings', 'list'],
    tty: true,
    target: true,
  },
  {
    name: 'refs packagings list (piped TSV)',
    args: ['refs', 'packagings', 'list'],
    tty: false,
    target: false,
  },
  {
    name: 'refs packagings list --search confiture --active',
    args: ['refs', 'packagings', 'list', '--search', 'confiture', '--active'],
    tty: true,
    target: false,
  },
];

let failed = false;
const results = [];
try {
  // One unmeasured run of each, to warm the file cache and the sandbox's cached list.
  for (const c of cases) await measure(c.args, c);
  for (const c of cases) {
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await measure(c.args, c));
    const times = samples.map((s) => s.ms).sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    const peak = Math.max(...samples.map((s) => s.maxRssMb));
    const ok = !c.target || (median <= LIMIT_MS && peak <= LIMIT_MB);
    if (!ok) failed = true;
    results.push({ ...c, median, peak, bytes: samples[0].bytes, ok });
  }
} catch (error) {
  console.error(error.message);
  failed = true;
} finally {
  sandbox.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
console.log(
  `bench/refs: ${references.toLocaleString('en')} extra packaging references, ${runs} runs per case (node ${process.version})`,
);
console.log(
  `${'command'.padEnd(50)}${'median ms'.padStart(11)}${'peak RSS'.padStart(11)}${'stdout'.padStart(10)}  target`,
);
for (const r of results) {
  const target = r.target ? `${r.ok ? 'ok' : 'MISSED'} (≤ ${LIMIT_MS} ms, ≤ ${LIMIT_MB} MB)` : '-';
  console.log(
    `${r.name.padEnd(50)}${r.median.toFixed(0).padStart(11)}${`${r.peak.toFixed(0)} MB`.padStart(11)}${mb(r.bytes).padStart(10)}  ${target}`,
  );
}
process.exitCode = failed ? 1 : 0;
