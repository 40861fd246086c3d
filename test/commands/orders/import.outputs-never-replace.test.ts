// --report and --rejects never replace what the import reads or keeps: the input (also through a
// link), the order ledger, the config file, or each other. Exit 2 before anything is
// read or sent, naming both, every file as it was. Through the binary, against the sandbox.
import { copyFileSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
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
});
