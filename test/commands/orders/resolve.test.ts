// In-doubt orders settled inside the tool, through the built binary against a real sandbox and a
// real `ordercli listen`: `orders journal`, `orders resolve` (--created, --not-created,
// --from-events), the re-run, and a symlinked input sharing its target's history. Both commands
// query and write the order ledger (the test's config folder): no file beside the input.
// Needs `npm run build` first.
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin, tempDir, testEnv } from '../../support/cli.js';
import { spawnListen } from '../../support/listen.js';
import {
  createdCounts,
  externalId,
  ledgerHistory,
  order,
  orders,
  postsTo,
  readLines,
  writeNdjson,
} from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

/** The config folder of this test's commands: one order ledger, as one machine has. */
let config: string;
beforeEach(() => {
  config = tempDir('ordercli-config-');
});

function env(): Record<string, string> {
  return { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.full, ORDERCLI_CONFIG_DIR: config };
}

/** What the order ledger holds of the orders `orders.ndjson` sent (run from its folder). */
function historyOfInput(input = 'orders.ndjson') {
  return ledgerHistory(join(config, 'ledger'), sandbox.url, [input]);
}

function ordercli(args: string[], cwd?: string) {
  return runBin(args, { env: env(), cwd, timeoutMs: 60_000 });
}

describe('a symlinked input', () => {
  it('shares the history of its target: a re-run through the link sends nothing twice', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(12));
    symlinkSync('orders.ndjson', join(dir, 'link.ndjson'));
    const first = await ordercli(['orders', 'import', 'orders.ndjson'], dir);
    expect(first.code, first.stderr).toBe(0);
    const posts = postsTo(sandbox);

    const again = await ordercli(['orders', 'import', 'link.ndjson', '--json'], dir);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      journal: 'orders.ndjson',
      counts: { total: 12, created: 0, skipped: 12 },
    });
    expect(postsTo(sandbox)).toBe(posts);
    expect([...createdCounts(sandbox).values()]).toEqual(Array(12).fill(1));
    expect(again.stderr).toContain('  history  ordercli orders journal orders.ndjson\n');
    expect(readdirSync(dir).sort()).toEqual(['link.ndjson', 'orders.ndjson']);
    // The dry run and orders journal read the same history through the link.
    const dry = await ordercli(['orders', 'import', 'link.ndjson', '--dry-run'], dir);
    expect(dry.stderr).toContain('records 12 of these orders as created');
    for (const target of ['link.ndjson', 'orders.ndjson']) {
      const journal = await ordercli(['--json', 'orders', 'journal', target], dir);
      expect(JSON.parse(journal.stdout)).toMatchObject({
        journal: target,
        baseUrl: sandbox.url,
        counts: { created: 12, total: 12 },
      });
    }
  });
});

describe('orders journal and orders resolve', () => {
  it('end to end: unknown orders after resets, resolved by hand and from a real listen log, then the re-run creates each order exactly once', async () => {
    const dir = tempDir();
    const count = 40;
    writeNdjson(dir, 'orders.ndjson', orders(count, 'RES'));
    const log = join(dir, 'events.ndjson');
    const listen = await spawnListen(['--port', '0', '--key', sandbox.webhookKey, '--log', log], env(), dir);
    try {
      const subscribed = await ordercli([
        'webhooks',
        'subscribe',
        '--event',
        'sales_order_validated',
        '--url',
        listen.url,
      ]);
      expect(subscribed.code, subscribed.stderr).toBe(0);

      // Two orders created but unanswered, two never read, then random resets.
      sandbox.scriptFaults([
        { method: 'POST', path: '/api/v1/orders', kind: 'reset-after', times: 2 },
        { method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read', times: 2 },
      ]);
      sandbox.setFaults({ resetRate: 0.1 });
      const first = await ordercli(
        ['orders', 'import', 'orders.ndjson', '--concurrency', '1', '--json'],
        dir,
      );
      sandbox.setFaults({ resetRate: 0 });
      expect(first.code, first.stderr).toBe(4);
      const unknownIds = (JSON.parse(first.stdout).orders as { externalId: string; status: string }[])
        .filter((o) => o.status === 'unknown')
        .map((o) => o.externalId);
      expect(unknownIds.length).toBeGreaterThanOrEqual(4);
      expect(first.stderr).toContain('ordercli orders resolve orders.ndjson --created <externalId>[=<id>]');
      expect(first.stderr).toContain('run the same import again');

      const atService = new Map(sandbox.orders().map((o) => [String(o.externalId), o]));
      // Every order the service holds has been notified to listen (and logged) before we go on.
      await waitFor(
        () => existsSync(log) && readLines(log).length >= atService.size,
        15_000,
        'the notifications in the listen log',
      );

      const shown = await ordercli(['--json', 'orders', 'journal', 'orders.ndjson'], dir);
      expect(shown.code, shown.stderr).toBe(0);
      const journal = JSON.parse(shown.stdout);
      expect(journal).toMatchObject({
        journal: 'orders.ndjson',
        baseUrl: sandbox.url,
        kind: 'orders',
        counts: { unknown: unknownIds.length, total: count },
      });
      expect(journal.unknown.map((o: { externalId: string }) => o.externalId)).toEqual(unknownIds);
      for (const order of journal.unknown) {
        // Order n is on line n of the input.
        expect(order.line).toBe(Number(order.externalId.slice(4)));
        expect(order.sentAt).toMatch(/^\d{4}-\d\d-\d\dT/);
      }
      const existing = unknownIds.filter((id) => atService.has(id));
      const missing = unknownIds.filter((id) => !atService.has(id));
      expect(existing.length).toBeGreaterThanOrEqual(2);
      expect(missing.length).toBeGreaterThanOrEqual(2);

      // By hand: one that exists (with its id), one that does not.
      const [byHand, ...fromLog] = existing;
      const manual = await ordercli(
        [
          '--json',
          'orders',
          'resolve',
          'orders.ndjson',
          '--created',
          `${byHand}=${atService.get(byHand!)!.id}`,
          '--not-created',
          missing[0]!,
        ],
        dir,
      );
      expect(manual.code, manual.stderr).toBe(0);
      expect(JSON.parse(manual.stdout).changed).toEqual([
        expect.objectContaining({
          externalId: byHand,
          from: 'unknown',
          to: 'created',
          id: atService.get(byHand!)!.id,
        }),
        expect.objectContaining({ externalId: missing[0], from: 'unknown', to: 'not-created' }),
      ]);
      expect(JSON.parse(manual.stdout)).toMatchObject({ journal: 'orders.ndjson', baseUrl: sandbox.url });
      // Recorded in the ledger, in the input's history.
      const history = await historyOfInput();
      expect(history.get(byHand!)).toMatchObject({
        status: 'created',
        resolved: 'created',
        id: atService.get(byHand!)!.id,
        input: 'orders.ndjson',
      });
      expect(history.get(missing[0]!)).toMatchObject({ status: 'not-created', resolved: 'not-created' });

      // From the listen log, with lines of other kinds around: another event, a foreign line, a torn tail.
      appendFileSync(
        log,
        `${JSON.stringify({ receivedAt: '2026-01-01T00:00:00Z', event: 'contact_updated', headers: {}, body: { externalId: missing[1] } })}\nnot json at all\n{"receivedAt":"2026-01-01T00:00:01Z","event":"sales_order_val`,
      );
      const fromEvents = await ordercli(
        ['--json', 'orders', 'resolve', 'orders.ndjson', '--from-events', 'events.ndjson'],
        dir,
      );
      expect(fromEvents.code, fromEvents.stderr).toBe(0);
      const resolved = JSON.parse(fromEvents.stdout);
      expect(resolved.changed.map((c: { externalId: string }) => c.externalId).sort()).toEqual(
        [...fromLog].sort(),
      );
      for (const change of resolved.changed) {
        expect(change).toMatchObject({ to: 'created', code: atService.get(change.externalId)!.code });
        expect(change.evidence).toContain('sales_order_validated received');
      }
      expect(resolved.events).toMatchObject({ skipped: 2, matched: fromLog.length });
      expect(resolved.stillUnknown).toBe(missing.length - 1);

      // The rest do not exist: say so, then run the same import again.
      if (missing.length > 1) {
        const rest = await ordercli(
          ['orders', 'resolve', 'orders.ndjson', '--not-created', ...missing.slice(1)],
          dir,
        );
        expect(rest.code, rest.stderr).toBe(0);
        expect(rest.stdout).toContain('not created: the next run sends it');
      }
      const cleared = JSON.parse(
        (await ordercli(['--json', 'orders', 'journal', 'orders.ndjson'], dir)).stdout,
      );
      expect(cleared.counts).toMatchObject({ unknown: 0, resolvedCreated: existing.length });
      expect(cleared.unknown).toEqual([]);

      const rerun = await ordercli(['orders', 'import', 'orders.ndjson', '--json'], dir);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(JSON.parse(rerun.stdout).counts).toMatchObject({ created: missing.length, unknown: 0 });
      expect(
        JSON.parse(rerun.stdout).orders.find((o: { externalId: string }) => o.externalId === byHand),
      ).toMatchObject({
        status: 'skipped',
        id: atService.get(byHand!)!.id,
        message: 'recorded as created with orders resolve',
      });
      // --retry-unknown does not send the resolved-created ones either.
      const retried = await ordercli(['orders', 'import', 'orders.ndjson', '--retry-unknown', '--json'], dir);
      expect(JSON.parse(retried.stdout).counts).toMatchObject({ created: 0, skipped: count });

      const created = createdCounts(sandbox);
      expect(created.size).toBe(count);
      for (const [id, n] of created) expect(n, `${id} created ${n} times`).toBe(1);
      // Beside the input: the listen log, nothing of ordercli's own.
      expect(readdirSync(dir).sort()).toEqual(['events.ndjson', 'orders.ndjson']);
    } finally {
      listen.child.kill('SIGINT');
      await listen.exited;
    }
  });

  it('after a kill -9, orders journal lists at most 2 × --concurrency unknown orders, each with its line', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(300, 'K'));
    sandbox.setFaults({ latencyMs: 40 });
    const importer = spawn(
      process.execPath,
      [BIN, 'orders', 'import', 'orders.ndjson', '--concurrency', '4'],
      {
        cwd: dir,
        env: testEnv(env()),
        stdio: 'ignore',
      },
    );
    const gone = new Promise((resolve) => importer.on('close', resolve));
    await waitFor(() => postsTo(sandbox) >= 40, 30_000, 'the import to be under way');
    importer.kill('SIGKILL');
    await gone;
    sandbox.setFaults({ latencyMs: 0 });
    const shown = await ordercli(['--json', 'orders', 'journal', 'orders.ndjson'], dir);
    expect(shown.code, shown.stderr).toBe(0);
    const { unknown, counts } = JSON.parse(shown.stdout);
    expect(counts.unknown).toBeGreaterThan(0);
    // Those in flight and those journaled ahead of their turn.
    expect(counts.unknown).toBeLessThanOrEqual(2 * 4);
    for (const order of unknown) expect(order.line).toBe(Number(order.externalId.slice(2)));
  });

  it('refuses ids the ledger does not hold for the input, and contradictions, writing nothing (exit 2)', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(3));
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read', times: 1 }]);
    expect((await ordercli(['orders', 'import', 'orders.ndjson', '--concurrency', '1'], dir)).code).toBe(4);
    const before = await historyOfInput();
    expect(before.get(externalId(1))?.status).toBe('in-doubt');

    const unknownId = await ordercli(
      ['orders', 'resolve', 'orders.ndjson', '--not-created', externalId(1), '--created', 'NO-SUCH-ORDER'],
      dir,
    );
    expect(unknownId.code).toBe(2);
    expect(unknownId.stderr).toContain(
      `The order ledger (the history of orders.ndjson) holds no order NO-SUCH-ORDER for ${sandbox.url}, so nothing was recorded`,
    );
    const contradiction = await ordercli(
      ['orders', 'resolve', 'orders.ndjson', '--not-created', externalId(2)],
      dir,
    );
    expect(contradiction.code).toBe(2);
    expect(contradiction.stderr).toContain("--not-created contradicts the service's own answer");
    const nothingSaid = await ordercli(['orders', 'resolve', 'orders.ndjson'], dir);
    expect(nothingSaid.code).toBe(2);
    expect(await historyOfInput()).toEqual(before);

    // An input the ledger holds nothing of: orders journal says so; orders resolve refuses.
    const noHistory = await ordercli(['orders', 'journal', 'other.ndjson'], dir);
    expect(noHistory.code, noHistory.stderr).toBe(0);
    expect(noHistory.stdout).toMatch(/^The order ledger holds nothing sent from other\.ndjson: /);
    const noTarget = await ordercli(
      ['orders', 'resolve', 'other.ndjson', '--not-created', externalId(1)],
      dir,
    );
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain(
      'The order ledger holds no order sent from other.ndjson, so nothing was recorded',
    );
    expect(await historyOfInput()).toEqual(before);
    expect(unknownId.stderr + contradiction.stderr + noTarget.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses an order another ordercli is sending right now (exit 2, nothing recorded), and settles it once that import is gone', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(4));
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read', times: 1 }]);
    expect((await ordercli(['orders', 'import', 'orders.ndjson', '--concurrency', '1'], dir)).code).toBe(4);
    expect((await historyOfInput()).get(externalId(1))?.status).toBe('in-doubt');

    // A second import sends it again (--retry-unknown) and hangs on a slow answer, holding its claim.
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'delay', delayMs: 20_000 }]);
    const posts = postsTo(sandbox);
    const importer: ChildProcess = spawn(
      process.execPath,
      [BIN, 'orders', 'import', 'orders.ndjson', '--retry-unknown'],
      { cwd: dir, env: testEnv(env()), stdio: 'ignore' },
    );
    const gone = new Promise((resolve) => importer.on('close', resolve));
    try {
      await waitFor(() => postsTo(sandbox) > posts, 15_000, 'the import to send the order again');
      const busy = await ordercli(
        ['orders', 'resolve', 'orders.ndjson', '--not-created', externalId(1)],
        dir,
      );
      expect(busy.code).toBe(2);
      expect(busy.stderr).toContain(
        `The order "${externalId(1)}" is being sent right now by another ordercli (`,
      );
      expect(busy.stderr).toContain(`pid ${importer.pid}`);
      expect(busy.stderr).toContain('nothing was recorded');
      expect((await historyOfInput()).get(externalId(1))).toMatchObject({ status: 'claimed' });
    } finally {
      importer.kill('SIGKILL');
      await gone;
    }
    // The claim of a killed import is in doubt: settled now.
    const done = await ordercli(['orders', 'resolve', 'orders.ndjson', '--not-created', externalId(1)], dir);
    expect(done.code, done.stderr).toBe(0);
    expect((await historyOfInput()).get(externalId(1))).toMatchObject({
      status: 'not-created',
      resolved: 'not-created',
    });
  });
});

describe('orders resolve and the machine-wide order ledger', () => {
  it('an order resolved as created is refused by orders create; one resolved as not created is sent', async () => {
    const dir = tempDir();
    const run = (args: string[]) => ordercli(args, dir);
    // A journal left by a killed import of an earlier release: two orders sent, their answers
    // never came. The next import folds it into the ledger: both in doubt, neither sent.
    const [done, notDone] = [order(1, 'LED'), order(2, 'LED')];
    const journal = join(dir, 'orders.ndjson.journal.ndjson');
    writeNdjson(dir, 'orders.ndjson', [done, notDone]);
    writeFileSync(
      journal,
      [done, notDone]
        .map((o, i) =>
          JSON.stringify({
            event: 'sending',
            externalId: o.externalId,
            baseUrl: sandbox.url,
            at: '2026-11-23T10:00:00.000Z',
            bodyHash: 'x',
            line: i + 1,
          }),
        )
        .map((line) => `${line}\n`)
        .join(''),
    );
    const folded = await run(['orders', 'import', 'orders.ndjson', '--json']);
    expect(folded.code, folded.stderr).toBe(4);
    expect(JSON.parse(folded.stdout).counts).toMatchObject({ unknown: 2, created: 0 });
    expect(existsSync(`${journal}.folded`)).toBe(true);
    const resolved = await run([
      'orders',
      'resolve',
      'orders.ndjson',
      '--created',
      `${done.externalId}=777`,
      '--not-created',
      String(notDone.externalId),
    ]);
    expect(resolved.code, resolved.stderr).toBe(0);

    writeFileSync(join(dir, 'done.json'), JSON.stringify(done));
    const refused = await run(['orders', 'create', '--file', 'done.json']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`The order "${done.externalId}" already exists`);
    expect(postsTo(sandbox)).toBe(0);

    writeFileSync(join(dir, 'not-done.json'), JSON.stringify(notDone));
    const sent = await run(['orders', 'create', '--file', 'not-done.json']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(postsTo(sandbox)).toBe(1);
  });
});
