#!/usr/bin/env node
// What a person feels with a long reference list: `ordercli refs packagings list` (the built
// binary) on a sandbox seeded with 50,000 extra packaging references.
//
// - On a terminal (run under `script`, so that stdout is a real terminal 120 columns wide): the time
//   to the first screen (the first line of the table on the terminal) and to the end, with the
//   default --limit (1000 rows and a note), with a --search, and with --limit 0 (every row).
// - Piped: the wall time and the peak memory (maxRSS) of --json, --csv and the tab-separated rows,
//   which are written as they are encoded and never limited.
// Each case runs BENCH_RUNS times (default 3): the median times and the highest peak are reported.
//
//   npm run build && node bench/refs.mjs
//   BENCH_REFERENCES=100000 BENCH_RUNS=5 node bench/refs.mjs
//
// Targets: the first screen within 2 s; --json and --csv under 300 MB peak RSS. Exit code 1 if a
// target is missed or a run fails. The peak is the child's own `process.resourceUsage().maxRSS`,
// written at exit by a module preloaded with --import (no /usr/bin/time here).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/ordercli.js');
const references = Number(process.env.BENCH_REFERENCES ?? 50_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const FIRST_SCREEN_MS = 2000;
const LIMIT_MB = 300;

if (!existsSync(join(root, 'dist/cli/main.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}
if (spawnSync('script', ['--version']).error) {
  console.error('The terminal cases need `script` (util-linux) to give the CLI a terminal.');
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

const env = { ...process.env, ORDERCLI_CONFIG_DIR: work, NODE_OPTIONS: '', NO_COLOR: '1' };
for (const key of Object.keys(env))
  if (key.startsWith('ORDERCLI_') && key !== 'ORDERCLI_CONFIG_DIR') delete env[key];
Object.assign(env, { ORDERCLI_BASE_URL: url, ORDERCLI_TOKEN: tokens.partner });

const shellQuote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

/** Runs the CLI once; returns its wall time, the time to the table's first line, its peak RSS and output size. */
async function measure(args, { tty }) {
  const rssFile = join(work, `rss-${Math.random().toString(36).slice(2)}`);
  const node = [process.execPath, '--import', pathToFileURL(preload).href, bin, ...args];
  // `script` gives the CLI a pseudo-terminal (120 columns); its copy of the output is counted.
  const [command, commandArgs] = tty
    ? ['script', ['-qefc', `stty cols 120 rows 40; exec ${node.map(shellQuote).join(' ')}`, '/dev/null']]
    : [node[0], node.slice(1)];
  const started = process.hrtime.bigint();
  const since = () => Number(process.hrtime.bigint() - started) / 1e6;
  const child = spawn(command, commandArgs, {
    env: { ...env, BENCH_RSS_FILE: rssFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let bytes = 0;
  let firstScreenMs;
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    bytes += chunk.length;
    // The table's top-left corner: the first thing of the table the person sees.
    if (firstScreenMs === undefined && chunk.includes('┌')) firstScreenMs = since();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.on('close', resolve));
  const ms = since();
  if (code !== 0) throw new Error(`ordercli ${args.join(' ')} exited ${code}: ${stderr}`);
  const maxRssMb = Number(await readFile(rssFile, 'utf8')) / 1024;
  return { ms, firstScreenMs, maxRssMb, bytes };
}

const list = ['refs', 'packagings', 'list'];
const cases = [
  { name: 'terminal, default --limit (1000 rows)', args: list, tty: true, target: 'screen' },
  {
    name: 'terminal, --search confiture --active',
    args: [...list, '--search', 'confiture', '--active'],
    tty: true,
  },
  { name: 'terminal, --limit 0 (every row)', args: [...list, '--limit', '0'], tty: true },
  { name: 'piped --json', args: [...list, '--json'], tty: false, target: 'memory' },
  { name: 'piped --csv', args: [...list, '--csv'], tty: false, target: 'memory' },
  { name: 'piped rows (TSV)', args: list, tty: false },
];

const median = (values) => {
  const sorted = values.filter((v) => v !== undefined).sort((a, b) => a - b);
  return sorted.length === 0 ? undefined : sorted[Math.floor(sorted.length / 2)];
};

let failed = false;
const results = [];
try {
  // One unmeasured run of each, to warm the file cache and the sandbox's cached list.
  for (const c of cases) await measure(c.args, c);
  for (const c of cases) {
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await measure(c.args, c));
    const result = {
      ...c,
      ms: median(samples.map((s) => s.ms)),
      firstScreenMs: median(samples.map((s) => s.firstScreenMs)),
      peak: Math.max(...samples.map((s) => s.maxRssMb)),
      bytes: samples[0].bytes,
    };
    result.ok =
      c.target === 'screen'
        ? result.firstScreenMs !== undefined && result.firstScreenMs <= FIRST_SCREEN_MS
        : c.target === 'memory'
          ? result.peak <= LIMIT_MB
          : true;
    if (!result.ok) failed = true;
    results.push(result);
  }
} catch (error) {
  console.error(error.message);
  failed = true;
} finally {
  sandbox.kill('SIGTERM');
  await rm(work, { recursive: true, force: true });
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const ms = (value) => (value === undefined ? '-' : value.toFixed(0));
console.log(
  `bench/refs: ${references.toLocaleString('en')} extra packaging references, ${runs} runs per case (node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')})`,
);
console.log(
  `${'refs packagings list'.padEnd(40)}${'1st screen'.padStart(11)}${'end ms'.padStart(9)}${'peak RSS'.padStart(10)}${'stdout'.padStart(10)}  target`,
);
for (const r of results) {
  const target =
    r.target === 'screen'
      ? `${r.ok ? 'ok' : 'MISSED'} (first screen ≤ ${FIRST_SCREEN_MS} ms)`
      : r.target === 'memory'
        ? `${r.ok ? 'ok' : 'MISSED'} (≤ ${LIMIT_MB} MB)`
        : '-';
  console.log(
    `${r.name.padEnd(40)}${ms(r.firstScreenMs).padStart(11)}${ms(r.ms).padStart(9)}${`${r.peak.toFixed(0)} MB`.padStart(10)}${mb(r.bytes).padStart(10)}  ${target}`,
  );
}
process.exitCode = failed ? 1 : 0;
