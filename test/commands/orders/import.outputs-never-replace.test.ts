// --report and --rejects never replace what the import reads or keeps: the input (also through a
// link), the order ledger, a journal an earlier release left that is not folded yet, the config
// file, or each other. Exit 2 before anything is
// read or sent, naming both, every file as it was. Through the binary, against the sandbox.
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runBin, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
const FIXTURE = join(ROOT, 'fixtures/orders/orders.csv');

async function importWith(dir: string, ...args: string[]) {
  return runBin(
    ['--base-url', sandbox.url, '--token', sandbox.tokens.full, 'orders', 'import', 'orders.csv', ...args],
    {
      cwd: dir,
      env: { ORDERCLI_CONFIG_DIR: join(dir, 'config') },
    },
  );
}

function setUp(): string {
  const dir = tempDir();
  copyFileSync(FIXTURE, join(dir, 'orders.csv'));
  return dir;
}

describe('an output that is a file the import reads or keeps', () => {
  it('--rejects or --report onto the input (or a link to it): exit 2, the input intact, nothing sent', async () => {
    const dir = setUp();
    const original = readFileSync(FIXTURE, 'utf8');
    const rejects = await importWith(dir, '--rejects', 'orders.csv');
    expect(rejects.code).toBe(2);
    expect(rejects.stderr).toContain(
      'error: --rejects orders.csv is the input orders.csv: writing it would destroy it; nothing was read or sent.',
    );
    symlinkSync(join(dir, 'orders.csv'), join(dir, 'link.csv'));
    const report = await importWith(dir, '--report', 'link.csv');
    expect(report.code).toBe(2);
    expect(report.stderr).toContain('--report link.csv is the input orders.csv');
    expect(readFileSync(join(dir, 'orders.csv'), 'utf8')).toBe(original);
    expect(sandbox.orders()).toHaveLength(0);
  });

  it('--report into the ledger folder, or onto --rejects: exit 2 naming both', async () => {
    const dir = setUp();
    // A first run makes the ledger.
    expect((await importWith(dir, '--ledger', 'state')).code).toBe(0);

    mkdirSync(join(dir, 'state', 'x'), { recursive: true });
    const inLedger = await importWith(dir, '--ledger', 'state', '--report', 'state/x/report.csv');
    expect(inLedger.code).toBe(2);
    expect(inLedger.stderr).toContain('--report state/x/report.csv is inside the order ledger');

    const twice = await importWith(dir, '--ledger', 'state', '--report', 'out.csv', '--rejects', './out.csv');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--rejects ./out.csv is --report out.csv');
    expect(sandbox.orders()).toHaveLength(3);
  });

  it('--report onto a journal of an earlier release, not folded yet: its records are never lost, even when invalid input stops the import', async () => {
    const dir = tempDir();
    // An invalid order (quantity 0): exit 2, and the report is written before anything is sent.
    writeFileSync(
      join(dir, 'orders.csv'),
      'externalId,contact.internalReferenceId,item.internalReferenceId,item.orderedQuantity\nA-1,301,401,0\n',
    );
    // The only record of an order the old release created (its ledger was lost).
    const journal = `${JSON.stringify({ event: 'created', externalId: 'OLD-1', baseUrl: sandbox.url, at: '2026-01-01T00:00:00.000Z', id: 7 })}\n`;
    writeFileSync(join(dir, 'orders.csv.journal.ndjson'), journal);
    const result = await importWith(dir, '--report', 'orders.csv.journal.ndjson');
    expect(result.code).toBe(2);
    // Refused, or folded into the ledger first: either way what it recorded is still somewhere.
    const kept = [join(dir, 'orders.csv.journal.ndjson'), join(dir, 'orders.csv.journal.ndjson.folded')]
      .filter((path) => existsSync(path))
      .map((path) => readFileSync(path, 'utf8'));
    expect(kept).toContain(journal);
    expect(sandbox.orders()).toHaveLength(0);
  });
});
