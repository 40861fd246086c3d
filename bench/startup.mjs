#!/usr/bin/env node
// Start-up cost of the built CLI as a ratio to `node -e 0` (medians of interleaved runs):
// `ordercli --version`, `ordercli --help`, and one API command against a local sandbox.
// Usage: npm run build && node bench/startup.mjs [runs=25]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/ordercli.js');
const runs = Number(process.argv[2] ?? 25);

const { startSandbox } = await import(join(root, 'dist/index.js'));
const sandbox = await startSandbox({ port: 0, quiet: true });

const env = { ...process.env, ORDERCLI_CONFIG_DIR: join(root, 'node_modules/.bench-config') };
for (const key of Object.keys(env))
  if (key.startsWith('ORDERCLI_') && key !== 'ORDERCLI_CONFIG_DIR') delete env[key];

const cases = [
  ['node -e 0', ['-e', '0']],
  ['ordercli --version', [bin, '--version']],
  ['ordercli --help', [bin, '--help']],
  [
    'ordercli get packaging_references 401',
    [bin, '--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'get', 'packaging_references', '401'],
  ],
];

// The sandbox answers in this process, so the child must not be timed while we block: run it async.
const { spawn } = await import('node:child_process');
function time(args) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`));
      else resolve(Number(process.hrtime.bigint() - start) / 1e6);
    });
  });
}

const samples = cases.map(() => []);
for (let i = 0; i < 3; i++) for (const [, args] of cases) await time(args); // warm the file cache
for (let i = 0; i < runs; i++) {
  for (const [index, [, args]] of cases.entries()) samples[index].push(await time(args));
}
await sandbox.close();

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const base = median(samples[0]);
const limits = [undefined, 1.3, 1.5, 3];
console.log(`bench/startup: ${runs} interleaved runs each, medians (node ${process.version})`);
console.log('command'.padEnd(44) + 'median ms'.padStart(10) + 'ratio'.padStart(8) + 'limit'.padStart(8));
let ok = true;
for (const [index, [name]] of cases.entries()) {
  const m = median(samples[index]);
  const ratio = m / base;
  const limit = limits[index];
  if (limit !== undefined && ratio > limit) ok = false;
  console.log(
    name.padEnd(44) +
      m.toFixed(1).padStart(10) +
      ratio.toFixed(2).padStart(8) +
      (limit === undefined ? '' : `${limit}x`).padStart(8) +
      (limit !== undefined && ratio > limit ? '  OVER' : ''),
  );
}
process.exitCode = ok ? 0 : 1;
