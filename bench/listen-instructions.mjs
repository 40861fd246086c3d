#!/usr/bin/env node
// Instructions per request of `ordercli listen` and of the bare node:http server of
// bench/listen.mjs, counted by valgrind (callgrind) over a fixed number of requests. Unlike
// requests per second on this shared two-core machine, which move 10-20 % from minute to minute,
// the count repeats to within 0.1 %: it is the figure to compare two builds with. It counts
// user-space instructions only (not the kernel's socket and file work, which bare and listen
// share) and says nothing of waiting; bench/listen.mjs remains the measure of the target.
//
//   npm run build && node bench/listen-instructions.mjs                 # bare, then listen --log
//   BENCH_REQUESTS=3000 node bench/listen-instructions.mjs bare listen listen-json listen-nolog
//   BENCH_BIN=/other/checkout/bin/ordercli.js node bench/listen-instructions.mjs listen
//
// Each target runs under valgrind (about 50 times slower): 2,000 requests warm it up, the counters
// are zeroed, BENCH_REQUESTS requests (16 connections, the body of bench/listen.mjs) are counted.
// Needs valgrind (apt-get install valgrind).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BARE_SERVER, body, headers, KEY, root } from './listen-load.mjs';

const bin = process.env.BENCH_BIN ?? join(root, 'bin/ordercli.js');
const requests = Number(process.env.BENCH_REQUESTS ?? 3000);

try {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
} catch {
  console.error('valgrind is needed: apt-get install valgrind');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'ordercli-bench-instr-'));
const TARGETS = {
  bare: ['-e', BARE_SERVER],
  listen: [bin, 'listen', '--port', '0', '--key', KEY, '--log', join(dir, 'events.ndjson')],
  'listen-json': [bin, 'listen', '--port', '0', '--key', KEY, '--log', join(dir, 'events.ndjson'), '--json'],
  'listen-nolog': [bin, 'listen', '--port', '0', '--key', KEY],
};
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['bare', 'listen'];
for (const name of chosen) {
  if (!TARGETS[name]) {
    console.error(`Unknown target ${name}: ${Object.keys(TARGETS).join(', ')}`);
    process.exit(2);
  }
}

function load(url, amount) {
  return new Promise((resolve, reject) =>
    autocannon({ url, connections: 16, amount, method: 'POST', headers, body }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );
}

const results = {};
for (const name of chosen) {
  const out = join(dir, `callgrind-${name}`);
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}.%p`,
      process.execPath,
      ...TARGETS[name],
    ],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', ORDERCLI_CONFIG_DIR: join(dir, 'config') },
    },
  );
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no ready line\n${stderr}`)), 120_000);
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      // valgrind echoes the command line (which holds "Ready"): the line must start with it.
      const match = /^Ready: listening on (\S+)/m.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  await load(url, 2000);
  execFileSync('callgrind_control', ['--zero', String(child.pid)], { stdio: 'ignore' });
  const result = await load(url, requests);
  execFileSync('callgrind_control', ['--dump', String(child.pid)], { stdio: 'ignore' });
  child.kill('SIGINT');
  await new Promise((resolve) => child.on('close', resolve));
  // The dump after zeroing is the file ending in .1.
  const dump = readdirSync(dir).find((f) => f.startsWith(`callgrind-${name}.`) && f.endsWith('.1'));
  const total = Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, dump), 'utf8'))?.[1]);
  const answered = result['2xx'];
  if (answered !== requests || result.errors || result.non2xx) {
    console.error(
      `${name}: ${answered} of ${requests} answered 2xx (errors ${result.errors}, non-2xx ${result.non2xx})`,
    );
    process.exitCode = 1;
  }
  results[name] = total / answered;
  console.log(
    `${name.padEnd(13)} ${Math.round(total / answered)
      .toLocaleString('en-US')
      .padStart(9)} instructions per request`,
  );
}
rmSync(dir, { recursive: true, force: true });
if (results.bare && results.listen) {
  console.log(`\nlisten / bare: ${(results.listen / results.bare).toFixed(2)}× the instructions per request`);
}
