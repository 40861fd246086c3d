// `ledger list` on the local ledger, against a real sandbox: one row per key with its status (in
// doubt, claimed, created, failed, not created), the input and line that sent it, who holds a
// claim; on a terminal, piped, --csv and --json; filtered by status, input, service and kind.
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ledgerColumns } from '../../../src/commands/ledger/list.js';
import { LEDGER_LIST_KEYS } from '../../../src/commands/ledger/statuses.js';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.js';
import { runBin } from '../../support/cli.js';
import { orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { stripAnsi } from '../../support/session.js';
import { waitFor } from '../../support/wait.js';
import {
  at,
  CREATED,
  FAILED,
  IN_DOUBT,
  machine,
  NOT_CREATED,
  ORDERS_PATH,
  posts,
  seedEveryStatus,
} from './seed.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

interface Row {
  externalId: string;
  status: string;
  service: string;
  kind: string;
  input: string | null;
  line: number | null;
  at: string;
  sentAt: string | null;
  by: string | null;
  owner: { pid: number; host: string } | null;
  id: number | null;
  code: string | null;
  httpStatus: number | null;
  reason: string | null;
  message: string | null;
}

const others: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(others.splice(0).map((other) => other.close()));
});

describe('ledger list', () => {
  it('--json: every key with its status, input, line, command, id and code, reason or message', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const result = await on.run([...at(sandbox), '--json', 'ledger', 'list']);
    expect(result.code, result.stderr).toBe(0);
    const rows = JSON.parse(result.stdout) as Row[];
    expect(rows.map((row) => [row.externalId, row.status])).toEqual(
      expect.arrayContaining([
        [IN_DOUBT, 'in-doubt'],
        [FAILED, 'failed'],
        [NOT_CREATED, 'not-created'],
        ...CREATED.map((id) => [id, 'created']),
      ]),
    );
    expect(rows).toHaveLength(6);
    const byId = new Map(rows.map((row) => [row.externalId, row]));
    const created = byId.get(CREATED[0]!)!;
    expect(Object.keys(created).sort()).toEqual(
      [
        'externalId',
        'status',
        'service',
        'kind',
        'input',
        'line',
        'at',
        'sentAt',
        'by',
        'owner',
        'id',
        'code',
        'httpStatus',
        'reason',
        'message',
      ].sort(),
    );
    expect(created).toMatchObject({
      service: sandbox.url,
      kind: 'orders',
      input: 'orders.ndjson',
      line: 4,
      by: 'orders import',
      owner: null,
      httpStatus: 201,
    });
    expect(created.id).toEqual(expect.any(Number));
    expect(created.code).toMatch(/^SO-/);
    expect(byId.get(IN_DOUBT)).toMatchObject({ line: 1, reason: expect.any(String), id: null });
    expect(byId.get(FAILED)).toMatchObject({ line: 2, httpStatus: 422, message: expect.any(String) });
    expect(byId.get(NOT_CREATED)).toMatchObject({ line: 3, by: 'orders resolve' });
  });

  it('--status in-doubt (what a CI fleet runs), comma-separated or repeated; a wrong one is exit 2', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const doubt = await on.run([...at(sandbox), '--json', 'ledger', 'list', '--status', 'in-doubt']);
    expect(doubt.code, doubt.stderr).toBe(0);
    expect((JSON.parse(doubt.stdout) as Row[]).map((row) => row.externalId)).toEqual([IN_DOUBT]);
    for (const args of [
      ['--status', 'failed,not-created'],
      ['--status', 'failed', '--status', 'not-created'],
    ]) {
      const result = await on.run([...at(sandbox), '--json', 'ledger', 'list', ...args]);
      expect(result.code, result.stderr).toBe(0);
      expect((JSON.parse(result.stdout) as Row[]).map((row) => row.externalId).sort()).toEqual([
        FAILED,
        NOT_CREATED,
      ]);
    }
    const wrong = await on.run([...at(sandbox), 'ledger', 'list', '--status', 'unknown']);
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toContain(
      '--status "unknown" is not a status: choose among in-doubt, claimed, created, validated, failed, not-created',
    );
  });

  it('on a terminal: a table with the columns of the contract; piped: tab-separated rows; --csv with a header', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const table = await on.run([...at(sandbox), 'ledger', 'list'], { tty: true, columns: 220 });
    expect(table.code, table.stderr).toBe(0);
    const screen = stripAnsi(table.stdout);
    for (const header of [
      'EXTERNAL ID',
      'STATUS',
      'INPUT',
      'LINE',
      'SENT AT',
      'BY',
      'CLAIMED BY',
      'ID',
      'CODE',
      'REASON',
    ]) {
      expect(screen).toContain(header);
    }
    // One service configured: no SERVICE column.
    expect(screen).not.toContain('SERVICE');
    expect(screen).toMatch(new RegExp(`${IN_DOUBT}\\s*│\\s*in-doubt\\s*│\\s*orders\\.ndjson`));

    const piped = await on.run([...at(sandbox), 'ledger', 'list', '--status', 'created']);
    expect(piped.code, piped.stderr).toBe(0);
    const lines = piped.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    const cells = lines[0]!.split('\t');
    expect(cells.slice(0, 4)).toEqual([CREATED[0], 'created', 'orders.ndjson', '4']);
    expect(cells[5]).toBe('orders import');
    expect(cells[8]).toMatch(/^SO-/);

    const csv = await on.run([
      ...at(sandbox),
      'ledger',
      'list',
      '--csv',
      '--columns',
      'external-id,status,line',
    ]);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\r\n')[0]).toBe('EXTERNAL ID,STATUS,LINE');
    expect(csv.stdout).toContain(`${FAILED},failed,2\r\n`);
  });

  it('--input: only the keys an import of that input sent', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    writeNdjson(on.cwd, 'more.ndjson', orders(2, 'MORE'));
    const more = await on.run([...at(sandbox), 'orders', 'import', 'more.ndjson']);
    expect(more.code, more.stderr).toBe(0);
    const result = await on.run([...at(sandbox), '--json', 'ledger', 'list', '--input', 'more.ndjson']);
    expect(result.code, result.stderr).toBe(0);
    const rows = JSON.parse(result.stdout) as Row[];
    expect(rows.map((row) => row.externalId)).toEqual(['MORE-00001', 'MORE-00002']);
    expect(rows.every((row) => row.input === 'more.ndjson' && row.status === 'created')).toBe(true);
    const none = await on.run([...at(sandbox), 'ledger', 'list', '--input', 'other.csv']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('No keys of');
  });

  it('--service defaults to the configured base URL; with none configured, every service, with a SERVICE column', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const other = await startSandbox({ port: 0, quiet: true, validationDelayMs: 10 });
    others.push(other);
    writeNdjson(on.cwd, 'elsewhere.ndjson', orders(1, 'ELSE'));
    const sent = await on.run([...at(other), 'orders', 'import', 'elsewhere.ndjson']);
    expect(sent.code, sent.stderr).toBe(0);

    const configured = await on.run([...at(other), '--json', 'ledger', 'list']);
    expect((JSON.parse(configured.stdout) as Row[]).map((row) => row.externalId)).toEqual(['ELSE-00001']);
    const given = await on.run([...at(other), '--json', 'ledger', 'list', '--service', `${sandbox.url}/`]);
    expect(JSON.parse(given.stdout) as Row[]).toHaveLength(6);

    const every = await on.run(['--json', 'ledger', 'list']);
    expect(every.code, every.stderr).toBe(0);
    const services = new Set((JSON.parse(every.stdout) as Row[]).map((row) => row.service));
    expect(services).toEqual(new Set([sandbox.url, other.url]));
    const table = await on.run(['ledger', 'list'], { tty: true, columns: 240 });
    expect(table.stdout).toContain('SERVICE');
    expect(table.stdout).toContain(other.url);

    const wrong = await on.run(['ledger', 'list', '--service', 'ftp://example.com']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--service must be an http:// or https:// URL');
  });

  it('--kind: contact references apart from orders, with a KIND column when they are listed', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    writeFileSync(
      join(on.cwd, 'contacts.csv'),
      'contact.externalReference;contact.firstName;contact.lastName;contact.email;customer.name\r\nPART-C-0101;Jeanne;Roux;jeanne.roux@epicerie-roux.fr;Épicerie Roux\r\n',
    );
    const imported = await on.run([...at(sandbox), 'refs', 'contacts', 'import', 'contacts.csv']);
    expect(imported.code, imported.stderr).toBe(0);
    const contacts = await on.run([
      ...at(sandbox),
      '--json',
      'ledger',
      'list',
      '--kind',
      'contact-references',
    ]);
    expect(JSON.parse(contacts.stdout)).toEqual([
      expect.objectContaining({ externalId: 'PART-C-0101', kind: 'contact-references', status: 'created' }),
    ]);
    const ordersOnly = await on.run([...at(sandbox), '--json', 'ledger', 'list', '--kind', 'orders']);
    expect(JSON.parse(ordersOnly.stdout) as Row[]).toHaveLength(6);
    const table = await on.run([...at(sandbox), 'ledger', 'list'], { tty: true, columns: 220 });
    expect(table.stdout).toContain('KIND');
    expect(table.stdout).toContain('contact-references');
    const wrong = await on.run([...at(sandbox), 'ledger', 'list', '--kind', 'contacts']);
    expect(wrong.code).toBe(2);
  });

  it('claimed: a key being sent right now, with the pid and host that hold it', async () => {
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
      const claimed = await on.run([...at(sandbox), '--json', 'ledger', 'list', '--status', 'claimed']);
      expect(claimed.code, claimed.stderr).toBe(0);
      expect(JSON.parse(claimed.stdout)).toEqual([
        expect.objectContaining({
          externalId: 'HELD-00001',
          status: 'claimed',
          owner: { pid: process.pid, host: hostname() },
        }),
      ]);
      const table = await on.run([...at(sandbox), 'ledger', 'list'], { tty: true, columns: 220 });
      expect(table.stdout).toContain(`pid ${process.pid} on ${hostname()}`);
    } finally {
      release();
    }
    expect((await running).code).toBe(0);
    const after = await on.run([...at(sandbox), '--json', 'ledger', 'list']);
    expect(JSON.parse(after.stdout)).toEqual([
      expect.objectContaining({ externalId: 'HELD-00001', status: 'created' }),
    ]);
  });

  it('an empty ledger: nothing on stdout, a note on stderr, exit 0 ([] with --json)', async () => {
    const on = machine();
    const result = await on.run([...at(sandbox), 'ledger', 'list', '--status', 'in-doubt']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `No keys with status in-doubt of ${sandbox.url} in the order ledger ${join(on.configDir, 'ledger')}.\n`,
    );
    const json = await on.run([...at(sandbox), '--json', 'ledger', 'list']);
    expect(json.stdout.trim()).toBe('[]');
  });

  it('names in its help every column key it has', () => {
    const keys = ledgerColumns({ service: true, kind: true }).map((column) => column.key);
    expect(LEDGER_LIST_KEYS.split(', ')).toEqual(keys);
  });
});

describe('ledger list through the built binary', () => {
  it('--status in-doubt --json, as a CI job runs it', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const result = await runBin([...at(sandbox), 'ledger', 'list', '--status', 'in-doubt', '--json'], {
      env: on.env,
      cwd: on.cwd,
    });
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as Row[]).map((row) => [row.externalId, row.status, row.line])).toEqual(
      [[IN_DOUBT, 'in-doubt', 1]],
    );
  });
});
