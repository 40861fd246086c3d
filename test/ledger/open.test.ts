// Where a command's ledger is: the setting (a folder against the working folder, a URL), else the
// default ledger in the config folder, which is never relative.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { defaultLedgerRoot, ledgerPlaceOf, localLedgerRoot } from '../../src/ledger/open.js';

function environment(env: NodeJS.ProcessEnv, ledger?: string) {
  return { env, cwd: '/work/ci', settings: async () => ({ ledger }) };
}

describe('ledgerPlaceOf and localLedgerRoot', () => {
  it('without a setting: the config folder’s ledger', async () => {
    const place = await ledgerPlaceOf(environment({ HOME: '/h' }));
    expect(localLedgerRoot(place)).toBe(join('/h', '.config', 'ordercli', 'ledger'));
    expect(defaultLedgerRoot(place)).toBe(localLedgerRoot(place));
  });

  it('without a setting and with an empty or relative HOME: exit 2, never a ledger under the working folder', async () => {
    for (const HOME of ['', 'rel']) {
      const error = await ledgerPlaceOf(environment({ HOME })).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(
        /^HOME is .*or give the ledger with --ledger <absolute dir>\.$/,
      );
    }
  });

  it('with an empty or relative HOME, a ledger setting is used: a folder against the working folder, a URL', async () => {
    for (const HOME of ['', 'rel']) {
      const folder = await ledgerPlaceOf(environment({ HOME }, 'state/ledger'));
      expect(localLedgerRoot(folder)).toBe('/work/ci/state/ledger');
      // No config folder, so no default ledger to compare or move from.
      expect(defaultLedgerRoot(folder)).toBeUndefined();
      const absolute = await ledgerPlaceOf(environment({ HOME }, '/var/lib/ordercli'));
      expect(localLedgerRoot(absolute)).toBe('/var/lib/ordercli');
      const url = await ledgerPlaceOf(environment({ HOME }, 'postgres://ci@db/ledger'));
      expect(localLedgerRoot(url)).toBeUndefined();
    }
  });

  it('an absolute ORDERCLI_CONFIG_DIR needs no HOME', async () => {
    const place = await ledgerPlaceOf(environment({ HOME: '', ORDERCLI_CONFIG_DIR: '/srv/oc' }));
    expect(localLedgerRoot(place)).toBe(join('/srv/oc', 'ledger'));
  });
});
