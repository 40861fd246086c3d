// `ledger forget --service <url>` on the local ledger, against a real sandbox: refused (exit 2,
// nothing dropped) while keys are in doubt unless --force; a confirmation on a terminal (declined:
// exit 130, nothing dropped), none without one; says how many keys were dropped.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerFolder } from '../../../src/ledger/local.js';
import { orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { KEY, startSession } from '../../support/session.js';
import { at, IN_DOUBT, machine, seedEveryStatus } from './seed.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

async function keysOf(on: ReturnType<typeof machine>): Promise<string[]> {
  const listed = await on.run([...at(sandbox), '--json', 'ledger', 'list']);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { externalId: string }[]).map((row) => row.externalId);
}

describe('ledger forget', () => {
  it('refuses a service with keys in doubt (exit 2, nothing dropped), naming how to see and settle them', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const refused = await on.run(['ledger', 'forget', '--service', sandbox.url]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`holds 1 key of ${sandbox.url} in doubt or being sent`);
    expect(refused.stderr).toContain('nothing was dropped');
    expect(refused.stderr).toContain(
      `ordercli ledger list --service ${sandbox.url} --status in-doubt,claimed`,
    );
    expect(refused.stderr).toContain('--force');
    expect(await keysOf(on)).toHaveLength(6);
  });

  it('--force drops them all without asking where it cannot ask, and says how many', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const dropped = await on.run(['ledger', 'forget', '--service', `${sandbox.url}/`, '--force']);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toBe(
      `Forgot 6 keys of ${sandbox.url} in the order ledger ${join(on.configDir, 'ledger')}.\n`,
    );
    expect(await keysOf(on)).toEqual([]);
    expect(existsSync(ledgerFolder(join(on.configDir, 'ledger'), sandbox.url))).toBe(false);
    // Forgotten: the same input is sent again (what forgetting a real service would risk).
    const again = await on.run([...at(sandbox), 'orders', 'import', 'orders.ndjson']);
    expect(again.code, again.stderr).toBe(0);
  });

  it('a service with nothing in doubt is forgotten without --force; --json says how many', async () => {
    const on = machine();
    writeNdjson(on.cwd, 'orders.ndjson', orders(3));
    expect((await on.run([...at(sandbox), 'orders', 'import', 'orders.ndjson'])).code).toBe(0);
    const result = await on.run(['--json', 'ledger', 'forget', '--service', sandbox.url]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      service: sandbox.url,
      location: join(on.configDir, 'ledger'),
      dropped: 3,
    });
    const nothing = await on.run(['ledger', 'forget', '--service', sandbox.url]);
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).toContain('nothing to forget');
  });

  it('asks on a terminal: declined is exit 130 with nothing dropped; accepted drops them', async () => {
    const on = machine();
    writeNdjson(on.cwd, 'orders.ndjson', orders(2));
    expect((await on.run([...at(sandbox), 'orders', 'import', 'orders.ndjson'])).code).toBe(0);
    const declined = startSession(['ledger', 'forget', '--service', sandbox.url], on.env);
    await declined.waitFor(`Forget 2 keys of ${sandbox.url} in ${join(on.configDir, 'ledger')}?`);
    declined.type(KEY.enter);
    expect(await declined.done).toBe(130);
    expect(declined.io.stderrText()).toContain('Nothing was forgotten.');
    expect(await keysOf(on)).toHaveLength(2);

    const accepted = startSession(['ledger', 'forget', '--service', sandbox.url], on.env);
    await accepted.waitFor('No, keep them');
    accepted.type(KEY.down);
    accepted.type(KEY.enter);
    expect(await accepted.done).toBe(0);
    expect(accepted.screen()).toContain(`Forgot 2 keys of ${sandbox.url}`);
    expect(await keysOf(on)).toEqual([]);
  });

  it('--yes on a terminal: no question', async () => {
    const on = machine();
    await seedEveryStatus(sandbox, on);
    const result = await on.run(['--yes', 'ledger', 'forget', '--service', sandbox.url, '--force'], {
      tty: true,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('?');
    expect(await keysOf(on)).not.toContain(IN_DOUBT);
  });

  it('needs --service, an http(s) URL', async () => {
    const on = machine();
    const missing = await on.run(['ledger', 'forget']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--service');
    const wrong = await on.run(['ledger', 'forget', '--service', 'not a url']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--service must be a URL');
  });
});
