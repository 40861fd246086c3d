// `ledger copy --to <dir>` and the move check on local ledgers, against a real sandbox: what the
// default ledger knows (created, in doubt) is recorded in the new one, once; a command that sends
// through a new ledger while the default one holds keys of the service is refused (exit 2, nothing
// sent) until they are copied, or --force starts the new ledger empty.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBin } from '../../support/cli.js';
import { FIXTURES } from '../../support/import-input.js';
import { orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { at, CREATED, IN_DOUBT, machine, posts, seedEveryStatus } from './seed.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

const ORDER = JSON.parse(readFileSync(join(FIXTURES, 'order.json'), 'utf8')) as Record<string, unknown>;
const NEW_LEDGER = ['--ledger', 'state/ledger'];

interface CopyReport {
  from: string;
  to: string;
  services: { service: string; kind: string; copied: number; known: number; conflicts: string[] }[];
}

/** Writes an order file with this externalId in the machine's working folder. */
function orderFile(on: ReturnType<typeof machine>, name: string, externalId: string): string {
  writeFileSync(join(on.cwd, name), JSON.stringify({ ...ORDER, externalId }));
  return name;
}

describe('ledger copy', () => {
  it('copies the keys created or in doubt into a new folder, once: a second run copies none', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const first = await on.run(['--json', 'ledger', 'copy', '--to', 'state/ledger']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout) as CopyReport).toEqual({
      from: join(on.configDir, 'ledger'),
      to: join(on.cwd, 'state/ledger'),
      services: [{ service: sandbox.url, kind: 'orders', copied: 4, known: 0, conflicts: [] }],
    });
    const second = await on.run(['ledger', 'copy', '--to', 'state/ledger']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(
      [
        `Copied the order ledger ${join(on.configDir, 'ledger')} to ${join(on.cwd, 'state/ledger')}:`,
        `  ${sandbox.url}  orders  0 copied, 4 already there`,
        '0 keys copied, 4 keys already there.',
        '',
      ].join('\n'),
    );
    const listed = await on.run([...NEW_LEDGER, '--json', 'ledger', 'list', '--service', sandbox.url]);
    const rows = JSON.parse(listed.stdout) as {
      externalId: string;
      status: string;
      by: string;
      line: number;
    }[];
    expect(rows.map((row) => [row.externalId, row.status]).sort()).toEqual(
      [[IN_DOUBT, 'in-doubt'], ...CREATED.map((id) => [id, 'created'])].sort(),
    );
    expect(rows.every((row) => row.by === 'ledger copy')).toBe(true);
    expect(rows.find((row) => row.externalId === IN_DOUBT)?.line).toBe(1);
  });

  it('the copied ledger refuses what was created and what is in doubt (exit 2, nothing sent)', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    expect((await on.run(['ledger', 'copy', '--to', 'state/ledger'])).code).toBe(0);
    const before = posts(sandbox);
    for (const externalId of [CREATED[0]!, IN_DOUBT]) {
      const file = orderFile(on, 'order.json', externalId);
      const refused = await on.run([...at(sandbox), ...NEW_LEDGER, 'orders', 'create', '--file', file]);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('nothing was sent');
    }
    const input = await on.run([
      ...at(sandbox),
      ...NEW_LEDGER,
      '--json',
      'orders',
      'import',
      'orders.ndjson',
    ]);
    expect(input.code, input.stderr).toBe(4);
    expect(JSON.parse(input.stdout).counts).toMatchObject({ skipped: 3, unknown: 1, created: 2 });
    // Only the failed and the not-created ones were sent again.
    expect(posts(sandbox)).toBe(before + 2);
  });

  it('--to the ledger being copied is exit 2; the copy source is --ledger', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const same = await on.run(['ledger', 'copy', '--to', join(on.configDir, 'ledger')]);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('--to names the ledger being copied');
    expect((await on.run(['ledger', 'copy', '--to', 'state/ledger'])).code).toBe(0);
    // And back: from the folder into another one.
    const back = await on.run([...NEW_LEDGER, '--json', 'ledger', 'copy', '--to', 'other']);
    expect(back.code, back.stderr).toBe(0);
    expect((JSON.parse(back.stdout) as CopyReport).services[0]).toMatchObject({ copied: 4, known: 0 });
  });

  it('an empty ledger: nothing to copy', async () => {
    const on = machine();
    const result = await on.run(['ledger', 'copy', '--to', 'state/ledger']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`The order ledger ${join(on.configDir, 'ledger')} holds nothing to copy.\n`);
  });
});

describe('the move check', () => {
  it('orders create through a new ledger while the default one holds the service: exit 2, nothing sent, until copied', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const before = posts(sandbox);
    const file = orderFile(on, 'new.json', 'NEW-0001');
    const refused = await on.run([...at(sandbox), ...NEW_LEDGER, 'orders', 'create', '--file', file]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      `has no record of ${sandbox.url}, but the default ledger ${join(on.configDir, 'ledger')} holds orders of it (created or in doubt, such as`,
    );
    expect(refused.stderr).toContain('nothing was sent');
    expect(refused.stderr).toContain(
      `hint: Copy them first with ordercli --ledger ${join(on.configDir, 'ledger')} ledger copy --to state/ledger, or pass --force to start the new ledger empty.`,
    );
    expect(posts(sandbox)).toBe(before);

    // The hint, as given, works: the same command then sends.
    const copied = await on.run([
      '--ledger',
      join(on.configDir, 'ledger'),
      'ledger',
      'copy',
      '--to',
      'state/ledger',
    ]);
    expect(copied.code, copied.stderr).toBe(0);
    const sent = await on.run([...at(sandbox), ...NEW_LEDGER, 'orders', 'create', '--file', file]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(posts(sandbox)).toBe(before + 1);
  });

  it('orders create --force starts the new ledger empty; from then on it is not refused', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const forced = await on.run([
      ...at(sandbox),
      ...NEW_LEDGER,
      'orders',
      'create',
      '--file',
      orderFile(on, 'a.json', 'NEW-0001'),
      '--force',
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    const next = await on.run([
      ...at(sandbox),
      ...NEW_LEDGER,
      'orders',
      'create',
      '--file',
      orderFile(on, 'b.json', 'NEW-0002'),
    ]);
    expect(next.code, next.stderr).toBe(0);
  });

  it('orders import and refs contacts import are refused the same way, and so is a dry run (not --offline); another service and the default ledger are not', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const before = posts(sandbox);
    writeNdjson(on.cwd, 'more.ndjson', orders(2, 'MORE'));
    const refused = await on.run([...at(sandbox), ...NEW_LEDGER, 'orders', 'import', 'more.ndjson']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('ledger copy --to state/ledger');
    expect(posts(sandbox)).toBe(before);
    // orders resolve has no --force: the move check does not stand in its way; it resolves only
    // what the ledger holds, and this one holds nothing of the service.
    const resolve = await on.run([...at(sandbox), ...NEW_LEDGER, 'orders', 'resolve', '--created', IN_DOUBT]);
    expect(resolve.code).toBe(2);
    expect(resolve.stderr).not.toContain('ledger copy --to');
    expect(resolve.stderr).not.toContain('--force');
    // A dry run checks what the real run needs: refused the same way; --offline checks the file alone.
    const dry = await on.run([...at(sandbox), ...NEW_LEDGER, 'orders', 'import', 'more.ndjson', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(2);
    expect(dry.stderr).toContain('ledger copy --to state/ledger');
    const offline = await on.run([
      ...at(sandbox),
      ...NEW_LEDGER,
      ...['orders', 'import', 'more.ndjson', '--dry-run', '--offline'],
    ]);
    expect(offline.code, offline.stderr).toBe(0);
    const usual = await on.run([...at(sandbox), 'orders', 'import', 'more.ndjson']);
    expect(usual.code, usual.stderr).toBe(0);

    // Contact references: the default ledger holds none, so a new ledger is fine for them...
    writeFileSync(
      join(on.cwd, 'contacts.csv'),
      'contact.externalReference;contact.firstName;contact.lastName;contact.email;customer.name\r\nPART-C-0101;Jeanne;Roux;jeanne.roux@epicerie-roux.fr;Épicerie Roux\r\n',
    );
    const contacts = await on.run([
      ...at(sandbox),
      '--ledger',
      'contacts-ledger',
      'refs',
      'contacts',
      'import',
      'contacts.csv',
    ]);
    expect(contacts.code, contacts.stderr).toBe(0);
    // ...until the default ledger holds some.
    const local = await on.run([...at(sandbox), 'refs', 'contacts', 'import', 'contacts.csv']);
    expect(local.code, local.stderr).toBe(0);
    const other = await on.run([
      ...at(sandbox),
      '--ledger',
      'third',
      'refs',
      'contacts',
      'import',
      'contacts.csv',
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('holds contact references of it');
  });

  it('orders import --force and refs contacts import --force start the new ledger empty', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    writeNdjson(on.cwd, 'more.ndjson', orders(2, 'MORE'));
    const forced = await on.run([
      ...at(sandbox),
      ...NEW_LEDGER,
      'orders',
      'import',
      'more.ndjson',
      '--force',
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    writeFileSync(
      join(on.cwd, 'contacts.csv'),
      'contact.externalReference;contact.firstName;contact.lastName;contact.email;customer.name\r\nPART-C-0101;Jeanne;Roux;jeanne.roux@epicerie-roux.fr;Épicerie Roux\r\n',
    );
    expect((await on.run([...at(sandbox), 'refs', 'contacts', 'import', 'contacts.csv'])).code).toBe(0);
    const contacts = await on.run([
      ...at(sandbox),
      '--ledger',
      'third',
      'refs',
      'contacts',
      'import',
      'contacts.csv',
      '--force',
    ]);
    expect(contacts.code, contacts.stderr).toBe(0);
  });

  it('through the built binary, with the ledger set by ORDERCLI_LEDGER', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const file = orderFile(on, 'new.json', 'NEW-0001');
    const env = { ...on.env, ORDERCLI_LEDGER: 'state/ledger' };
    const refused = await runBin([...at(sandbox), 'orders', 'create', '--file', file], { env, cwd: on.cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `ordercli --ledger ${join(on.configDir, 'ledger')} ledger copy --to state/ledger`,
    );
    const copied = await runBin(
      ['--ledger', join(on.configDir, 'ledger'), 'ledger', 'copy', '--to', 'state/ledger'],
      {
        env,
        cwd: on.cwd,
      },
    );
    expect(copied.code, copied.stderr).toBe(0);
    expect(copied.stdout).toContain('4 keys copied');
    const sent = await runBin([...at(sandbox), 'orders', 'create', '--file', file], { env, cwd: on.cwd });
    expect(sent.code, sent.stderr).toBe(0);
  });
});
