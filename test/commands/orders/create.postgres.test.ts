// The commands that send, settle and show the order ledger, through the built binary (`npm run
// build` first), on a PostgreSQL ledger (a throwaway cluster, test/support/postgres.ts) and a real
// sandbox: `orders create` once (and `--force` refused against a live claim of another ordercli),
// `orders resolve` with and without an input, `refs contacts import`, `ledger list`/`status`, the
// ledger given by ORDERCLI_LEDGER and by the profile key (`config set ledger`), `config list` and
// `config get` showing the password as ***. No output of any run holds the password. Without
// PostgreSQL server binaries it does not run and prints a SKIPPED line; with CI set it fails.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerRow } from '../../../src/commands/ledger/list.js';
import { BIN, type CliResult, runBin, tempDir, testEnv } from '../../support/cli.js';
import { createdCounts, externalId, order, orders, writeNdjson } from '../../support/orders.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../../support/postgres.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const hasPostgres = requirePostgres(
  'orders create, orders resolve, refs contacts import and config on a PostgreSQL ledger (test/commands/orders/create.postgres.test.ts)',
);

const ORDERS_PATH = '/api/v1/orders';
const CONTACTS_PATH = '/api/v1/contact_references';

describe.skipIf(!hasPostgres)('the PostgreSQL ledger through the binary', () => {
  const sandbox = useSandbox({ validationDelayMs: 10 });
  let server: RunningPostgres;

  beforeAll(async () => {
    server = (await startPostgres())!;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  // The tests share one database and one sandbox (reset between them, its URL kept): each test
  // sends externalIds of its own prefix.

  /** One machine of a fleet: its own config folder (so its own default ledger), HOME and working folder. */
  interface Machine {
    configDir: string;
    cwd: string;
    env: Record<string, string>;
  }

  /** A machine whose ledger is PostgreSQL through ORDERCLI_LEDGER (unless `ledger: false`). */
  function machine({ ledger = true } = {}): Machine {
    const configDir = tempDir('ordercli-config-');
    const env: Record<string, string> = {
      ORDERCLI_CONFIG_DIR: configDir,
      HOME: tempDir('ordercli-home-'),
      ORDERCLI_BASE_URL: sandbox.url,
      ORDERCLI_TOKEN: sandbox.tokens.partner,
    };
    if (ledger) env.ORDERCLI_LEDGER = server.url;
    return { configDir, cwd: tempDir(), env };
  }

  /** Fails the test when a run's stdout or stderr holds the password. */
  function showsNoPassword(result: CliResult, args: readonly string[]): CliResult {
    const command = args.join(' ');
    expect(result.stdout, `stdout of ${command}`).not.toContain(server.password);
    expect(result.stderr, `stderr of ${command}`).not.toContain(server.password);
    return result;
  }

  /** The built binary on a machine, to its end; its output checked for the password. */
  async function ordercli(
    on: Machine,
    args: string[],
    options: { stdin?: string; env?: Record<string, string | undefined> } = {},
  ): Promise<CliResult> {
    const result = await runBin(args, {
      cwd: on.cwd,
      env: { ...on.env, ...options.env },
      stdin: options.stdin,
      timeoutMs: 60_000,
    });
    return showsNoPassword(result, args);
  }

  interface Background {
    pid: number;
    ended(): boolean;
    kill9(): void;
    done: Promise<CliResult>;
  }

  /** Children still running when a test ends: killed by their own PID. */
  const children = new Set<ChildProcess>();
  /** Answers a test holds at the sandbox: let go when it ends, whatever happened. */
  const holds: (() => void)[] = [];
  afterEach(() => {
    for (const release of holds.splice(0)) release();
    for (const child of children) child.kill('SIGKILL');
    children.clear();
  });

  /** The built binary on a machine, in the background (its output checked once it ends). */
  function start(on: Machine, args: string[]): Background {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: on.cwd,
      env: testEnv(on.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    let ended = false;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const done = new Promise<CliResult>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => {
        ended = true;
        children.delete(child);
        resolve(showsNoPassword({ code: code ?? (signal ? 128 : 1), stdout, stderr }, args));
      });
    });
    return { pid: child.pid!, ended: () => ended, kill9: () => child.kill('SIGKILL'), done };
  }

  /** The next POST to `path` is processed at once and answered only once the test lets go. */
  function holdNextAnswer(path = ORDERS_PATH): () => void {
    let release = (): void => undefined;
    const until = new Promise<void>((resolve) => {
      release = resolve;
    });
    holds.push(release);
    sandbox.scriptFaults([{ method: 'POST', path, kind: 'delay', until }]);
    return release;
  }

  function orderPosts(path = ORDERS_PATH) {
    return sandbox.requests.filter((request) => request.method === 'POST' && request.path === path);
  }

  /** How many POSTs of orders (or contact references) the sandbox received with this key. */
  function postsOf(key: string, path = ORDERS_PATH): number {
    return orderPosts(path).filter((request) => {
      const body = request.body as { externalId?: unknown; contact?: { externalReference?: unknown } };
      return (path === ORDERS_PATH ? body?.externalId : body?.contact?.externalReference) === key;
    }).length;
  }

  function writeOrder(on: Machine, name: string, body: Record<string, unknown>): string {
    writeFileSync(join(on.cwd, name), JSON.stringify(body));
    return name;
  }

  /** `ledger list --json` on a machine, the rows of these keys only (the database is shared). */
  async function ledgerRows(on: Machine, keys: readonly string[], ...more: string[]): Promise<LedgerRow[]> {
    const listed = await ordercli(on, ['--json', 'ledger', 'list', ...more]);
    expect(listed.code, listed.stderr).toBe(0);
    return (JSON.parse(listed.stdout) as LedgerRow[])
      .filter((row) => keys.includes(row.externalId))
      .sort((a, b) => a.externalId.localeCompare(b.externalId));
  }

  /** The password as every command shows it. */
  function redacted(): string {
    return server.url.replace(`:${server.password}@`, ':***@');
  }

  it('orders create with ORDERCLI_LEDGER creates once: again, from this machine or another, exit 2 "already exists", nothing sent', async () => {
    const a = machine();
    const id = externalId(1, 'PGC');
    const file = writeOrder(a, 'order.json', order(1, 'PGC'));
    const created = await ordercli(a, ['orders', 'create', '--file', file]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^Created order .* \(id \d+\)\.\n$/);
    const [stored] = sandbox.orders();

    const again = await ordercli(a, ['orders', 'create', '--file', file]);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain(`"${id}" already exists at ${sandbox.url}`);
    expect(again.stderr).toContain(`id ${stored?.id}, code ${stored?.code}`);
    expect(again.stderr).toContain('nothing was sent');

    // Another machine (its own config folder, empty default ledger) sees the same record: it is in
    // PostgreSQL, not in a's config folder.
    const b = machine();
    const elsewhere = await ordercli(b, [
      'orders',
      'create',
      '--file',
      writeOrder(b, 'order.json', order(1, 'PGC')),
    ]);
    expect(elsewhere.code, elsewhere.stderr).toBe(2);
    expect(elsewhere.stderr).toContain(`"${id}" already exists at ${sandbox.url}`);
    expect(postsOf(id)).toBe(1);
    expect(createdCounts(sandbox).get(id)).toBe(1);
    expect(existsSync(join(a.configDir, 'ledger'))).toBe(false);

    const rows = await ledgerRows(b, [id]);
    expect(rows).toEqual([
      expect.objectContaining({
        externalId: id,
        status: 'created',
        service: sandbox.url,
        by: 'orders create',
        input: join(a.cwd, 'order.json'),
        id: stored?.id,
        httpStatus: 201,
      }),
    ]);
    const status = await ordercli(b, ['--json', 'ledger', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ backend: 'postgres', location: redacted() });
  });

  it('orders create --force while an import of another ordercli holds the claim: exit 2 naming its pid, nothing sent; --force then overrides the created record', async () => {
    const on = machine();
    const held = order(1, 'PGL');
    const id = held.externalId as string;
    // Its own input name: an input's history is found by its name, in a database the tests share.
    writeNdjson(on.cwd, 'held.ndjson', [held, order(2, 'PGL')]);
    const file = writeOrder(on, 'order.json', held);
    // The sandbox creates the import's first order and holds its answer until the create has run.
    const release = holdNextAnswer();
    const importing = start(on, ['--json', 'orders', 'import', 'held.ndjson', '--concurrency', '1']);
    await waitFor(() => postsOf(id) === 1 || importing.ended(), 20_000, `the import POSTing ${id}`);
    expect(importing.ended(), 'the import ended before its answer was let go').toBe(false);

    const claimed = await ledgerRows(on, [id], '--status', 'claimed');
    expect(claimed).toEqual([
      expect.objectContaining({
        externalId: id,
        status: 'claimed',
        owner: expect.objectContaining({ pid: importing.pid }),
      }),
    ]);
    const status = await ordercli(on, ['--json', 'ledger', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).openers).toContainEqual(
      expect.objectContaining({ pid: importing.pid, alive: 'alive', services: [sandbox.url] }),
    );
    // Nor can it be settled by hand while it is being sent.
    const settled = await ordercli(on, ['orders', 'resolve', '--not-created', id]);
    expect(settled.code, settled.stderr).toBe(2);
    expect(settled.stderr).toContain(
      `The order "${id}" is being sent right now by another ordercli (pid ${importing.pid} on `,
    );
    expect(settled.stderr).toContain('nothing was recorded');
    const forced = await ordercli(on, ['orders', 'create', '--file', file, '--force']);
    // Still unanswered: the create ran while the import's request was in flight.
    const answered = orderPosts().find(
      (request) => (request.body as { externalId?: string })?.externalId === id,
    )?.status;
    release();
    expect(answered).toBeUndefined();
    expect(forced.code, forced.stderr).toBe(2);
    expect(forced.stderr).toContain(
      `The order "${id}" is being sent to ${sandbox.url} by another ordercli (pid ${importing.pid} on `,
    );
    expect(forced.stderr).toContain('nothing was sent');
    expect(forced.stderr).not.toContain('warning: --force');

    const imported = await importing.done;
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout).counts).toMatchObject({ total: 2, created: 2 });
    expect(postsOf(id)).toBe(1);

    // What --force does override: a created record (so the refusal above was the live claim's).
    const overridden = await ordercli(on, ['orders', 'create', '--file', file, '--force']);
    expect(overridden.code, overridden.stderr).toBe(0);
    expect(overridden.stderr).toMatch(
      /--force: sending "PGL-00001" although the order ledger says it was created/,
    );
    expect(postsOf(id)).toBe(2);
  });

  it('orders resolve without an input settles what orders create left in doubt (lost answer, refused connection, kill -9); then only the one not created is sent', async () => {
    const on = machine();
    const [lost, unread, killed] = [1, 2, 3].map((i) => externalId(i, 'PGD')) as [string, string, string];
    const files = [1, 2, 3].map((i) => writeOrder(on, `order-${i}.json`, order(i, 'PGD')));
    const create = (i: number, ...more: string[]) =>
      ordercli(on, ['orders', 'create', '--file', files[i - 1]!, ...more]);

    // Created, the connection dropped before the answer.
    sandbox.scriptFaults([{ method: 'POST', path: ORDERS_PATH, kind: 'reset-after' }]);
    const first = await create(1);
    expect(first.code, first.stderr).toBe(1);
    // The connection dropped before the body was read: not created.
    sandbox.scriptFaults([{ method: 'POST', path: ORDERS_PATH, kind: 'reset-before-read' }]);
    const second = await create(2);
    expect(second.code, second.stderr).toBe(1);
    // Created, its answer held, the binary killed -9 meanwhile: its claim's owner is dead.
    holdNextAnswer();
    const dying = start(on, ['orders', 'create', '--file', files[2]!]);
    await waitFor(
      () => createdCounts(sandbox).get(killed) === 1 || dying.ended(),
      20_000,
      `the sandbox creating ${killed}`,
    );
    expect(dying.ended(), 'orders create ended before it could be killed').toBe(false);
    dying.kill9();
    await dying.done;

    const inDoubt = await ledgerRows(on, [lost, unread, killed], '--status', 'in-doubt');
    expect(inDoubt.map((row) => row.externalId)).toEqual([lost, unread, killed]);
    expect(inDoubt[2]).toMatchObject({ owner: expect.objectContaining({ pid: dying.pid }) });
    for (const i of [1, 2, 3]) {
      const refused = await create(i);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`"${externalId(i, 'PGD')}" may already exist at ${sandbox.url}`);
      expect(refused.stderr).toContain('orders resolve');
    }
    // One POST each (the unread one's body was never read: counted among all POSTs).
    expect([lost, killed].map((id) => postsOf(id))).toEqual([1, 1]);
    expect(orderPosts()).toHaveLength(3);

    const atService = new Map(sandbox.orders().map((stored) => [String(stored.externalId), stored]));
    expect([...atService.keys()].sort()).toEqual([lost, killed]);
    const resolved = await ordercli(on, [
      '--json',
      'orders',
      'resolve',
      '--created',
      `${lost}=${atService.get(lost)!.id}`,
      '--created',
      `${killed}=${atService.get(killed)!.id}`,
      '--not-created',
      unread,
    ]);
    expect(resolved.code, resolved.stderr).toBe(0);
    const report = JSON.parse(resolved.stdout) as { journal: unknown; baseUrl: string; changed: unknown[] };
    expect(report).toMatchObject({ journal: null, baseUrl: sandbox.url });
    expect(report.changed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ externalId: lost, to: 'created', id: atService.get(lost)!.id }),
        expect.objectContaining({ externalId: killed, to: 'created', id: atService.get(killed)!.id }),
        expect.objectContaining({ externalId: unread, to: 'not-created' }),
      ]),
    );
    expect(report.changed).toHaveLength(3);

    for (const i of [1, 3]) {
      const refused = await create(i);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toMatch(
        new RegExp(`"${externalId(i, 'PGD')}" already exists at .*: resolved as created at .* \\(id \\d+\\)`),
      );
    }
    const sent = await create(2);
    expect(sent.code, sent.stderr).toBe(0);
    expect([lost, unread, killed].map((id) => postsOf(id))).toEqual([1, 1, 1]);
    expect(orderPosts()).toHaveLength(4);
    expect([lost, unread, killed].map((id) => createdCounts(sandbox).get(id))).toEqual([1, 1, 1]);
    const after = await ledgerRows(on, [lost, unread, killed]);
    expect(after.map((row) => row.status)).toEqual(['created', 'created', 'created']);
  });

  it('orders resolve <input> settles what an import left in doubt; the re-run sends only the order resolved as not created', async () => {
    const on = machine();
    const list = orders(6, 'PGI');
    const ids = list.map((o) => o.externalId as string);
    writeNdjson(on.cwd, 'orders.ndjson', list);
    sandbox.scriptFaults([
      { method: 'POST', path: ORDERS_PATH, kind: 'reset-after' },
      { method: 'POST', path: ORDERS_PATH, kind: 'reset-before-read' },
    ]);
    const first = await ordercli(on, ['--json', 'orders', 'import', 'orders.ndjson', '--concurrency', '1']);
    expect(first.code, first.stderr).toBe(4);
    expect(JSON.parse(first.stdout).counts).toMatchObject({ total: 6, created: 4, unknown: 2 });
    const inDoubt = await ledgerRows(on, ids, '--status', 'in-doubt', '--input', 'orders.ndjson');
    expect(inDoubt).toEqual([
      expect.objectContaining({ externalId: ids[0], input: 'orders.ndjson', line: 1, by: 'orders import' }),
      expect.objectContaining({ externalId: ids[1], input: 'orders.ndjson', line: 2, by: 'orders import' }),
    ]);

    const created = sandbox.orders().find((stored) => stored.externalId === ids[0])!;
    const resolved = await ordercli(on, [
      '--json',
      'orders',
      'resolve',
      'orders.ndjson',
      '--created',
      `${ids[0]}=${created.id}`,
      '--not-created',
      ids[1]!,
    ]);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({
      journal: 'orders.ndjson',
      baseUrl: sandbox.url,
      changed: [
        expect.objectContaining({ externalId: ids[0], from: 'unknown', to: 'created', id: created.id }),
        expect.objectContaining({ externalId: ids[1], from: 'unknown', to: 'not-created' }),
      ],
      stillUnknown: 0,
    });
    const journal = await ordercli(on, ['--json', 'orders', 'journal', 'orders.ndjson']);
    expect(journal.code, journal.stderr).toBe(0);
    expect(JSON.parse(journal.stdout).counts).toMatchObject({ unknown: 0, resolvedCreated: 1, total: 6 });

    const posted = orderPosts().length;
    const rerun = await ordercli(on, ['--json', 'orders', 'import', 'orders.ndjson']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout).counts).toMatchObject({ total: 6, created: 1, skipped: 5, unknown: 0 });
    expect(orderPosts().length).toBe(posted + 1);
    // The second order's first POST was never read: 7 POSTs, one of each body.
    expect(orderPosts()).toHaveLength(7);
    expect(ids.map((id) => postsOf(id))).toEqual([1, 1, 1, 1, 1, 1]);
    expect(ids.map((id) => createdCounts(sandbox).get(id))).toEqual([1, 1, 1, 1, 1, 1]);
    expect(readdirSync(on.cwd)).toEqual(['orders.ndjson']);
  });

  it('refs contacts import with ORDERCLI_LEDGER: created, then skipped on a re-run (from another machine too); a 409 is exists, never sent again', async () => {
    const HEADER = 'contact.externalReference;contact.firstName;contact.lastName;contact.email;customer.name';
    const NEW = 'PART-C-0101';
    // The seed's contact reference 301: the sandbox answers 409 naming it.
    const EXISTING = 'PART-C-0001';
    const csv = `${HEADER}\n${NEW};Jeanne;Roux;jeanne.roux@epicerie-roux.fr;Épicerie Roux\n${EXISTING};Camille;Rousseau;camille.rousseau@maison-rousseau.fr;Maison Rousseau\n`;
    const [a, b] = [machine(), machine()];
    for (const on of [a, b]) writeFileSync(join(on.cwd, 'contacts.csv'), csv);
    const contactsImport = (on: Machine) =>
      ordercli(on, ['--json', 'refs', 'contacts', 'import', 'contacts.csv']);
    type Report = {
      counts: Record<string, number>;
      records: {
        'contact.externalReference': string;
        status: string;
        id: number | null;
        httpStatus: number | null;
      }[];
    };

    const first = await contactsImport(a);
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout) as Report;
    expect(report.counts).toMatchObject({ total: 2, created: 1, exists: 1, failed: 0 });
    expect(report.records).toEqual([
      expect.objectContaining({
        'contact.externalReference': NEW,
        status: 'created',
        id: expect.any(Number),
      }),
      expect.objectContaining({
        'contact.externalReference': EXISTING,
        status: 'exists',
        httpStatus: 409,
        id: 301,
      }),
    ]);
    expect([postsOf(NEW, CONTACTS_PATH), postsOf(EXISTING, CONTACTS_PATH)]).toEqual([1, 1]);

    for (const on of [a, b]) {
      const again = await contactsImport(on);
      expect(again.code, again.stderr).toBe(0);
      const records = (JSON.parse(again.stdout) as Report).records;
      expect(records.map((r) => [r['contact.externalReference'], r.status])).toEqual([
        [NEW, 'skipped'],
        [EXISTING, 'exists'],
      ]);
      expect(records[0]!.id).toBe(report.records[0]!.id);
      expect(records[1]).toMatchObject({ id: 301, httpStatus: 409 });
    }
    expect([postsOf(NEW, CONTACTS_PATH), postsOf(EXISTING, CONTACTS_PATH)]).toEqual([1, 1]);

    const rows = await ledgerRows(b, [NEW, EXISTING], '--kind', 'contact-references');
    expect(rows).toEqual([
      expect.objectContaining({
        externalId: EXISTING,
        status: 'created',
        kind: 'contact-references',
        httpStatus: 409,
        id: 301,
      }),
      expect.objectContaining({
        externalId: NEW,
        status: 'created',
        kind: 'contact-references',
        httpStatus: 201,
      }),
    ]);
    // Not in the orders' ledger.
    expect(await ledgerRows(b, [NEW, EXISTING], '--kind', 'orders')).toEqual([]);
    expect(readdirSync(a.cwd)).toEqual(['contacts.csv']);
  });

  it('the ledger set by the profile key: config set ledger, then orders create claims in PostgreSQL; config list and config get show the password as ***', async () => {
    const on = machine({ ledger: false });
    // From stdin, as a password is best given (not in the shell history nor the process list).
    const setFromStdin = await ordercli(on, ['config', 'set', 'ledger', '-'], { stdin: `${server.url}\n` });
    expect(setFromStdin.code, setFromStdin.stderr).toBe(0);
    expect(setFromStdin.stderr).toContain(`Set ledger = ${redacted()} in profile "default"`);
    expect(setFromStdin.stderr).not.toContain('warning:');
    // On the command line too, as the contract writes it (`ordercli config set ledger …`): with a warning.
    const set = await ordercli(on, ['config', 'set', 'ledger', server.url]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain(`Set ledger = ${redacted()} in profile "default"`);
    expect(set.stderr).toContain(
      'warning: a password given on the command line stays in your shell history and shows in the process list; next time use ordercli config set ledger - (reads stdin)',
    );
    const file = join(on.configDir, 'config.json');
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default.ledger).toBe(server.url);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const got = await ordercli(on, ['config', 'get', 'ledger']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toBe(`${redacted()}\n`);
    const listed = await ordercli(on, ['config', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^ledger\\t${literally(redacted())}\\t${literally(redacted())}\\tprofile$`, 'm'),
    );
    const json = await ordercli(on, ['--json', 'config', 'list']);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { values: { key: string }[] }).values).toContainEqual({
      key: 'ledger',
      profile: redacted(),
      effective: redacted(),
      source: 'profile',
      sourceName: 'profile',
    });

    const id = externalId(1, 'PGP');
    const file1 = writeOrder(on, 'order.json', order(1, 'PGP'));
    const created = await ordercli(on, ['orders', 'create', '--file', file1]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe('');
    const again = await ordercli(on, ['orders', 'create', '--file', file1]);
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toContain(`"${id}" already exists at ${sandbox.url}`);
    // The key is in PostgreSQL: the default ledger of the config folder was never written, and
    // another machine given the URL alone finds it.
    expect(existsSync(join(on.configDir, 'ledger'))).toBe(false);
    expect(await ledgerRows(on, [id])).toEqual([
      expect.objectContaining({ externalId: id, status: 'created', by: 'orders create' }),
    ]);
    expect(await ledgerRows(machine(), [id])).toEqual([
      expect.objectContaining({ externalId: id, status: 'created', by: 'orders create' }),
    ]);
    const status = await ordercli(on, ['ledger', 'status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(`${redacted()} (PostgreSQL)`);
    expect(postsOf(id)).toBe(1);
  });
});

/** `text` as a regular expression that matches it literally. */
function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
