// The fleet case in miniature: two checkouts of one repository (A and B, each with
// exports/orders.csv) share one order ledger (`--ledger <dir>`). A's import leaves orders in doubt;
// from B, `orders journal exports/orders.csv` lists them, `orders resolve exports/orders.csv`
// settles them, and B's re-run sends exactly those that were not created, once. An input's history
// is a query of the ledger by the input's identity (its path relative to the working directory),
// never a file beside the input. The second case kills A's built binary with kill -9 (needs
// `npm run build` first).
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli, tempDir, testEnv } from '../../support/cli.js';
import { createdCounts, csvOf, externalId } from '../../support/orders.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../../support/postgres.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 10 });
const hasPostgres = requirePostgres(
  'the fleet case on a PostgreSQL ledger (test/commands/orders/journal.fleet.test.ts)',
);
const ORDERS = 10;
const INPUT = 'exports/orders.csv';

/** A checkout of the repository: its own folder, with exports/orders.csv. */
function checkout(): string {
  const root = tempDir('ordercli-checkout-');
  mkdirSync(join(root, 'exports'));
  writeFileSync(join(root, INPUT), csvOf(ORDERS));
  return root;
}

/** The externalIds of the POSTs the sandbox received (sent, whatever the answer). */
function posted(): string[] {
  return sandbox.requests
    .filter((request) => request.method === 'POST' && request.path === '/api/v1/orders')
    .map((request) => String((request.body as { externalId?: unknown } | undefined)?.externalId));
}

describe('a fleet sharing one order ledger', () => {
  it('B lists and settles what A left in doubt, and its re-run sends each order not created once', async () => {
    const ledger = tempDir('ordercli-ledger-');
    const [a, b] = [checkout(), checkout()];
    // Each runner has its own config folder (runCli gives a fresh one): only the ledger is shared.
    const ordercli = (cwd: string, ...args: string[]) =>
      runCli(['--base-url', sandbox.url, '--token', sandbox.tokens.full, '--ledger', ledger, ...args], {
        cwd,
      });

    // A: orders 1 and 2 are created but their answers are lost; 3, 4 and 5 never reach the service.
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/orders', kind: 'reset-after', times: 2 },
      { method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read', times: 3 },
    ]);
    const first = await ordercli(a, 'orders', 'import', INPUT, '--concurrency', '1', '--json');
    expect(first.code, first.stderr).toBe(4);
    expect(JSON.parse(first.stdout)).toMatchObject({ journal: INPUT, counts: { created: 5, unknown: 5 } });
    const inDoubt = [1, 2, 3, 4, 5].map((i) => externalId(i));
    const atService = new Map(sandbox.orders().map((o) => [String(o.externalId), o]));
    expect([...atService.keys()].sort()).toEqual([1, 2, 6, 7, 8, 9, 10].map((i) => externalId(i)));

    // B, before anything is settled: its run holds back A's orders in doubt, and sends nothing.
    const before = posted().length;
    const held = await ordercli(b, 'orders', 'import', INPUT, '--json');
    expect(held.code, held.stderr).toBe(4);
    expect(JSON.parse(held.stdout).counts).toMatchObject({ created: 0, skipped: 5, unknown: 5 });
    expect(posted().length).toBe(before);

    // B lists them: the same relative path is the same input, whichever checkout runs it.
    const listed = await ordercli(b, '--json', 'orders', 'journal', INPUT);
    expect(listed.code, listed.stderr).toBe(0);
    const history = JSON.parse(listed.stdout);
    expect(history).toMatchObject({
      journal: INPUT,
      baseUrl: sandbox.url,
      kind: 'orders',
      counts: { created: 5, unknown: 5, total: 10 },
      otherBaseUrls: [],
    });
    // Each with the CSV line that sent it (order n on line n + 1, after the header).
    expect(history.unknown.map((o: { externalId: string; line: number }) => [o.externalId, o.line])).toEqual(
      inDoubt.map((id, i) => [id, i + 2]),
    );
    const text = await ordercli(b, 'orders', 'journal', INPUT);
    expect(text.stdout).toMatch(new RegExp(`^Orders of ${INPUT} in the order ledger of ${sandbox.url}:\n`));
    for (const id of inDoubt) expect(text.stdout).toContain(id);

    // B settles them: two exist at the service, three do not.
    const [one, two, ...notCreated] = inDoubt;
    const resolved = await ordercli(
      b,
      '--json',
      'orders',
      'resolve',
      INPUT,
      '--created',
      `${one}=${atService.get(one!)!.id}`,
      `${two}=${atService.get(two!)!.id}`,
      '--not-created',
      ...notCreated,
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({
      journal: INPUT,
      baseUrl: sandbox.url,
      stillUnknown: 0,
    });
    expect(JSON.parse(resolved.stdout).changed).toHaveLength(5);

    // B's re-run sends exactly the three not created, once each; A's listing agrees.
    const sentBefore = posted().length;
    const rerun = await ordercli(b, 'orders', 'import', INPUT, '--json');
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout).counts).toMatchObject({ created: 3, skipped: 7, unknown: 0 });
    expect(posted().slice(sentBefore).sort()).toEqual(notCreated.sort());
    const created = createdCounts(sandbox);
    expect(created.size).toBe(ORDERS);
    for (const [id, n] of created) expect(n, `${id} created ${n} times`).toBe(1);
    const fromA = JSON.parse((await ordercli(a, '--json', 'orders', 'journal', INPUT)).stdout);
    expect(fromA.counts).toMatchObject({ created: 8, resolvedCreated: 2, unknown: 0, total: 10 });

    // Neither checkout holds anything but its input.
    for (const root of [a, b]) {
      expect(readdirSync(root)).toEqual(['exports']);
      expect(readdirSync(join(root, 'exports'))).toEqual(['orders.csv']);
    }
  });
});

describe.each([
  { name: 'a local ledger folder', postgres: false, available: true },
  { name: 'PostgreSQL', postgres: true, available: hasPostgres },
])('a fleet sharing $name', ({ postgres, available }) => {
  const backend = { ledger: '' };
  let server: RunningPostgres | undefined;
  beforeAll(async () => {
    if (!available) return;
    if (postgres) server = (await startPostgres())!;
    backend.ledger = server?.url ?? tempDir('ordercli-ledger-');
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it.runIf(available)(
    'A killed with kill -9 mid-import: B lists its orders in doubt, settles them, and its re-run creates each order once',
    async () => {
      const ledger = backend.ledger;
      const [a, b] = [checkout(), checkout()];
      // Each runner its own home (config folder); the ledger shared, in the environment as a fleet gives it.
      const ordercli = (cwd: string, ...args: string[]) =>
        runCli(['--base-url', sandbox.url, '--token', sandbox.tokens.full, ...args], {
          cwd,
          env: { ORDERCLI_LEDGER: ledger },
        });
      writeFileSync(join(a, INPUT), csvOf(60));
      writeFileSync(join(b, INPUT), csvOf(60));

      // The sandbox creates A's first four orders and holds their answers: A is killed meanwhile,
      // with four orders sent and up to four more claimed ahead of a free request slot.
      let release = (): void => undefined;
      const answered = new Promise<void>((resolve) => {
        release = resolve;
      });
      sandbox.scriptFaults([
        { method: 'POST', path: '/api/v1/orders', kind: 'delay', until: answered, times: 4 },
      ]);
      const runner = spawn(process.execPath, [BIN, 'orders', 'import', INPUT, '--concurrency', '4'], {
        cwd: a,
        env: testEnv({
          ORDERCLI_BASE_URL: sandbox.url,
          ORDERCLI_TOKEN: sandbox.tokens.full,
          ORDERCLI_LEDGER: ledger,
        }),
        stdio: 'ignore',
      });
      const gone = new Promise((resolve) => runner.on('close', resolve));
      await waitFor(() => sandbox.orders().length >= 4, 20_000, "A's first four orders at the sandbox");
      runner.kill('SIGKILL');
      await gone;
      release();
      expect(posted()).toHaveLength(4);

      // B lists what A left in doubt: at most 2 × --concurrency, each with its CSV line.
      const listed = await ordercli(b, '--json', 'orders', 'journal', INPUT);
      expect(listed.code, listed.stderr).toBe(0);
      const history = JSON.parse(listed.stdout) as {
        counts: { unknown: number; sending: number };
        unknown: { externalId: string; line: number }[];
      };
      expect(history.counts.sending).toBe(0);
      expect(history.unknown.length).toBeGreaterThanOrEqual(4);
      expect(history.unknown.length).toBeLessThanOrEqual(8);
      for (const o of history.unknown) expect(o.line).toBe(Number(o.externalId.slice(4)) + 1);
      // The fleet's own view: every key in doubt at the service, with the input and line that sent it.
      const doubts = await ordercli(b, '--json', 'ledger', 'list', '--status', 'in-doubt');
      expect(doubts.code, doubts.stderr).toBe(0);
      const rows = JSON.parse(doubts.stdout) as { externalId: string; input: string; line: number }[];
      expect(rows.map((row) => row.externalId).sort()).toEqual(
        history.unknown.map((o) => o.externalId).sort(),
      );
      for (const row of rows) expect(row).toMatchObject({ input: INPUT });

      // B checks each at the service and says what it found.
      const atService = new Map(sandbox.orders().map((o) => [String(o.externalId), o]));
      const exist = history.unknown.filter((o) => atService.has(o.externalId)).map((o) => o.externalId);
      const missing = history.unknown.filter((o) => !atService.has(o.externalId)).map((o) => o.externalId);
      expect(exist.sort()).toEqual([...atService.keys()].sort());
      const flags = [
        ...(exist.length > 0 ? ['--created', ...exist.map((id) => `${id}=${atService.get(id)!.id}`)] : []),
        ...(missing.length > 0 ? ['--not-created', ...missing] : []),
      ];
      const resolved = await ordercli(b, '--json', 'orders', 'resolve', INPUT, ...flags);
      expect(resolved.code, resolved.stderr).toBe(0);
      expect(JSON.parse(resolved.stdout).stillUnknown).toBe(0);

      const rerun = await ordercli(b, 'orders', 'import', INPUT, '--json');
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(JSON.parse(rerun.stdout).counts.unknown).toBe(0);
      const created = createdCounts(sandbox);
      expect(created.size).toBe(60);
      for (const [id, n] of created) expect(n, `${id} created ${n} times`).toBe(1);
      for (const root of [a, b]) expect(readdirSync(join(root, 'exports'))).toEqual(['orders.csv']);
    },
  );
});
