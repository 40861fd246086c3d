// `ledger status` on the local ledger, against a real sandbox: where the ledger is, its keys by
// status for each service and kind, and the processes that have it open, alive or not.
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { thisProcess } from '../../../src/core/liveness.js';
import { ledgerFolder } from '../../../src/ledger/local.js';
import { runBin } from '../../support/cli.js';
import { orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';
import { at, machine, ORDERS_PATH, posts, seedEveryStatus } from './seed.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

interface StatusReport {
  location: string;
  backend: string;
  services: { service: string; kind: string; counts: Record<string, number> }[];
  openers: { pid: number; host: string; alive: string; services: string[] }[];
}

describe('ledger status', () => {
  it('says where the ledger is and counts its keys by status, per service and kind (exit 0)', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const json = await on.run(['--json', 'ledger', 'status']);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report).toEqual({
      location: join(on.configDir, 'ledger'),
      backend: 'local',
      services: [
        {
          service: sandbox.url,
          kind: 'orders',
          counts: {
            'in-doubt': 1,
            claimed: 0,
            created: 3,
            validated: 0,
            failed: 1,
            'not-created': 1,
            total: 6,
          },
        },
      ],
      openers: [],
    });
    const text = await on.run(['ledger', 'status']);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`Order ledger: ${join(on.configDir, 'ledger')} (local folder)`);
    expect(lines[1]).toMatch(
      /^SERVICE\s+KIND\s+IN DOUBT\s+CLAIMED\s+CREATED\s+VALIDATED\s+FAILED\s+NOT CREATED\s+TOTAL$/,
    );
    expect(lines[2]).toMatch(new RegExp(`^${sandbox.url}\\s+orders\\s+1\\s+0\\s+3\\s+0\\s+1\\s+1\\s+6$`));
    expect(lines[3]).toBe('No ordercli has it open.');
  });

  it('a ledger with nothing yet, in the folder --ledger names', async () => {
    const on = machine();
    const result = await on.run(['--ledger', 'state/ledger', 'ledger', 'status']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `Order ledger: ${join(on.cwd, 'state/ledger')} (local folder)\nIt holds no keys yet.\nNo ordercli has it open.\n`,
    );
  });

  it('lists the processes that have it open: a running import alive, a dead one dead', async () => {
    const on = machine();
    writeNdjson(on.cwd, 'held.ndjson', orders(1, 'HELD'));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    sandbox.scriptFaults([{ method: 'POST', path: ORDERS_PATH, kind: 'delay', until: held }]);
    const running = on.run([...at(sandbox), 'orders', 'import', 'held.ndjson']);
    try {
      await waitFor(() => posts(sandbox) === 1, 10_000, 'the POST of HELD-00001');
      // A heartbeat left by a process that no longer runs (a PID above any the kernel gives).
      const owners = join(ledgerFolder(join(on.configDir, 'ledger'), sandbox.url), 'owners');
      mkdirSync(owners, { recursive: true });
      const gone = { ...thisProcess(), pid: 4_194_305, id: 'gone-owner' };
      writeFileSync(join(owners, 'gone-owner'), `${JSON.stringify(gone)}\n1\n`);
      const result = await on.run(['--json', 'ledger', 'status']);
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as StatusReport;
      expect(report.services[0]?.counts).toMatchObject({ claimed: 1, total: 1 });
      expect(report.openers).toEqual(
        expect.arrayContaining([
          { pid: process.pid, host: hostname(), alive: 'alive', services: [sandbox.url] },
          expect.objectContaining({ pid: 4_194_305, alive: 'dead' }),
        ]),
      );
      const text = await on.run(['ledger', 'status']);
      expect(text.stdout).toContain(`Open by:\n`);
      expect(text.stdout).toContain(`  pid ${process.pid} on ${hostname()}  alive  ${sandbox.url}\n`);
    } finally {
      release();
    }
    expect((await running).code).toBe(0);
  });

  it('through the built binary', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const result = await runBin(['ledger', 'status'], { env: on.env, cwd: on.cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${join(on.configDir, 'ledger')} (local folder)`);
  });
});
