// conf's atomic writes (atomically, through when-exit) hook SIGINT, SIGTERM, SIGHUP and SIGQUIT and
// send the signal again once caught: with those hooks, a Ctrl-C after a config write counted as a
// second Ctrl-C and exited at once, skipping listen's and the imports' cleanup. ProfileStore
// takes them off; the CLI handles those signals itself.
import { describe, expect, it } from 'vitest';
import { ProfileStore } from '../../src/config/profiles.js';
import { tempDir } from '../support/cli.js';

const HANDLED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;

describe('ProfileStore and signals', () => {
  it('adds no listener to the signals the CLI handles, opening and writing the config', async () => {
    const before = HANDLED.map((signal) => process.listeners(signal).length);
    const store = await ProfileStore.open({ ORDERCLI_CONFIG_DIR: tempDir() });
    await store.update('default', { 'base-url': 'https://api.example.com' });
    expect(HANDLED.map((signal) => process.listeners(signal).length)).toEqual(before);
  });
});
