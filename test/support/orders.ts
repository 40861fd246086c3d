/** Inputs and checks shared by the import tests: generated orders the sandbox accepts, the ledger. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalLedger } from '../../src/ledger/local.js';
import type { LedgerEntry } from '../../src/ledger/record.js';
import type { LedgerKind } from '../../src/ledger/store.js';
import type { Sandbox } from '../../src/sandbox/server.js';

/** Active packaging references of the seed (417, 421, 444-446 are inactive). */
const PACKAGING_REFERENCES = [401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412];
const CONTACT_REFERENCES = [301, 302, 303, 304, 305, 306, 307, 308];

export function externalId(i: number, prefix = 'EXT'): string {
  return `${prefix}-${String(i).padStart(5, '0')}`;
}

/** Order number `i` (1-based) as a partner application would send it. */
export function order(i: number, prefix = 'EXT'): Record<string, unknown> {
  return {
    externalId: externalId(i, prefix),
    externalReference: `PO-${i}`,
    contact: { internalReferenceId: CONTACT_REFERENCES[i % CONTACT_REFERENCES.length] },
    customer: { name: `Épicerie n°${i}` },
    deliveryAddress: {
      recipient: 'Réception',
      street: '1 rue des Halles',
      zipCode: '01000',
      city: 'Bourg',
      country: 'FR',
    },
    items: [
      {
        internalReferenceId: PACKAGING_REFERENCES[i % PACKAGING_REFERENCES.length],
        orderedQuantity: 1 + (i % 5),
      },
    ],
  };
}

export function orders(count: number, prefix = 'EXT'): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => order(i + 1, prefix));
}

/** Writes orders as NDJSON, one per line (line n holds order n). */
export function writeNdjson(dir: string, name: string, list: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${list.map((o) => JSON.stringify(o)).join('\n')}\n`);
  return path;
}

export const CSV_HEADER =
  'externalId,externalReference,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';

/** A CSV of `count` orders, one row each (line n+1 holds order n), after the header. */
export function csvOf(count: number, prefix = 'EXT'): string {
  const rows = Array.from({ length: count }, (_, index) => {
    const i = index + 1;
    const o = order(i, prefix) as {
      contact: { internalReferenceId: number };
      items: { internalReferenceId: number; orderedQuantity: number }[];
    };
    return [
      externalId(i, prefix),
      `PO-${i}`,
      o.contact.internalReferenceId,
      `Client ${i}`,
      o.items[0]!.internalReferenceId,
      o.items[0]!.orderedQuantity,
    ].join(',');
  });
  return `${CSV_HEADER}\n${rows.join('\n')}\n`;
}

export function readLines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** How many orders the sandbox holds per externalId. */
export function createdCounts(sandbox: Sandbox): Map<string, number> {
  const counts = new Map<string, number>();
  for (const stored of sandbox.orders()) {
    const id = String(stored.externalId);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

export function postsTo(sandbox: Sandbox): number {
  return sandbox.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/orders').length;
}

/**
 * What the local order ledger at `root` (a config folder's `ledger/`, or `--ledger <dir>`) holds
 * of the orders (or another kind) of `baseUrl`, by key: every key, or with `inputs` the history of
 * an input (the keys whose state names one of these identities, as `orders journal` reads it).
 */
export async function ledgerHistory(
  root: string,
  baseUrl: string,
  inputs?: string[],
  kind: LedgerKind = 'orders',
): Promise<Map<string, LedgerEntry>> {
  const ledger = await LocalLedger.open(root, {
    baseUrl,
    kind,
    source: { by: 'orders import' },
    readOnly: true,
  });
  try {
    const listed = await ledger.list(inputs === undefined ? {} : { inputs });
    return new Map(listed.map(({ externalId, entry }) => [externalId, entry]));
  } finally {
    await ledger.close();
  }
}

/** Parses the CSV report written by `--report x.csv` (no quoted commas in these tests' values). */
export function readCsvReport(path: string): Record<string, string>[] {
  const [header, ...rows] = readFileSync(path, 'utf8').trimEnd().split('\r\n');
  const names = header!.split(',');
  return rows.map((row) => {
    const cells = splitCsvRow(row);
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? '']));
  });
}

function splitCsvRow(row: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < row.length; i++) {
    const ch = row[i]!;
    if (quoted) {
      if (ch === '"' && row[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}
