/**
 * `orders create` with an empty or relative HOME: the default ledger would be under the working
 * folder (one per folder, so one order created once per folder), so it is exit 2 before anything
 * is sent; a ledger given with --ledger (relative to the working folder is fine) or an absolute
 * ORDERCLI_CONFIG_DIR is used as usual.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { order } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

function create(...args: string[]): string[] {
  return [
    '--base-url',
    sandbox.url,
    '--token',
    sandbox.tokens.partner,
    ...args,
    'orders',
    'create',
    '--file',
    'order.json',
  ];
}

/** A fresh working folder holding order.json. */
function folderWithOrder(): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'order.json'), JSON.stringify(order(1, 'HOME')));
  return dir;
}

function posts(): number {
  return sandbox.requests.filter((request) => request.method === 'POST').length;
}

const homeOnly = (HOME: string) => ({ HOME, ORDERCLI_CONFIG_DIR: undefined, XDG_CONFIG_HOME: undefined });

describe('orders create with an empty or relative HOME', () => {
  it('without --ledger: exit 2 from every folder, nothing sent, no ledger left in any folder', async () => {
    for (const HOME of ['', 'rel', '', 'rel']) {
      const cwd = folderWithOrder();
      const result = await runCli(create(), { env: homeOnly(HOME), cwd });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(
        /HOME is .*: set HOME to an absolute folder or ORDERCLI_CONFIG_DIR to an absolute folder, or give the ledger with --ledger <absolute dir>\./,
      );
      expect(readdirSync(cwd)).toEqual(['order.json']);
    }
    expect(posts()).toBe(0);
  });

  it('with --ledger <relative dir>: created once, the ledger in that folder of the working folder', async () => {
    const cwd = folderWithOrder();
    const first = await runCli(create('--ledger', 'state/ledger'), { env: homeOnly(''), cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(join(cwd, 'state', 'ledger'))).toBe(true);
    expect(existsSync(join(cwd, '.config'))).toBe(false);
    const again = await runCli(create('--ledger', 'state/ledger'), { env: homeOnly('rel'), cwd });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists .*nothing was sent/);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('with an absolute ORDERCLI_CONFIG_DIR: its ledger, whatever HOME and the working folder are', async () => {
    const env = { HOME: '', ORDERCLI_CONFIG_DIR: tempDir('ordercli-config-') };
    const first = await runCli(create(), { env, cwd: folderWithOrder() });
    expect(first.code, first.stderr).toBe(0);
    const elsewhere = await runCli(create(), { env: { ...env, HOME: 'rel' }, cwd: folderWithOrder() });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/already exists .*nothing was sent/);
    expect(sandbox.orders()).toHaveLength(1);
  });
});
