#!/usr/bin/env node
// Benchmark of `ordercli listen` (the built binary) against a bare node:http server that only
// answers 200: autocannon, 16 connections, POSTs of a realistic sales_order_validated body with a
// valid key. Runs are interleaved (bare, listen, bare, listen, ...) so that drifts of the machine
// hit both alike; medians are compared. After each listen run the log is checked: exactly one
// line per 200 listen sent, each line whole JSON, no key, and at least as many lines as 2xx
// autocannon counted (it does not count answers still in flight when it stops).
//
//   npm run build && node bench/listen.mjs
//   BENCH_ROUNDS=3 BENCH_DURATION=10 BENCH_CONNECTIONS=16 node bench/listen.mjs
//   BENCH_STDOUT=file node bench/listen.mjs     # listen's stdout to a file (`listen > events.txt`)
//   BENCH_STDOUT=ignore node bench/listen.mjs   # listen's stdout to /dev/null
// By default listen's stdout is a pipe this process drains, as a terminal or `| tee` would.
//   BENCH_REFERENCE=1 node bench/listen.mjs     # also a minimal receiver: key check, JSON.parse, one
//                                               # write stream, 200 in its callback (what listen must match)
//
// Targets: listen >= 60 % of the bare rate, listen's p99 latency < 5 ms. Exit code 1 if a check
// or a target fails. Results are also written to bench/results/ (not versioned).
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BARE_SERVER, body, headers, KEY, root } from './listen-load.mjs';

const bin = join(root, 'bin/ordercli.js');
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const duration = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);

const STDOUT = process.env.BENCH_STDOUT ?? 'pipe';
if (!['file', 'pipe', 'ignore'].includes(STDOUT)) throw new Error('BENCH_STDOUT is file, pipe or ignore');
const stdoutChecked = () => STDOUT !== 'ignore';

// The least a receiver that keeps the log-before-200 promise does, for calibration.
const REFERENCE_SERVER = `
const http = require('node:http');
const fs = require('node:fs');
const { hash, timingSafeEqual } = require('node:crypto');
const expected = hash('sha256', process.env.BENCH_KEY, 'buffer');
const log = fs.createWriteStream(process.env.BENCH_LOG, { flags: 'a' });
const server = http.createServer((req, res) => {
  const key = req.headers['x-webhook-key'];
  if (typeof key !== 'string' || !timingSafeEqual(hash('sha256', key, 'buffer'), expected)) { res.writeHead(401); res.end(); return; }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { res.writeHead(400); res.end(); return; }
    const line = JSON.stringify({ receivedAt: new Date().toISOString(), event: req.headers['x-webhook-event'], body }) + '\\n';
    log.write(line, () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': 18 }); res.end('{"received":true}\\n'); });
  });
});
server.listen(0, '127.0.0.1', () => process.stderr.write('Ready: listening on http://127.0.0.1:' + server.address().port + '/\\n'));
process.on('SIGINT', () => log.end(() => server.close(() => process.exit(0))));
`;

/** Starts a server process and resolves with its URL once it printed its ready line. */
function startServer(args, extraEnv = {}, stdoutFile = undefined) {
  const stdoutFd = stdoutFile && STDOUT === 'file' ? openSync(stdoutFile, 'w') : undefined;
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      NO_COLOR: '1',
      ORDERCLI_CONFIG_DIR: join(tmpdir(), 'ordercli-bench-config'),
      ...extraEnv,
    },
    stdio: ['ignore', stdoutFd ?? (STDOUT === 'pipe' ? 'pipe' : 'ignore'), 'pipe'],
  });
  if (stdoutFd !== undefined) closeSync(stdoutFd);
  let stderr = '';
  let stdoutLines = 0;
  // With BENCH_STDOUT=pipe, stdout is a pipe the bench drains, as a terminal or `| tee` would.
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
          if (stdoutFd !== undefined) {
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

function load(url) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration, method: 'POST', headers, body }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
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
  `listen vs bare node:http: ${rounds} rounds, ${duration} s each, ${connections} connections, ${Buffer.byteLength(body)}-byte body, listen's stdout to ${STDOUT === 'file' ? 'a file' : STDOUT === 'pipe' ? 'a pipe this process drains' : '/dev/null'}\n`,
);
for (let round = 1; round <= rounds; round++) {
  for (const kind of process.env.BENCH_REFERENCE ? ['bare', 'reference', 'listen'] : ['bare', 'listen']) {
    const log = join(dir, `events-${round}.ndjson`);
    const server =
      kind === 'bare'
        ? await startServer(['-e', BARE_SERVER])
        : kind === 'reference'
          ? await startServer(['-e', REFERENCE_SERVER], {
              BENCH_KEY: KEY,
              BENCH_LOG: join(dir, 'reference.ndjson'),
            })
          : await startServer(
              [bin, 'listen', '--port', '0', '--key', KEY, '--log', log],
              {},
              join(dir, `stdout-${round}.txt`),
            );
    const result = await load(server.url);
    const stopped = await server.stop();
    const run = {
      kind,
      round,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      ok: result['2xx'],
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
    };
    if (kind === 'listen') {
      const text = await readFile(log, 'utf8');
      const lines = text === '' ? [] : text.slice(0, -1).split('\n');
      let whole = 0;
      for (const line of lines) {
        try {
          JSON.parse(line);
          whole++;
        } catch {}
      }
      const accepted = Number(/Stopped: (\d+) accepted/.exec(stopped.stderr)?.[1] ?? -1);
      run.logLines = lines.length;
      run.accepted = accepted;
      run.printed = stopped.stdoutLines;
      const problems = [];
      if (stopped.code !== 130) problems.push(`listen exited ${stopped.code} on Ctrl-C, not 130`);
      if (lines.length !== accepted) problems.push(`${lines.length} log lines but ${accepted} answered 200`);
      if (lines.length < result['2xx'])
        problems.push(`${lines.length} log lines but autocannon got ${result['2xx']} 2xx`);
      if (lines.length - result['2xx'] > connections)
        problems.push('more lines than answers in flight explain');
      if (whole !== lines.length) problems.push(`${lines.length - whole} lines are not whole JSON`);
      if (text.includes(KEY)) problems.push('the key is in the log');
      if (stdoutChecked() && stopped.stdoutLines !== accepted)
        problems.push(`${stopped.stdoutLines} lines printed for ${accepted} events`);
      run.check = problems.length === 0 ? 'ok' : problems.join('; ');
      if (problems.length > 0) failures++;
      await rm(log, { force: true });
    }
    if (run.non2xx || run.errors || run.timeouts) {
      failures++;
      run.check =
        `${run.check ?? ''} non-2xx ${run.non2xx}, errors ${run.errors}, timeouts ${run.timeouts}`.trim();
    }
    runs.push(run);
    const extra =
      kind === 'listen'
        ? `  log ${run.logLines} lines = ${run.accepted} answered 200 (autocannon counted ${run.ok}): ${run.check}`
        : '';
    console.log(
      `${kind.padEnd(9)} #${round}  ${Math.round(run.rps).toString().padStart(6)} req/s  p50 ${run.p50} ms  p99 ${run.p99} ms${extra}`,
    );
  }
}
await rm(dir, { recursive: true, force: true });

const bare = runs.filter((r) => r.kind === 'bare');
const listen = runs.filter((r) => r.kind === 'listen');
const reference = runs.filter((r) => r.kind === 'reference');
const bareRps = median(bare.map((r) => r.rps));
const listenRps = median(listen.map((r) => r.rps));
const ratio = listenRps / bareRps;
const p99 = median(listen.map((r) => r.p99));
const rateOk = ratio >= 0.6;
const p99Ok = p99 < 5;
if (reference.length > 0) {
  const referenceRps = median(reference.map((r) => r.rps));
  console.log(
    `\nmedian reference ${Math.round(referenceRps)} req/s (p99 ${median(reference.map((r) => r.p99))} ms) = ${((referenceRps / bareRps) * 100).toFixed(1)} % of bare; listen = ${((listenRps / referenceRps) * 100).toFixed(1)} % of the reference`,
  );
}
console.log(`
median bare    ${Math.round(bareRps)} req/s
median listen  ${Math.round(listenRps)} req/s  (p99 ${p99} ms)
ratio          ${(ratio * 100).toFixed(1)} % of bare   target >= 60 %: ${rateOk ? 'PASS' : 'FAIL'}
listen p99     ${p99} ms           target < 5 ms:   ${p99Ok ? 'PASS' : 'FAIL'}
log check      ${failures === 0 ? 'every 200 logged exactly once, every line whole JSON, no key: PASS' : `FAIL (${failures} runs)`}`);

await mkdir(join(root, 'bench/results'), { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
await writeFile(
  join(root, 'bench/results', `listen-${stamp}.json`),
  `${JSON.stringify({ rounds, duration, connections, bodyBytes: Buffer.byteLength(body), runs, bareRps, listenRps, ratio, p99 }, null, 2)}\n`,
);
process.exitCode = failures === 0 && rateOk && p99Ok ? 0 : 1;
