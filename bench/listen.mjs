#!/usr/bin/env node
// Benchmark of `ordercli listen --key ... --log ...` (the built binary), in two parts:
//
// - steady load: autocannon, 16 connections, BENCH_DURATION seconds per round, POSTs of a
//   realistic sales_order_validated body with a valid key; the median p99 latency of the rounds;
// - a burst: BENCH_BURST notifications (default 2,000) sent at once over up to 1,000 connections
//   (listen accepts 1,024), each with its own id.
//
// After each run the log is checked: exactly one line per 200 listen sent (for the burst: one per
// id), each line whole JSON, no key, and as many lines printed as events accepted.
//
//   npm run build && node bench/listen.mjs
//   BENCH_ROUNDS=3 BENCH_DURATION=10 BENCH_BURST=2000 node bench/listen.mjs
//   BENCH_STDOUT=file node bench/listen.mjs     # listen's stdout to a file (`listen > events.txt`)
//   BENCH_STDOUT=ignore node bench/listen.mjs   # listen's stdout to /dev/null
//   BENCH_BIN=/other/checkout/bin/ordercli.js node bench/listen.mjs   # another build
// By default listen's stdout is a pipe this process drains, as a terminal or `| tee` would.
//
// Targets: steady p99 < 5 ms; every check passes. Exit code 1 otherwise. Results are also written
// to bench/results/ (not versioned).
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { body, headers, KEY, root } from './listen-load.mjs';

const bin = process.env.BENCH_BIN ?? join(root, 'bin/ordercli.js');
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const duration = Number(process.env.BENCH_DURATION ?? 10);
const burst = Number(process.env.BENCH_BURST ?? 2000);
const connections = 16;
const P99_TARGET_MS = 5;

const STDOUT = process.env.BENCH_STDOUT ?? 'pipe';
if (!['file', 'pipe', 'ignore'].includes(STDOUT)) throw new Error('BENCH_STDOUT is file, pipe or ignore');

/** Starts listen and resolves with its URL once it printed its ready line. */
function startListen(log, stdoutFile) {
  const stdoutFd = STDOUT === 'file' ? openSync(stdoutFile, 'w') : undefined;
  const child = spawn(process.execPath, [bin, 'listen', '--port', '0', '--key', KEY, '--log', log], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1', ORDERCLI_CONFIG_DIR: join(tmpdir(), 'ordercli-bench-config') },
    stdio: ['ignore', stdoutFd ?? (STDOUT === 'pipe' ? 'pipe' : 'ignore'), 'pipe'],
  });
  if (stdoutFd !== undefined) closeSync(stdoutFd);
  let stderr = '';
  let stdoutLines = 0;
  child.stdout?.on('data', (chunk) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) stdoutLines++;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line:\n${stderr}`)), 15_000);
    const poll = setInterval(() => {
      const match = /Ready: listening on (\S+)/.exec(stderr);
      if (!match) return;
      clearInterval(poll);
      clearTimeout(timer);
      resolve({
        url: match[1],
        stop: async () => {
          child.kill('SIGINT');
          const code = await exited;
          if (STDOUT === 'file') {
            const printed = await readFile(stdoutFile);
            for (let i = printed.indexOf(10); i !== -1; i = printed.indexOf(10, i + 1)) stdoutLines++;
            await rm(stdoutFile, { force: true });
          }
          return { code, stderr, stdoutLines };
        },
      });
    }, 20);
  });
}

function steadyLoad(url) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration, method: 'POST', headers, body }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

/** Sends `burst` notifications at once; resolves with the ids answered 200 and the latencies. */
async function sendBurst(url) {
  const agent = new Agent({ connections: Math.min(burst, 1000), pipelining: 1 });
  const template = JSON.parse(body);
  const ok = [];
  const latencies = [];
  const failures = [];
  await Promise.all(
    Array.from({ length: burst }, async (_, id) => {
      const started = performance.now();
      try {
        const answer = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers,
          body: JSON.stringify({ ...template, id }),
        });
        await answer.body.dump();
        latencies.push(performance.now() - started);
        if (answer.statusCode === 200) ok.push(id);
        else failures.push(`#${id}: ${answer.statusCode}`);
      } catch (error) {
        failures.push(`#${id}: ${error.code ?? error.message}`);
      }
    }),
  );
  await agent.close();
  latencies.sort((a, b) => a - b);
  return { ok, failures, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
}

/** What is wrong with a run's log and output (empty: nothing). */
async function checkLog(log, stopped, expectedIds) {
  const text = await readFile(log, 'utf8');
  const lines = text === '' ? [] : text.slice(0, -1).split('\n');
  const problems = [];
  const ids = [];
  let whole = 0;
  for (const line of lines) {
    try {
      ids.push(JSON.parse(line).body.id);
      whole++;
    } catch {}
  }
  const accepted = Number(/Stopped: (\d+) accepted/.exec(stopped.stderr)?.[1] ?? -1);
  if (stopped.code !== 130) problems.push(`listen exited ${stopped.code} on Ctrl-C, not 130`);
  if (lines.length !== accepted) problems.push(`${lines.length} log lines but ${accepted} answered 200`);
  if (whole !== lines.length) problems.push(`${lines.length - whole} lines are not whole JSON`);
  if (text.includes(KEY)) problems.push('the key is in the log');
  if (STDOUT !== 'ignore' && stopped.stdoutLines !== accepted)
    problems.push(`${stopped.stdoutLines} lines printed for ${accepted} events`);
  if (expectedIds) {
    const logged = [...ids].sort((a, b) => a - b).join(',');
    if (logged !== [...expectedIds].sort((a, b) => a - b).join(','))
      problems.push('the ids logged are not those answered 200, each once');
  }
  return { lines: lines.length, accepted, problems };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const dir = await mkdtemp(join(tmpdir(), 'ordercli-bench-listen-'));
const runs = [];
let failures = 0;
console.log(
  `listen --log: ${rounds} rounds of ${duration} s at ${connections} connections, then a burst of ${burst}; ${Buffer.byteLength(body)}-byte body; stdout to ${STDOUT === 'file' ? 'a file' : STDOUT === 'pipe' ? 'a pipe this process drains' : '/dev/null'}; load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}\n`,
);
for (let round = 1; round <= rounds; round++) {
  const log = join(dir, `events-${round}.ndjson`);
  const listen = await startListen(log, join(dir, `stdout-${round}.txt`));
  const result = await steadyLoad(listen.url);
  const check = await checkLog(log, await listen.stop(), undefined);
  // autocannon does not count the answers still in flight when it stops.
  if (check.lines < result['2xx'] || check.lines - result['2xx'] > connections)
    check.problems.push(`${check.lines} log lines but autocannon counted ${result['2xx']} 2xx`);
  if (result.non2xx || result.errors || result.timeouts)
    check.problems.push(`non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}`);
  if (check.problems.length > 0) failures++;
  const run = {
    round,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ...check,
  };
  runs.push(run);
  console.log(
    `steady #${round}  ${Math.round(run.rps).toString().padStart(6)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms  log ${check.lines} lines = ${check.accepted} answered 200: ${check.problems.join('; ') || 'ok'}`,
  );
  await rm(log, { force: true });
}

const burstLog = join(dir, 'events-burst.ndjson');
const listen = await startListen(burstLog, join(dir, 'stdout-burst.txt'));
const sent = await sendBurst(listen.url);
const burstCheck = await checkLog(burstLog, await listen.stop(), sent.ok);
if (sent.failures.length > 0)
  burstCheck.problems.push(
    `${sent.failures.length} not answered 200 (${sent.failures.slice(0, 3).join(', ')})`,
  );
if (burstCheck.problems.length > 0) failures++;
console.log(
  `burst      ${sent.ok.length} of ${burst} answered 200, p99 ${sent.p99.toFixed(1)} ms (a burst's p99 is its queue)  log ${burstCheck.lines} lines: ${burstCheck.problems.join('; ') || 'ok'}`,
);
await rm(dir, { recursive: true, force: true });

const p99 = median(runs.map((r) => r.p99));
const p99Ok = p99 < P99_TARGET_MS;
console.log(`
median steady  ${Math.round(median(runs.map((r) => r.rps)))} req/s
listen p99     ${p99} ms           target < ${P99_TARGET_MS} ms:   ${p99Ok ? 'PASS' : 'FAIL'}
log check      ${failures === 0 ? 'every 200 logged exactly once, every line whole JSON, no key: PASS' : `FAIL (${failures} runs)`}`);

await mkdir(join(root, 'bench/results'), { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
await writeFile(
  join(root, 'bench/results', `listen-${stamp}.json`),
  `${JSON.stringify({ rounds, duration, connections, burst, bodyBytes: Buffer.byteLength(body), runs, burstResult: { ok: sent.ok.length, p99: sent.p99, ...burstCheck }, p99 }, null, 2)}\n`,
);
process.exitCode = failures === 0 && p99Ok ? 0 : 1;
