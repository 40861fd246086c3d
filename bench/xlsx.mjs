#!/usr/bin/env node
// Memory and time of `ordercli orders import big.xlsx --dry-run` (the built binary, whole
// process): a workbook of 100,000 item rows (about 33,000 orders of 1 to 5 items, French data,
// strings shared as Excel writes them, a zip code formatted `00000`, a date, a formula) made with
// exceljs's streaming writer, then validated. Reports the wall time and the peak RSS (`/usr/bin/time
// -v` when present, else VmHWM polled from /proc). Target: peak under 300 MB at any size
// (`--rows 1048575` is about Excel's maximum of 1,048,576 rows a sheet; generating that workbook
// takes a minute or two). Not a test: run it by hand on a quiet machine; it sends nothing anywhere.
// Figures: docs/performance.md, "Excel workbooks".
//
// Usage: npm run build && node bench/xlsx.mjs [--rows 100000] [--keep]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ExcelJS from 'exceljs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.BENCH_BIN ?? join(root, 'bin/ordercli.js');
const { values } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, keep: { type: 'boolean', default: false } },
});
const ROWS = Number(values.rows);
const TARGET_MB = 300;
if (!existsSync(join(root, 'dist/cli/main.js'))) throw new Error('run `npm run build` first');

const work = mkdtempSync(join(tmpdir(), 'ordercli-bench-xlsx-'));
const input = join(work, 'big.xlsx');
const map = join(work, 'colonnes.json');
writeFileSync(
  map,
  JSON.stringify({
    'N° commande': 'externalId',
    'Date de commande': 'externalReference',
    Contact: 'contact.internalReferenceId',
    Client: 'customer.name',
    Destinataire: 'deliveryAddress.recipient',
    Adresse: 'deliveryAddress.street',
    'Code postal': 'deliveryAddress.zipCode',
    Ville: 'deliveryAddress.city',
    Pays: 'deliveryAddress.country',
    Article: 'item.internalReferenceId',
    Qté: 'item.orderedQuantity',
  }),
);

const CITIES = [
  ['Bourg-en-Bresse', 1000],
  ['Brest', 29200],
  ['Besançon', 25000],
  ['Nîmes', 30000],
  ['Évreux', 27000],
  ['Saint-Étienne', 42000],
];
const NAMES = ['Camille Rousseau', 'Gaëlle Morvan', 'Zoé Lefèvre', 'Jérôme Dupré', 'Hélène Gaudin'];
const ARTICLES = [401, 402, 403, 404, 410, 413];

let started = performance.now();
const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
  filename: input,
  useSharedStrings: true,
  useStyles: true,
});
const sheet = workbook.addWorksheet('Commandes');
sheet.addRow(['Commandes de la semaine 48']).commit();
sheet
  .addRow([
    'N° commande',
    'Date de commande',
    'Contact',
    'Client',
    'Destinataire',
    'Adresse',
    'Code postal',
    'Ville',
    'Pays',
    'Article',
    'Qté',
  ])
  .commit();
let order = 0;
for (let row = 0; row < ROWS; ) {
  order++;
  const items = 1 + (order % 5);
  const [city, zip] = CITIES[order % CITIES.length];
  for (let item = 0; item < items && row < ROWS; item++, row++) {
    const first = item === 0;
    const cells = [
      `CMD-${String(order).padStart(7, '0')}`,
      first ? new Date(Date.UTC(2026, 10, 1 + (order % 28))) : null,
      first ? 301 + (order % 8) : null,
      first ? `Épicerie n°${order}` : null,
      first ? NAMES[order % NAMES.length] : null,
      first ? `${order % 200} rue des Tanneurs` : null,
      first ? zip : null,
      first ? city : null,
      first ? 'FR' : null,
      ARTICLES[(order + item) % ARTICLES.length],
      { formula: `${1 + (item % 3)}*6`, result: (1 + (item % 3)) * 6 },
    ];
    const added = sheet.addRow(cells);
    added.getCell(2).numFmt = 'dd/mm/yyyy';
    added.getCell(7).numFmt = '00000';
    added.commit();
  }
}
sheet.commit();
await workbook.commit();
const generatedMs = performance.now() - started;
const size = statSync(input).size;
console.log(
  `generated ${input}: ${ROWS.toLocaleString('en')} rows, ${order.toLocaleString('en')} orders, ${(size / 1024 / 1024).toFixed(1)} MiB in ${(generatedMs / 1000).toFixed(1)} s`,
);

const env = { ...process.env, ORDERCLI_CONFIG_DIR: join(work, 'config') };
for (const key of Object.keys(env))
  if (key.startsWith('ORDERCLI_') && key !== 'ORDERCLI_CONFIG_DIR') delete env[key];
const args = [bin, 'orders', 'import', input, '--map', map, '--dry-run'];
const useTime = existsSync('/usr/bin/time');
started = performance.now();
const child = useTime
  ? spawn('/usr/bin/time', ['-v', process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  : spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
let stderr = '';
child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
child.stdout.resume();
let polledKb = 0;
const poll = useTime
  ? undefined
  : setInterval(() => {
      try {
        const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (match) polledKb = Math.max(polledKb, Number(match[1]));
      } catch {
        // The process has ended.
      }
    }, 20);
const code = await new Promise((resolve) => child.on('close', resolve));
const wallMs = performance.now() - started;
if (poll) clearInterval(poll);
const timeKb = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1];
const peakMb = (timeKb ? Number(timeKb) : polledKb) / 1024;
const summary = stderr.split('\n').find((line) => line.startsWith('Dry run of')) ?? stderr.slice(0, 400);
console.log(summary);
console.log(
  `dry run: exit ${code}, ${(wallMs / 1000).toFixed(1)} s wall, peak RSS ${peakMb.toFixed(0)} MB (${timeKb ? '/usr/bin/time -v' : 'VmHWM polled'}); target < ${TARGET_MB} MB: ${peakMb < TARGET_MB ? 'met' : 'MISSED'}`,
);
console.log(
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} on this machine (figures are low when it is busy)`,
);
if (!values.keep) rmSync(work, { recursive: true, force: true });
process.exitCode = code === 0 && peakMb < TARGET_MB ? 0 : 1;
