#!/usr/bin/env node
// Writes a large, valid order file for benchmarks (not a test): partner-style orders whose ids
// exist in the sandbox seed (contact references 301-308, active packaging references 401-443).
//
//   node bench/gen-orders.mjs --rows 1000000 --format csv --out /tmp/orders-1m.csv
//   node bench/gen-orders.mjs --rows 200000 --format ndjson --out /tmp/orders.ndjson --items 2
//
// --rows N         CSV: N item rows (orders of 1 to --items rows each); JSON/NDJSON: N orders
// --format F       csv (default), ndjson or json
// --items K        at most K items per order (default 3; the count cycles 1..K)
// --delimiter D    CSV delimiter: , (default) ; or tab
// --product-codes  name packagings by item.productCode (+ packagingName) instead of internalReferenceId
// --prefix P       externalId prefix (default GEN-), so that several files do not collide
// --out PATH       the file to write (default: stdout)
import { once } from 'node:events';
import { createWriteStream, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    format: { type: 'string', default: 'csv' },
    items: { type: 'string', default: '3' },
    delimiter: { type: 'string', default: ',' },
    'product-codes': { type: 'boolean', default: false },
    prefix: { type: 'string', default: 'GEN-' },
    out: { type: 'string' },
  },
});

const rows = Number(values.rows);
const maxItems = Number(values.items);
const format = values.format;
const delimiter = values.delimiter === 'tab' ? '\t' : values.delimiter;
if (!Number.isInteger(rows) || rows < 1)
  throw new Error(`--rows must be a whole number above 0, not ${values.rows}`);
if (!Number.isInteger(maxItems) || maxItems < 1)
  throw new Error(`--items must be a whole number above 0, not ${values.items}`);
if (!['csv', 'ndjson', 'json'].includes(format))
  throw new Error(`--format must be csv, ndjson or json, not ${format}`);

// Active references from the seed, with their product code and packaging name.
const seedDir = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/sandbox');
const packagings = JSON.parse(readFileSync(join(seedDir, 'packaging_references.json'), 'utf8'))
  .filter((reference) => reference.active)
  .map((reference) => ({
    id: reference.id,
    code: reference.packaging.product.code,
    name: reference.packaging.name,
  }));
const contacts = JSON.parse(readFileSync(join(seedDir, 'contact_references.json'), 'utf8'));
const CITIES = [
  ['01000', 'Bourg-en-Bresse'],
  ['29200', 'Brest'],
  ['69002', 'Lyon'],
  ['05000', 'Gap'],
  ['33000', 'Bordeaux'],
];

const out = values.out ? createWriteStream(values.out) : process.stdout;
let buffer = '';
async function write(text) {
  buffer += text;
  if (buffer.length < 1 << 16) return;
  const chunk = buffer;
  buffer = '';
  if (!out.write(chunk)) await once(out, 'drain');
}

function orderAt(n, itemCount) {
  const contact = contacts[n % contacts.length];
  const [zipCode, city] = CITIES[n % CITIES.length];
  const items = [];
  for (let i = 0; i < itemCount; i++) {
    const packaging = packagings[(n * 7 + i * 13) % packagings.length];
    const quantity = ((n + i) % 48) + 1;
    items.push(
      values['product-codes']
        ? { productCode: packaging.code, packagingName: packaging.name, orderedQuantity: quantity }
        : { internalReferenceId: packaging.id, orderedQuantity: quantity },
    );
  }
  return {
    externalId: `${values.prefix}${String(n + 1).padStart(8, '0')}`,
    externalReference: `PO-${String(n + 1).padStart(8, '0')}`,
    contact: { internalReferenceId: contact.id },
    customer: { name: contact.customer.name },
    deliveryAddress: {
      recipient: `${contact.contact.firstName} ${contact.contact.lastName}`,
      street: `${(n % 120) + 1} rue de la République`,
      zipCode,
      city,
      country: 'FR',
    },
    items,
  };
}

function csvCell(value) {
  const text = value === undefined ? '' : String(value);
  return text.includes(delimiter) || /["\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const itemColumns = values['product-codes']
  ? ['item.productCode', 'item.packagingName', 'item.orderedQuantity']
  : ['item.internalReferenceId', 'item.orderedQuantity'];
const orderColumns = [
  'externalId',
  'externalReference',
  'contact.internalReferenceId',
  'customer.name',
  'deliveryAddress.recipient',
  'deliveryAddress.street',
  'deliveryAddress.zipCode',
  'deliveryAddress.city',
  'deliveryAddress.country',
];

function get(object, path) {
  return path.split('.').reduce((node, key) => node?.[key], object);
}

if (format === 'csv') {
  await write(`${[...orderColumns, ...itemColumns].join(delimiter)}\n`);
  let written = 0;
  for (let n = 0; written < rows; n++) {
    const order = orderAt(n, Math.min((n % maxItems) + 1, rows - written));
    order.items.forEach((item, i) => {
      // Every row carries the externalId (it groups the rows); other order cells only the first.
      const orderCells = orderColumns.map((path) =>
        i === 0 || path === 'externalId' ? csvCell(get(order, path)) : '',
      );
      const itemCells = itemColumns.map((path) => csvCell(item[path.slice('item.'.length)]));
      buffer += `${[...orderCells, ...itemCells].join(delimiter)}\n`;
    });
    written += order.items.length;
    await write('');
  }
} else {
  if (format === 'json') await write('[\n');
  for (let n = 0; n < rows; n++) {
    const text = JSON.stringify(orderAt(n, (n % maxItems) + 1));
    if (format === 'json') await write(`${n === 0 ? '' : ',\n'}  ${text}`);
    else await write(`${text}\n`);
  }
  if (format === 'json') await write('\n]\n');
}
if (buffer !== '') out.write(buffer);
if (values.out) {
  out.end();
  await once(out, 'finish');
}
