// The recent addresses of `orders new`, kept in the profile: most recent first, no duplicates, five at most.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type Address,
  RECENT_ADDRESSES,
  readRecentAddresses,
  rememberAddresses,
  withRecent,
} from '../../src/config/recent-addresses.js';
import { tempDir } from '../support/cli.js';

function address(n: number): Address {
  return {
    recipient: `Client ${n}`,
    street: `${n} rue de la Paix`,
    zipCode: '01000',
    city: 'Bourg',
    country: 'FR',
  };
}

describe('recent addresses', () => {
  it('puts the addresses just used first, drops the same address further down, and keeps five', () => {
    const recent = [1, 2, 3, 4, 5].map(address);
    expect(withRecent(recent, [address(9), address(3)])).toEqual([9, 3, 1, 2, 4].map(address));
    expect(withRecent([], [address(1), address(1)])).toEqual([address(1)]);
    expect(RECENT_ADDRESSES).toBe(5);
  });

  it('are kept in the profile beside its settings, which stay as they were', async () => {
    const dir = tempDir('ordercli-config-');
    const env = { ORDERCLI_CONFIG_DIR: dir };
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ profiles: { staging: { 'base-url': 'http://127.0.0.1:4780' } } }),
    );
    await rememberAddresses(env, 'staging', [address(1), address(2)]);
    await rememberAddresses(env, 'staging', [address(3), address(1)]);
    expect(await readRecentAddresses(env, 'staging')).toEqual([3, 1, 2].map(address));
    expect(await readRecentAddresses(env, 'default')).toEqual([]);
    const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(file.profiles.staging['base-url']).toBe('http://127.0.0.1:4780');
  });

  it('skips what is not an address in a hand-edited file', async () => {
    const dir = tempDir('ordercli-config-');
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ profiles: { default: { 'recent-addresses': [address(1), { city: 'Lyon' }, 'x'] } } }),
    );
    expect(await readRecentAddresses({ ORDERCLI_CONFIG_DIR: dir }, 'default')).toEqual([address(1)]);
  });
});
