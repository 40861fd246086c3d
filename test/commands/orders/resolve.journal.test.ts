// `orders resolve` and `orders journal` on an order ledger written through its store and on listen
// logs written by hand: the shapes a listen log may hold, an input sent to several services.
// No request is made: both commands query and write the order ledger only (no file beside the input).
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { LocalLedger } from '../../../src/ledger/local.js';
import type { RecordSource } from '../../../src/ledger/record.js';
import { runCli, tempDir } from '../../support/cli.js';
import { ledgerHistory } from '../../support/orders.js';

const A = 'http://127.0.0.1:4001';
const B = 'http://127.0.0.1:4002';

/** The config folder of this test's commands, whose `ledger/` the test writes. */
let config: string;
beforeEach(() => {
  config = tempDir('ordercli-config-');
});

function run(args: string[], cwd: string) {
  return runCli(args, { cwd, env: { ORDERCLI_CONFIG_DIR: config } });
}

type Seeded = { externalId: string; line: number } & (
  | { outcome: 'unknown'; reason: string }
  | { outcome: 'created'; id: number; code: string }
);

/** Records orders as an import of `source.input` (its identity) at `baseUrl` left them. */
async function seed(baseUrl: string, orders: Seeded[], source: RecordSource): Promise<void> {
  const ledger = await LocalLedger.open(join(config, 'ledger'), { baseUrl, kind: 'orders', source });
  try {
    for (const order of orders) {
      const result = await ledger.claim({ externalId: order.externalId, bodyHash: 'h', line: order.line });
      if (!result.claimed) throw new Error(`could not claim ${order.externalId}`);
      if (order.outcome === 'unknown') ledger.unknown(result.claim, order.reason);
      else ledger.created(result.claim, { httpStatus: 201, id: order.id, code: order.code });
    }
    await ledger.sync();
  } finally {
    await ledger.close();
  }
}

const IMPORT: RecordSource = { by: 'orders import', input: 'orders.ndjson' };
const STOPPED = 'the run that sent it stopped before the answer';

function event(name: string, body: unknown): string {
  return JSON.stringify({ receivedAt: '2026-11-23T10:00:01.000Z', event: name, headers: {}, body });
}

describe('orders resolve --from-events', () => {
  it('reads an order, an array of orders and an order one level down; passes over the rest', async () => {
    const dir = tempDir();
    const unknown = ['U-1', 'U-2', 'U-3', 'U-4', 'U-5'];
    await seed(
      A,
      [
        ...unknown.map(
          (externalId, i): Seeded => ({
            externalId,
            line: i + 2,
            outcome: 'unknown',
            reason: i === 0 ? 'reset' : STOPPED,
          }),
        ),
        { externalId: 'C-1', line: 9, outcome: 'created', id: 7, code: 'SO-7' },
      ],
      IMPORT,
    );
    writeFileSync(
      join(dir, 'events.ndjson'),
      [
        event('sales_order_validated', { id: 11, code: 'SO-11', externalId: 'U-1' }),
        event('sales_order_validated', [{ id: 12, code: 'SO-12', externalId: 'U-2' }, 'noise']),
        event('sales_order_validated', { order: { id: 13, code: 'SO-13', externalId: 'U-3' } }),
        event('sales_order_validated', { id: 14, code: 'SO-14' }),
        event('contact_updated', { id: 15, externalId: 'U-4' }),
        event('sales_order_validated', { id: 16, code: 'SO-16', externalId: 'C-1' }),
        '{"receivedAt": "torn',
      ].join('\n'),
    );
    const result = await run(
      ['--json', 'orders', 'resolve', 'orders.ndjson', '--from-events', 'events.ndjson'],
      dir,
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ journal: 'orders.ndjson', baseUrl: A });
    // In input order (the lines they were sent from).
    expect(report.changed).toEqual([
      expect.objectContaining({ externalId: 'U-1', from: 'unknown', to: 'created', id: 11, code: 'SO-11' }),
      expect.objectContaining({ externalId: 'U-2', to: 'created', id: 12, code: 'SO-12' }),
      expect.objectContaining({ externalId: 'U-3', to: 'created', id: 13, code: 'SO-13' }),
    ]);
    expect(report.events).toMatchObject({ lines: 7, validated: 5, skipped: 1, matched: 3 });
    expect(report.stillUnknown).toBe(2);

    const shown = JSON.parse((await run(['--json', 'orders', 'journal', 'orders.ndjson'], dir)).stdout);
    expect(shown).toMatchObject({ journal: 'orders.ndjson', baseUrl: A, kind: 'orders', otherBaseUrls: [] });
    expect(shown.counts).toEqual({
      created: 1,
      resolvedCreated: 3,
      failed: 0,
      resolvedNotCreated: 0,
      unknown: 2,
      sending: 0,
      validated: 0,
      total: 6,
    });
    expect(shown.unknown).toEqual([
      { externalId: 'U-4', line: 5, sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), reason: STOPPED },
      { externalId: 'U-5', line: 6, sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), reason: STOPPED },
    ]);
    // Only the listen log beside the input: nothing of ordercli's own.
    expect(readdirSync(dir)).toEqual(['events.ndjson']);
  });

  it('a listen log that cannot be read is bad usage, and the ledger is left alone', async () => {
    const dir = tempDir();
    await seed(A, [{ externalId: 'U-1', line: 1, outcome: 'unknown', reason: STOPPED }], IMPORT);
    const before = await ledgerHistory(join(config, 'ledger'), A);
    const result = await run(['orders', 'resolve', 'orders.ndjson', '--from-events', 'missing.ndjson'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Cannot read the listen log missing.ndjson (ENOENT)');
    expect(await ledgerHistory(join(config, 'ledger'), A)).toEqual(before);
  });
});

describe('an input sent to several services', () => {
  it('resolve asks which service unless the configured base URL is one of them', async () => {
    const dir = tempDir();
    // Standard input named by --journal state: its history is found by that name.
    const source: RecordSource = { by: 'orders import', input: '(stdin)', journal: 'state' };
    await seed(A, [{ externalId: 'U-1', line: 1, outcome: 'unknown', reason: STOPPED }], source);
    await seed(B, [{ externalId: 'U-1', line: 1, outcome: 'unknown', reason: STOPPED }], source);
    const ambiguous = await run(['orders', 'resolve', 'state', '--created', 'U-1'], dir);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(
      `The order ledger holds orders of state for 2 services (${A}, ${B}), and no --base-url was given: say which with --base-url.`,
    );
    const listedAmbiguous = await run(['orders', 'journal', 'state'], dir);
    expect(listedAmbiguous.code).toBe(2);

    const chosen = await run(
      ['--base-url', `${B}/`, 'orders', 'resolve', 'state', '--created', 'U-1=SO-9'],
      dir,
    );
    expect(chosen.code, chosen.stderr).toBe(0);
    // Named by its --journal name, the input is not known: the hint names no file to import.
    expect(chosen.stdout).toContain('Next: run the same import again: it skips');
    expect((await ledgerHistory(join(config, 'ledger'), B)).get('U-1')).toMatchObject({
      status: 'created',
      resolved: 'created',
      id: 'SO-9',
      journal: 'state',
    });
    // The other service's order is left as it was.
    expect((await ledgerHistory(join(config, 'ledger'), A)).get('U-1')).toMatchObject({ status: 'in-doubt' });

    const shown = await run(['--base-url', A, 'orders', 'journal', 'state'], dir);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^Orders of state in the order ledger of ${A}:\n`));
    expect(shown.stdout).toMatch(/unknown +1/);
    expect(shown.stdout).toContain(`Also for ${B}: 1 order, 0 unknown`);
    expect(readdirSync(dir)).toEqual([]);
  });
});
