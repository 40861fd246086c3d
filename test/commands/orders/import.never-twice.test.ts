// Never twice: the built binary, several at once, against a sandbox that answers in ~20 ms and
// does not dedupe externalIds (every POST it receives creates an order), so that what it received
// per externalId is what was sent. Whatever runs at the same time (two imports of one input or of
// two, an import and `orders create`, a process in another PID namespace, a fleet on one
// PostgreSQL ledger), a fresh checkout of the input or an old journal restored beside it, a
// kill -9, a damaged ledger line, or files left by ordercli 0.1.0: no externalId is POSTed twice.
// Needs `npm run build` first. NEVER_TWICE_BIN=<path to bin/ordercli.js> runs another build (0.1.0
// fails these tests).
import { type ChildProcess, spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ledgerFolder, shardFileName, shardOf } from '../../../src/ledger/local.js';
import { BIN, type CliResult, ROOT, tempDir, testEnv } from '../../support/cli.js';
import { order, orders, writeNdjson } from '../../support/orders.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../../support/postgres.js';
import { requireUnshare } from '../../support/requirements.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const ORDERCLI = process.env.NEVER_TWICE_BIN ?? BIN;
const ORDERS_PATH = '/api/v1/orders';
const LATENCY_MS = 20;

const sandbox = useSandbox({ latencyMs: LATENCY_MS, validationDelayMs: 10 });

// --- processes ----------------------------------------------------------------------------------

interface Running {
  stdout(): string;
  stderr(): string;
  /** Whether it has ended. */
  ended(): boolean;
  kill9(): void;
  done: Promise<CliResult>;
}

interface StartOptions {
  env: Record<string, string>;
  cwd: string;
  /** Run it in a new PID namespace (unshare), under a PID that names no process here. */
  namespace?: boolean;
  timeoutMs?: number;
}

/** Children still running at the end of a test: killed (by their own PID) so none outlives it. */
const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

/** The built binary, as a child process of its own. */
function start(args: string[], options: StartOptions): Running {
  const [command, argv] = options.namespace
    ? [
        'unshare',
        [
          '--pid',
          '--fork',
          '--mount-proc',
          '--kill-child',
          'sh',
          '-c',
          // ordercli is not the namespace's PID 1, and its PID is one no process has here.
          `echo ${foreignPid() - 1} > /proc/sys/kernel/ns_last_pid && "$@"; exit $?`,
          'sh',
          process.execPath,
          ORDERCLI,
          ...args,
        ],
      ]
    : [process.execPath, [ORDERCLI, ...args]];
  const child = spawn(command, argv, {
    cwd: options.cwd,
    env: testEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      ended = true;
      clearTimeout(timer);
      children.delete(child);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    ended: () => ended,
    kill9: () => child.kill('SIGKILL'),
    done,
  };
}

function run(args: string[], options: StartOptions): Promise<CliResult> {
  return start(args, options).done;
}

/** A PID that no process has here (nor the one before, written to ns_last_pid), for a process in another namespace. */
function foreignPid(): number {
  for (let pid = 30_000 + Math.floor(Math.random() * 2_000); pid < 32_700; pid++) {
    if (!existsSync(`/proc/${pid}`) && !existsSync(`/proc/${pid - 1}`)) return pid;
  }
  throw new Error('no free PID between 30000 and 32700');
}

const canUnshare = requireUnshare(
  'a live ordercli in another PID namespace (test/commands/orders/import.never-twice.test.ts)',
  '-p',
  '-f',
  '--mount-proc',
);

// --- machines, inputs, reports -----------------------------------------------------------------

/** One machine: its own config folder (and so its local ledger) and HOME, its own working folder. */
function machine(): StartOptions & { configDir: string } {
  const configDir = tempDir('ordercli-config-');
  return {
    configDir,
    cwd: tempDir(),
    env: {
      ORDERCLI_CONFIG_DIR: configDir,
      HOME: tempDir('ordercli-home-'),
      ORDERCLI_BASE_URL: sandbox.url,
      ORDERCLI_TOKEN: sandbox.tokens.partner,
    },
  };
}

interface Report {
  counts: { total: number; created: number; skipped: number; unknown: number } & Record<string, number>;
  orders: { externalId: string; status: string; message?: string }[];
}

function reportOf(result: CliResult): Report {
  try {
    return JSON.parse(result.stdout) as Report;
  } catch {
    throw new Error(`no JSON report on stdout (exit ${result.code}):\n${result.stderr}`);
  }
}

function statusesOf(report: Report): Map<string, { status: string; message?: string }> {
  return new Map(report.orders.map((o) => [o.externalId, o]));
}

// --- what the sandbox received ------------------------------------------------------------------

function orderPosts() {
  return sandbox.requests.filter((request) => request.method === 'POST' && request.path === ORDERS_PATH);
}

/** POSTs of orders that reached the sandbox (counted on arrival, body read or not). */
function postCount(prefix = ''): number {
  return orderPosts().filter((request) => prefix === '' || (bodyId(request.body) ?? '').startsWith(prefix))
    .length;
}

function bodyId(body: unknown): string | undefined {
  const id = (body as { externalId?: unknown } | undefined)?.externalId;
  return typeof id === 'string' ? id : undefined;
}

/** How many POSTs the sandbox received per externalId. */
function postsPerId(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of orderPosts()) {
    const id = bodyId(request.body);
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** The externalIds POSTed more than once, with how many times. */
function sentTwice(): string[] {
  return [...postsPerId()].filter(([, n]) => n > 1).map(([id, n]) => `${id} ×${n}`);
}

/**
 * Calls `then` synchronously when the sandbox receives its `n`th order POST (on arrival, before
 * it reads the body): to act at that very moment, not at the next poll.
 */
function onOrderPost(n: number, then: () => void): void {
  const requests = sandbox.requests;
  const push = requests.push;
  hooked.push(() => {
    requests.push = push;
  });
  requests.push = (...entries) => {
    const length = push.apply(requests, entries);
    if (orderPosts().length >= n) {
      requests.push = push;
      then();
    }
    return length;
  };
}

/** Undoes the hooks of a test that ended before they fired. */
const hooked: (() => void)[] = [];
afterEach(() => {
  for (const undo of hooked.splice(0)) undo();
});

function importArgs(input: string, ...more: string[]): string[] {
  return ['--json', 'orders', 'import', input, ...more];
}

const SKIPPED_BY_OTHER = /being sent by another ordercli: pid \d+|already created/;

// --- the cases ----------------------------------------------------------------------------------

describe('two imports at once', () => {
  it('300 orders started together at --concurrency 8: each externalId POSTed once, the other run skips it; a third run sends nothing', async () => {
    const m = machine();
    const list = orders(300, 'OVL');
    writeNdjson(m.cwd, 'a.ndjson', list);
    writeNdjson(m.cwd, 'b.ndjson', list);
    // They overlap whatever the machine's load: the first 9 order POSTs are answered only once all 9
    // have arrived; one run has at most 8 in flight, so both runs are sending then.
    let release = (): void => undefined;
    const bothSending = new Promise<void>((resolve) => {
      release = resolve;
    });
    sandbox.scriptFaults([
      { method: 'POST', path: ORDERS_PATH, kind: 'delay', until: bothSending, times: 9 },
    ]);
    onOrderPost(9, release);
    const [a, b] = await Promise.all([
      run(importArgs('a.ndjson', '--concurrency', '8'), m),
      run(importArgs('b.ndjson', '--concurrency', '8'), m),
    ]);
    expect(sentTwice()).toEqual([]);
    expect(postsPerId().size).toBe(300);
    expect([0, 4], a.stderr).toContain(a.code);
    expect([0, 4], b.stderr).toContain(b.code);
    const [ra, rb] = [reportOf(a), reportOf(b)];
    expect(ra.counts.created + rb.counts.created).toBe(300);
    // Each sent some of them (the 9 held POSTs came from both).
    expect(ra.counts.created, 'run a created none: the runs did not overlap').toBeGreaterThan(0);
    expect(rb.counts.created, 'run b created none: the runs did not overlap').toBeGreaterThan(0);
    const [sa, sb] = [statusesOf(ra), statusesOf(rb)];
    for (const o of list) {
      const id = o.externalId as string;
      const pair = [sa.get(id), sb.get(id)];
      const created = pair.filter((r) => r?.status === 'created');
      const other = pair.find((r) => r?.status !== 'created');
      expect(created, id).toHaveLength(1);
      expect(other?.status, id).toBe('skipped');
      expect(other?.message, id).toMatch(SKIPPED_BY_OTHER);
    }
    const third = await run(importArgs('a.ndjson', '--concurrency', '8'), m);
    expect(third.code, third.stderr).toBe(0);
    expect(reportOf(third).counts).toMatchObject({ total: 300, created: 0, skipped: 300 });
    expect(postCount()).toBe(300);
  });

  it('two imports of the same input at once (no lock: the ledger alone decides): each externalId POSTed once', async () => {
    const m = machine();
    const list = orders(200, 'SAME');
    writeNdjson(m.cwd, 'orders.ndjson', list);
    // Both are sending at once: the first 9 order POSTs are answered only once all 9 have arrived.
    let release = (): void => undefined;
    const bothSending = new Promise<void>((resolve) => {
      release = resolve;
    });
    sandbox.scriptFaults([
      { method: 'POST', path: ORDERS_PATH, kind: 'delay', until: bothSending, times: 9 },
    ]);
    onOrderPost(9, release);
    const [a, b] = await Promise.all([
      run(importArgs('orders.ndjson', '--concurrency', '8'), m),
      run(importArgs('orders.ndjson', '--concurrency', '8'), m),
    ]);
    expect(sentTwice()).toEqual([]);
    expect(postsPerId().size).toBe(200);
    expect([0, 4], a.stderr).toContain(a.code);
    expect([0, 4], b.stderr).toContain(b.code);
    const [ra, rb] = [reportOf(a), reportOf(b)];
    expect(ra.counts.created + rb.counts.created).toBe(200);
    expect(ra.counts.created, 'run a created none: the runs did not overlap').toBeGreaterThan(0);
    expect(rb.counts.created, 'run b created none: the runs did not overlap').toBeGreaterThan(0);
    const [sa, sb] = [statusesOf(ra), statusesOf(rb)];
    for (const o of list) {
      const id = o.externalId as string;
      const other = [sa.get(id), sb.get(id)].find((r) => r?.status !== 'created');
      expect(other?.status, id).toBe('skipped');
      expect(other?.message, id).toMatch(SKIPPED_BY_OTHER);
    }
    // Nothing beside the input: no journal, no lock.
    expect(readdirSync(m.cwd)).toEqual(['orders.ndjson']);
  });

  it('a second import started once the first has sent 100 of 600 orders: no duplicates', async () => {
    const m = machine();
    const list = orders(600, 'LATE');
    writeNdjson(m.cwd, 'first.ndjson', list);
    writeNdjson(m.cwd, 'second.ndjson', list);
    const first = start(importArgs('first.ndjson', '--concurrency', '8'), m);
    await waitFor(() => postCount() >= 100 || first.ended(), 30_000, '100 POSTs of the first import');
    expect(first.ended(), first.stderr()).toBe(false);
    const second = await run(importArgs('second.ndjson', '--concurrency', '8'), m);
    const done = await first.done;
    expect(sentTwice()).toEqual([]);
    expect(postsPerId().size).toBe(600);
    expect([0, 4], done.stderr).toContain(done.code);
    expect([0, 4], second.stderr).toContain(second.code);
    const [r1, r2] = [reportOf(done), reportOf(second)];
    expect(r1.counts.created + r2.counts.created).toBe(600);
    for (const o of r2.orders)
      if (o.status !== 'created') expect(o.message, o.externalId).toMatch(SKIPPED_BY_OTHER);
  });
});

describe('orders create while an import sends the same externalId', () => {
  it('exits 2 "being sent by another ordercli" while the import holds the claim: one POST', async () => {
    const m = machine();
    const held = order(1, 'HELD');
    const id = held.externalId as string;
    writeNdjson(m.cwd, 'orders.ndjson', [held, order(2, 'HELD')]);
    writeFileSync(join(m.cwd, 'order.json'), JSON.stringify(held));
    // The sandbox holds the answer to the import's first POST (HELD-00001) until the create has
    // run: the claim is held meanwhile.
    let release = (): void => undefined;
    const created = new Promise<void>((resolve) => {
      release = resolve;
    });
    sandbox.scriptFaults([{ method: 'POST', path: ORDERS_PATH, kind: 'delay', until: created }]);
    const importing = start(importArgs('orders.ndjson', '--concurrency', '1'), m);
    await waitFor(() => postsPerId().get(id) === 1, 20_000, 'the import POSTing HELD-00001');
    const create = await run(['orders', 'create', '--file', 'order.json'], m);
    // Still unanswered: the create ran while the import's request was in flight.
    const answered = orderPosts().find((r) => bodyId(r.body) === id)?.status;
    release();
    expect(answered).toBeUndefined();
    expect(create.code, create.stderr).toBe(2);
    expect(create.stderr).toContain(`"${id}" is being sent to ${sandbox.url} by another ordercli (pid `);
    expect(create.stderr).toContain('nothing was sent');
    const imported = await importing.done;
    expect(imported.code, imported.stderr).toBe(0);
    expect(reportOf(imported).counts).toMatchObject({ total: 2, created: 2 });
    expect(postsPerId().get(id)).toBe(1);
    expect(postCount()).toBe(2);
    const after = await run(['orders', 'create', '--file', 'order.json'], m);
    expect(after.code, after.stderr).toBe(2);
    expect(after.stderr).toContain(`"${id}" already exists`);
    expect(postCount()).toBe(2);
  });
});

describe('the ledger alone decides what is sent', () => {
  it('after 20 orders created, a fresh checkout of the input, or an old journal restored beside it that has 10 in flight: each re-run sends nothing', async () => {
    const m = machine();
    const list = orders(20, 'LOST');
    writeNdjson(m.cwd, 'orders.ndjson', list);
    const first = await run(importArgs('orders.ndjson', '--concurrency', '4'), m);
    expect(first.code, first.stderr).toBe(0);
    expect(postCount()).toBe(20);
    const rerun = async (what: string, cwd: string): Promise<void> => {
      const result = await run(importArgs('orders.ndjson'), { ...m, cwd });
      expect(result.code, `${what}: ${result.stderr}`).toBe(0);
      expect(reportOf(result).counts, what).toMatchObject({ total: 20, created: 0, skipped: 20 });
      expect(postCount(), what).toBe(20);
    };
    // Another folder, the same input: the ledger refuses every one.
    const checkout = tempDir();
    writeNdjson(checkout, 'orders.ndjson', list);
    await rerun('a fresh checkout of the input', checkout);
    // A journal of an earlier release, restored from a copy taken while 10 were in flight: it is
    // folded, but only where the ledger knows nothing, which here is nowhere.
    const at = new Date().toISOString();
    const inFlight = list
      .slice(0, 10)
      .map((o, i) =>
        JSON.stringify({ event: 'sending', externalId: o.externalId, baseUrl: sandbox.url, at, line: i + 1 }),
      );
    writeFileSync(join(m.cwd, 'orders.ndjson.journal.ndjson'), `${inFlight.join('\n')}\n`);
    await rerun('an old journal restored beside the input', m.cwd);
    expect(existsSync(join(m.cwd, 'orders.ndjson.journal.ndjson.folded'))).toBe(true);
    expect(sentTwice()).toEqual([]);
  });
});

describe('a damaged order ledger', () => {
  it('a line of NUL bytes in the middle of a shard: orders create and orders import exit 2 naming file and line, nothing sent', async () => {
    const m = machine();
    const damagedOrder = order(1, 'DMG');
    const id = damagedOrder.externalId as string;
    writeFileSync(join(m.cwd, 'order.json'), JSON.stringify(damagedOrder));
    const created = await run(['orders', 'create', '--file', 'order.json'], m);
    expect(created.code, created.stderr).toBe(0);
    const shard = join(ledgerFolder(join(m.configDir, 'ledger'), sandbox.url), shardFileName(shardOf(id)));
    const lines = readFileSync(shard, 'utf8').split('\n');
    expect(lines.length, 'the shard holds the claim and the outcome').toBeGreaterThanOrEqual(3);
    writeFileSync(shard, [lines[0], '\0'.repeat(40), ...lines.slice(1)].join('\n'));

    const again = await run(['orders', 'create', '--file', 'order.json'], m);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain(`${shard} is damaged at line 2`);
    expect(postCount()).toBe(1);

    writeNdjson(m.cwd, 'orders.ndjson', [damagedOrder, order(2, 'DMG'), order(3, 'DMG')]);
    const imported = await run(importArgs('orders.ndjson'), m);
    expect(imported.code, imported.stderr).toBe(2);
    expect(imported.stderr).toContain(`${shard} is damaged at line 2`);
    expect(postCount()).toBe(1);
  });
});

describe('kill -9 of an import', () => {
  it('the re-run reports the orders in flight unknown (at most 2 × concurrency), sends nothing twice; orders journal lists them', async () => {
    const m = machine();
    const list = orders(40, 'KIL');
    writeNdjson(m.cwd, 'orders.ndjson', list);
    sandbox.setFaults({ latencyMs: 250 });
    const first = start(importArgs('orders.ndjson', '--concurrency', '4'), m);
    // Killed the moment the 9th POST arrives (mid-run: the answer to the 5th has just freed a
    // request slot, so the 9th leaves and the 13th is being claimed).
    const killed = new Promise<void>((resolve) => onOrderPost(9, () => resolve(first.kill9())));
    await Promise.race([
      killed,
      first.done.then((ended) => {
        throw new Error(`the import ended before its 9th POST (exit ${ended.code}):\n${ended.stderr}`);
      }),
    ]);
    await first.done;
    const atKill = postsPerId();
    sandbox.setFaults({ latencyMs: LATENCY_MS });
    const rerun = await run(importArgs('orders.ndjson', '--concurrency', '4'), m);
    expect(rerun.code, rerun.stderr).toBe(4);
    const report = reportOf(rerun);
    const unknown = report.orders.filter((o) => o.status === 'unknown').map((o) => o.externalId);
    expect(unknown.length).toBeGreaterThan(0);
    expect(unknown.length).toBeLessThanOrEqual(8);
    expect(report.counts.created + report.counts.skipped + unknown.length).toBe(40);
    expect(sentTwice()).toEqual([]);
    // What is in doubt was not sent again.
    for (const id of unknown) expect(postsPerId().get(id) ?? 0, id).toBe(atKill.get(id) ?? 0);
    // The rest was sent exactly once.
    for (const o of report.orders) {
      if (o.status !== 'unknown') expect(postsPerId().get(o.externalId), o.externalId).toBe(1);
    }
    const journal = await run(['--json', 'orders', 'journal', 'orders.ndjson'], m);
    expect(journal.code, journal.stderr).toBe(0);
    const listed = (JSON.parse(journal.stdout) as { unknown: { externalId: string }[] }).unknown.map(
      (o) => o.externalId,
    );
    expect(listed.sort(), 'orders journal lists every order the re-run reports unknown').toEqual(
      [...unknown].sort(),
    );
  });
});

describe.skipIf(!canUnshare)('a live ordercli in another PID namespace', () => {
  /** Sets the mtime of the heartbeats under `folders` a day ahead of our clock. */
  function aDayAhead(folders: string[]): number {
    const when = new Date(Date.now() + 86_400_000);
    let touched = 0;
    for (const folder of folders) {
      if (!existsSync(folder)) continue;
      for (const name of readdirSync(folder)) {
        const path = join(folder, name);
        if (!statSync(path).isFile()) continue;
        utimesSync(path, when, when);
        touched++;
      }
    }
    return touched;
  }

  it('an import there, mid-run, whose heartbeat is a day ahead: an import of the same input here skips its claims; 0 duplicates, it ends normally', async () => {
    const m = machine();
    const list = orders(60, 'NSI');
    writeNdjson(m.cwd, 'orders.ndjson', list);
    // Slow enough that the import is still sending once the other run has judged its owner alive
    // (watching its heartbeat for a second or so): then it meets live claims.
    sandbox.setFaults({ latencyMs: 400 });
    const inside = start(importArgs('orders.ndjson', '--concurrency', '2'), { ...m, namespace: true });
    await waitFor(() => postCount() >= 2 || inside.ended(), 20_000, 'the first POSTs of the import');
    const folder = ledgerFolder(join(m.configDir, 'ledger'), sandbox.url);
    const touched = aDayAhead([join(folder, 'owners')]);
    expect(touched).toBeGreaterThanOrEqual(1);

    const here = await run(importArgs('orders.ndjson'), m);
    const done = await inside.done;
    expect(sentTwice()).toEqual([]);
    expect(postsPerId().size).toBe(60);
    expect(done.stderr).not.toMatch(/failed unexpectedly|ENOENT/);
    expect([0, 4], here.stderr).toContain(here.code);
    const other = reportOf(here);
    expect(
      other.orders.some((o) => /being sent by another ordercli/.test(o.message ?? '')),
      'the import here met no claim of the import there',
    ).toBe(true);
    // The import ends normally: what the other run created meanwhile is skipped, not in doubt.
    expect(done.code, done.stderr).toBe(0);
    const report = reportOf(done);
    expect(report.counts).toMatchObject({ total: 60, unknown: 0 });
    expect(report.counts.created + other.counts.created).toBe(60);
  });

  it('orders create there during an import here, of another order: both succeed, the import ends with its summary, nothing twice', async () => {
    const m = machine();
    writeNdjson(m.cwd, 'orders.ndjson', orders(300, 'NSC'));
    writeFileSync(join(m.cwd, 'order.json'), JSON.stringify(order(1, 'NSX')));
    // 15 s of import at this latency, however slowly the create starts on a loaded machine; once
    // the create is done, the rest goes at full speed.
    sandbox.setFaults({ latencyMs: 100 });
    const importing = start(importArgs('orders.ndjson', '--concurrency', '2'), m);
    await waitFor(() => postCount() >= 2 || importing.ended(), 20_000, 'the first POSTs of the import');
    const created = await run(['orders', 'create', '--file', 'order.json'], { ...m, namespace: true });
    expect(importing.ended(), 'the import ended before the create: make it longer').toBe(false);
    sandbox.setFaults({ latencyMs: 0 });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/Created order/);
    const done = await importing.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).not.toMatch(/failed unexpectedly|ENOENT/);
    expect(reportOf(done).counts).toMatchObject({ total: 300, created: 300 });
    expect(sentTwice()).toEqual([]);
    expect(postsPerId().size).toBe(301);
  });
});

const hasPostgres = requirePostgres(
  'the fleet on one PostgreSQL ledger (test/commands/orders/import.never-twice.test.ts)',
);

describe.skipIf(!hasPostgres)('a fleet on one PostgreSQL ledger', () => {
  let server: RunningPostgres;
  beforeAll(async () => {
    server = (await startPostgres())!;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('two machines import the same 300 orders at once, then one is killed -9 mid-run and re-run: each externalId POSTed once, the password shown nowhere', async () => {
    const fleet = [machine(), machine()];
    const seen: string[] = [];
    const ledgerRun = (m: StartOptions, input: string, ...more: string[]): Running => {
      const running = start(['--ledger', server.url, ...importArgs(input, ...more)], m);
      void running.done.then((result) => seen.push(result.stdout, result.stderr));
      return running;
    };
    const list = orders(300, 'PGF');
    for (const m of fleet) writeNdjson(m.cwd, 'orders.ndjson', list);
    const [a, b] = await Promise.all([
      ledgerRun(fleet[0]!, 'orders.ndjson', '--concurrency', '8', '--report', 'report.ndjson').done,
      ledgerRun(fleet[1]!, 'orders.ndjson', '--concurrency', '8', '--report', 'report.ndjson').done,
    ]);
    expect([0, 4], a.stderr).toContain(a.code);
    expect([0, 4], b.stderr).toContain(b.code);
    expect(sentTwice()).toEqual([]);
    expect(postsPerId().size).toBe(300);
    expect(reportOf(a).counts.created + reportOf(b).counts.created).toBe(300);

    // Another input on both; the first machine killed -9 once some of it reached the sandbox.
    const more = orders(60, 'PGK');
    for (const m of fleet) writeNdjson(m.cwd, 'more.ndjson', more);
    sandbox.setFaults({ latencyMs: 200 });
    const killed = ledgerRun(
      fleet[0]!,
      'more.ndjson',
      '--concurrency',
      '4',
      '--report',
      'more.report.ndjson',
    );
    const other = ledgerRun(fleet[1]!, 'more.ndjson', '--concurrency', '4', '--report', 'more.report.ndjson');
    await waitFor(() => postCount('PGK') >= 12 || killed.ended(), 20_000, 'POSTs of the second input');
    expect(killed.ended(), 'the import ended before it could be killed mid-run').toBe(false);
    killed.kill9();
    await killed.done;
    const otherDone = await other.done;
    expect([0, 4], otherDone.stderr).toContain(otherDone.code);
    sandbox.setFaults({ latencyMs: LATENCY_MS });
    const rerun = await ledgerRun(
      fleet[0]!,
      'more.ndjson',
      '--concurrency',
      '4',
      '--report',
      'more.report.ndjson',
    ).done;
    expect([0, 4], rerun.stderr).toContain(rerun.code);
    expect(sentTwice()).toEqual([]);
    const report = reportOf(rerun);
    const unknown = report.orders.filter((o) => o.status === 'unknown').map((o) => o.externalId);
    expect(unknown.length).toBeLessThanOrEqual(8);
    for (const o of report.orders) {
      if (o.status !== 'unknown') expect(postsPerId().get(o.externalId), o.externalId).toBe(1);
    }

    // An unreachable PostgreSQL: exit 1 before anything is sent.
    const closed = await closedPort();
    const before = postCount();
    writeNdjson(fleet[0]!.cwd, 'unreachable.ndjson', orders(3, 'PGU'));
    const unreachable = await run(
      [
        '--ledger',
        `postgres://ci:${server.password}@127.0.0.1:${closed}/ledger`,
        ...importArgs('unreachable.ndjson'),
      ],
      fleet[0]!,
    );
    seen.push(unreachable.stdout, unreachable.stderr);
    expect(unreachable.code, unreachable.stderr).toBe(1);
    expect(postCount()).toBe(before);

    for (const m of fleet) {
      for (const name of readdirSync(m.cwd)) {
        if (statSync(join(m.cwd, name)).isFile()) seen.push(readFileSync(join(m.cwd, name), 'utf8'));
      }
    }
    expect(seen.length).toBeGreaterThan(10);
    for (const text of seen) expect(text).not.toContain(server.password);
  });
});

/** A loopback port nobody listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('upgrade from ordercli 0.1.0', () => {
  const FIXTURE = join(ROOT, 'test/fixtures/upgrade-0.1');
  const PLACEHOLDER = 'http://127.0.0.1:4999';
  const OLD_FOLDER = 'http_127.0.0.1_4999-f440f273';
  const RECORDED_PREFIX = '/tmp/ordercli-upgrade-0.1/files';

  /** 0.1.0's `serviceFolderName`, as the fixture's README gives it. */
  function oldServiceFolderName(baseUrl: string): string {
    const readable = baseUrl
      .replace(/^[a-z]+:\/\//i, (scheme) => `${scheme.slice(0, -3)}_`)
      .replace(/[^A-Za-z0-9.-]+/g, '_')
      .replace(/_+$/, '')
      .slice(0, 80);
    let h = 0x811c9dc5;
    for (const byte of Buffer.from(baseUrl, 'utf8')) h = Math.imul(h ^ byte, 0x01000193);
    return `${readable}-${(h >>> 0).toString(16).padStart(8, '0')}`;
  }

  function rewriteFiles(folder: string, rewrite: (text: string) => string): void {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) rewriteFiles(path, rewrite);
      else writeFileSync(path, rewrite(readFileSync(path, 'utf8')));
    }
  }

  it('runs every import of the fixture and its orders create: nothing created or in doubt is sent; what may be sent is sent once', async () => {
    const T = tempDir('ordercli-upgrade-');
    cpSync(FIXTURE, T, { recursive: true });
    const NEW = sandbox.url;
    const newFolder = oldServiceFolderName(NEW);
    expect(join(T, 'ledger', newFolder)).toBe(ledgerFolder(join(T, 'ledger'), NEW));
    // Steps 3 and 5 of the README: the URL everywhere, the recorded paths in the ledger's shards.
    const inJson = JSON.stringify(T).slice(1, -1);
    rewriteFiles(T, (text) =>
      text
        .replace(/http:\/\/127\.0\.0\.1:4999(?!\d)/g, NEW)
        .replaceAll(OLD_FOLDER, newFolder)
        .replaceAll(RECORDED_PREFIX, inJson),
    );
    renameSync(join(T, 'ledger', OLD_FOLDER), join(T, 'ledger', newFolder));
    expect(readFileSync(join(T, 'upgrade.journal.ndjson'), 'utf8')).not.toContain(PLACEHOLDER);
    const manifest = JSON.parse(readFileSync(join(T, 'manifest.json'), 'utf8')) as {
      orders: Record<string, { state: string; mustNotBeSent: boolean }>;
    };

    const old: StartOptions = {
      cwd: T,
      env: {
        ORDERCLI_CONFIG_DIR: T,
        HOME: tempDir('ordercli-home-'),
        ORDERCLI_BASE_URL: NEW,
        ORDERCLI_TOKEN: sandbox.tokens.full,
      },
    };
    const upgrade = await run(importArgs('upgrade.ndjson', '--journal', 'upgrade.journal.ndjson'), old);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(reportOf(upgrade).counts).toMatchObject({ total: 30, created: 0, skipped: 30 });
    // Each journal is read once, folded into the ledger, and renamed .folded (what it knew is kept).
    expect(upgrade.stderr).toContain(
      `note: ${join(T, 'upgrade.journal.ndjson')}, the journal of an earlier ordercli, was folded`,
    );
    expect(existsSync(join(T, 'upgrade.journal.ndjson'))).toBe(false);
    expect(existsSync(join(T, 'upgrade.journal.ndjson.folded'))).toBe(true);

    const doubt = await run(importArgs('doubt.ndjson', '--journal', 'doubt.journal.ndjson'), old);
    expect(doubt.code, doubt.stderr).toBe(4);
    const doubtStatuses = statusesOf(reportOf(doubt));
    for (const [id, entry] of Object.entries(manifest.orders)) {
      if (!id.startsWith('DBT-')) continue;
      const expected =
        entry.state === 'in-doubt' ? 'unknown' : entry.state === 'resolved-created' ? 'skipped' : 'created';
      expect(doubtStatuses.get(id)?.status, `${id} (${entry.state})`).toBe(expected);
    }
    expect(existsSync(join(T, 'doubt.journal.ndjson.folded'))).toBe(true);
    // orders journal finds what 0.1.0 recorded (by absolute paths), by the input or the journal's name.
    const inDoubt = Object.entries(manifest.orders)
      .filter(([id, entry]) => id.startsWith('DBT-') && entry.state === 'in-doubt')
      .map(([id]) => id)
      .sort();
    expect(inDoubt.length).toBeGreaterThan(0);
    for (const target of ['doubt.ndjson', 'doubt.journal.ndjson']) {
      const history = await run(['--json', 'orders', 'journal', target], old);
      expect(history.code, history.stderr).toBe(0);
      const listed = (JSON.parse(history.stdout) as { unknown: { externalId: string }[] }).unknown;
      expect(listed.map((o) => o.externalId).sort(), target).toEqual(inDoubt);
    }

    // The journal alone, with a config folder (and ledger) that is new.
    const fresh = { ...old, env: { ...old.env, ORDERCLI_CONFIG_DIR: tempDir('ordercli-config-') } };
    const journalOnly = await run(
      importArgs('journal-only.ndjson', '--journal', 'journal-only.journal.ndjson'),
      fresh,
    );
    expect(journalOnly.code, journalOnly.stderr).toBe(0);
    expect(reportOf(journalOnly).counts).toMatchObject({ total: 10, created: 0, skipped: 10 });
    expect(existsSync(join(T, 'journal-only.journal.ndjson.folded'))).toBe(true);

    const create = await run(['orders', 'create', '--file', 'one.json'], old);
    expect(create.code, create.stderr).toBe(2);
    expect(create.stderr).toContain('"CRT-001" already exists');

    // Run again (the journal folded, the ledger alone decides): what was sent now is not sent twice.
    const doubtAgain = await run(importArgs('doubt.ndjson', '--journal', 'doubt.journal.ndjson'), old);
    expect(doubtAgain.code, doubtAgain.stderr).toBe(4);
    expect(doubtAgain.stderr).not.toContain('note:');

    const posts = postsPerId();
    for (const [id, entry] of Object.entries(manifest.orders)) {
      expect(posts.get(id) ?? 0, `${id} (${entry.state})`).toBe(entry.mustNotBeSent ? 0 : 1);
    }
    expect(sentTwice()).toEqual([]);
    expect(postCount()).toBe(Object.values(manifest.orders).filter((entry) => !entry.mustNotBeSent).length);
  });
});
