#!/usr/bin/env node
// Peak memory (RSS) of `ordercli orders import <file> --dry-run` on hostile inputs: a CSV whose
// one cell is 50 MiB, and an NDJSON file that is one 50 MB line. Not a test: run it by hand.
// Needs GNU time (/usr/bin/time) for the child's peak RSS; nothing is sent anywhere.
//
// Usage: npm run build && node bench/hostile-input.mjs [--mib 50]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/ordercli.js');
const { values } = parseArgs({ options: { mib: { type: 'string', default: '50' } } });
const size = Number(values.mib) * 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), 'ordercli-hostile-'));

const header =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity\n';
const cases = [
  {
    name: `CSV with a ${values.mib} MiB customer.name cell`,
    file: join(work, 'big-cell.csv'),
    bytes: () => `${header}SO-1,1,"${'x'.repeat(size)}",1,1\n`,
  },
  {
    name: `NDJSON of one ${values.mib} MB line`,
    file: join(work, 'big-line.ndjson'),
    bytes: () =>
      `${JSON.stringify({ externalId: 'SO-1', contact: { internalReferenceId: 1 }, customer: { name: 'x'.repeat(size) }, items: [{ internalReferenceId: 1, orderedQuantity: 1 }] })}\n`,
  },
];

try {
  for (const c of cases) {
    writeFileSync(c.file, c.bytes());
    const started = performance.now();
    const run = spawnSync(
      '/usr/bin/time',
      ['-f', '%M', process.execPath, bin, 'orders', 'import', c.file, '--dry-run'],
      {
        encoding: 'utf8',
        env: { ...process.env, ORDERCLI_BASE_URL: '', ORDERCLI_TOKEN: '' },
        maxBuffer: 1024 * 1024 * 1024,
      },
    );
    const seconds = (performance.now() - started) / 1000;
    const lines = run.stderr.trimEnd().split('\n');
    const peakKb = Number(lines.pop());
    const stderrBytes = Buffer.byteLength(lines.join('\n'));
    console.log(
      `${c.name}: exit ${run.status}, peak RSS ${(peakKb / 1024).toFixed(0)} MB, ${seconds.toFixed(1)} s, stderr ${stderrBytes} bytes: ${lines[0]?.slice(0, 160)}`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
