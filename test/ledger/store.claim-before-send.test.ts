/**
 * The claim is in the ledger — on disk for the local store, committed for PostgreSQL — when the
 * order's request reaches the service: checked by the service itself (an HTTP server of this test
 * on 127.0.0.1), which reads the ledger from here, another process, as each request arrives.
 * Through the built binary, for `orders create` and `orders import`, against both stores.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/open.js';
import type { LedgerEntry } from '../../src/ledger/record.js';
import { runBin, tempDir } from '../support/cli.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../support/postgres.js';

const hasPostgres = requirePostgres(
  'the claim-before-send test on PostgreSQL (test/ledger/store.claim-before-send.test.ts)',
);

/** What the service saw of each order's claim as its request arrived. */
interface Seen {
  externalId: string;
  entry: LedgerEntry | undefined;
  /** Local store: the claim's line was in the write-ahead log (synced) already. */
  inLog?: boolean;
}

interface Backend {
  name: string;
  /** The `--ledger` value, and the folder of a local ledger. */
  ledger: string;
  folder?: string;
}

/** A service that, before answering each POST, reads the order's state in the ledger. */
async function startCheckingService(
  backend: () => Backend,
  seen: Seen[],
): Promise<{ url: string; server: Server }> {
  let next = 1;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const { externalId } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { externalId: string };
      const { ledger, folder } = backend();
      const store = await openLedger(
        { ledger, configFolder: tempDir(), cwd: process.cwd() },
        { baseUrl: url, kind: 'orders', source: { by: 'orders resolve' }, readOnly: true },
      );
      const entry = await store.lookup(externalId);
      await store.close();
      const record: Seen = { externalId, entry };
      if (folder) record.inLog = logHolds(folder, externalId, entry?.token);
      seen.push(record);
      const id = next++;
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id, code: `SO-${id}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, server };
}

/** Whether a write-ahead log of the local ledger holds the claim of `externalId` with `token`. */
function logHolds(root: string, externalId: string, token: string | undefined): boolean {
  for (const service of readdirSync(root)) {
    const wal = join(root, service, 'wal');
    let names: string[];
    try {
      names = readdirSync(wal);
    } catch {
      continue;
    }
    for (const name of names) {
      const lines = readFileSync(join(wal, name), 'utf8').split('\n');
      if (
        lines.some(
          (line) =>
            line.includes(`"externalId":${JSON.stringify(externalId)}`) &&
            line.includes('"event":"claim"') &&
            token !== undefined &&
            line.includes(token),
        )
      )
        return true;
    }
  }
  return false;
}

function order(externalId: string): Record<string, unknown> {
  const address = { recipient: 'A', street: '1 rue', zipCode: '75001', city: 'Paris', country: 'FR' };
  return {
    externalId,
    contact: { id: 1 },
    customer: { name: 'ACME' },
    invoicingAddress: address,
    deliveryAddress: address,
    items: [{ packaging: 1, orderedQuantity: 2 }],
  };
}

const backends: { name: string; available: boolean }[] = [
  { name: 'local', available: true },
  { name: 'postgres', available: hasPostgres },
];

describe.each(backends)(
  'the $name ledger holds the claim when the request arrives',
  ({ name, available }) => {
    const seen: Seen[] = [];
    let backend: Backend;
    let service: { url: string; server: Server };
    let postgres: RunningPostgres | undefined;

    beforeAll(async () => {
      if (!available) return;
      if (name === 'postgres') {
        postgres = (await startPostgres())!;
        backend = { name, ledger: postgres.url };
      } else {
        const folder = tempDir('ordercli-ledger-');
        backend = { name, ledger: folder, folder };
      }
      service = await startCheckingService(() => backend, seen);
    }, 120_000);

    afterAll(async () => {
      service?.server.close();
      await postgres?.stop();
    });

    it.runIf(available)('for orders create and every order of an import, through the binary', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'order.json'), JSON.stringify(order('ONE-1')));
      writeFileSync(
        join(dir, 'orders.ndjson'),
        Array.from({ length: 20 }, (_, i) => JSON.stringify(order(`MANY-${i + 1}`))).join('\n'),
      );
      const global = ['--base-url', service.url, '--token', 't'];
      // In the environment, as a fleet gives a password (on the command line it draws a warning).
      const env = { ORDERCLI_LEDGER: backend.ledger };
      const created = await runBin([...global, 'orders', 'create', '--file', 'order.json'], {
        cwd: dir,
        env,
      });
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const imported = await runBin([...global, 'orders', 'import', 'orders.ndjson', '--concurrency', '4'], {
        cwd: dir,
        env,
      });
      expect(imported.code, imported.stderr).toBe(0);
      expect(seen.map((s) => s.externalId).sort()).toEqual(
        ['ONE-1', ...Array.from({ length: 20 }, (_, i) => `MANY-${i + 1}`)].sort(),
      );
      for (const { externalId, entry, inLog } of seen) {
        expect(entry?.status, externalId).toBe('claimed');
        expect(entry?.owner?.pid, externalId).toBeGreaterThan(0);
        if (backend.folder) expect(inLog, `${externalId}: its claim in the write-ahead log`).toBe(true);
      }
    });
  },
);
