// Where the config folder is, and that it is never relative: an empty or relative HOME (or a
// relative XDG_CONFIG_HOME or ORDERCLI_CONFIG_DIR) would give each working folder a config, and a
// default order ledger, of its own.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  configDir,
  configPath,
  knownConfigDir,
  knownConfigPath,
  readConfigFile,
} from '../../src/config/profiles.js';
import { UsageError } from '../../src/core/errors.js';
import { ExitCode } from '../../src/core/exit-codes.js';

/** The UsageError configDir throws for `env`. */
function refusal(env: NodeJS.ProcessEnv): UsageError {
  try {
    configDir(env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error(`configDir(${JSON.stringify(env)}) did not throw`);
}

describe('configDir', () => {
  it('is ORDERCLI_CONFIG_DIR, else XDG_CONFIG_HOME/ordercli, else HOME/.config/ordercli', () => {
    expect(configDir({ ORDERCLI_CONFIG_DIR: '/etc/oc', XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/etc/oc');
    expect(configDir({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe(join('/x', 'ordercli'));
    expect(configDir({ HOME: '/h' })).toBe(join('/h', '.config', 'ordercli'));
    expect(configPath({ HOME: '/h' })).toBe(join('/h', '.config', 'ordercli', 'config.json'));
  });

  it('an empty HOME is exit 2, naming it and saying what to set instead', () => {
    const error = refusal({ HOME: '' });
    expect(error.exitCode).toBe(ExitCode.Usage);
    expect(error.message).toBe(
      'HOME is "" (empty), so the config folder and the order ledger in it would depend on the working folder: set HOME to an absolute folder or ORDERCLI_CONFIG_DIR to an absolute folder, or give the ledger with --ledger <absolute dir>.',
    );
  });

  it('a relative HOME is exit 2, naming its value', () => {
    for (const home of ['rel', './home', '~', 'home/me']) {
      expect(refusal({ HOME: home }).message).toMatch(
        new RegExp(`^HOME is "${home.replace(/[.~]/g, '\\$&')}", a relative folder, so the config folder`),
      );
    }
  });

  it('a relative XDG_CONFIG_HOME or ORDERCLI_CONFIG_DIR is exit 2, naming it, even with a good HOME', () => {
    expect(refusal({ XDG_CONFIG_HOME: 'cfg', HOME: '/h' }).message).toBe(
      'XDG_CONFIG_HOME is "cfg", a relative folder, so the config folder and the order ledger in it would depend on the working folder: set XDG_CONFIG_HOME to an absolute folder (or unset it), or give the ledger with --ledger <absolute dir>.',
    );
    expect(refusal({ ORDERCLI_CONFIG_DIR: 'state/config', HOME: '/h' }).message).toMatch(
      /^ORDERCLI_CONFIG_DIR is "state\/config", a relative folder, .*: set ORDERCLI_CONFIG_DIR to an absolute folder \(or unset it\)/,
    );
  });

  it('an absolute ORDERCLI_CONFIG_DIR (or XDG_CONFIG_HOME) needs no HOME', () => {
    expect(configDir({ ORDERCLI_CONFIG_DIR: '/srv/oc', HOME: '' })).toBe('/srv/oc');
    expect(configDir({ ORDERCLI_CONFIG_DIR: '/srv/oc', HOME: 'rel' })).toBe('/srv/oc');
    expect(configDir({ XDG_CONFIG_HOME: '/x', HOME: '' })).toBe(join('/x', 'ordercli'));
  });

  it('knownConfigDir and knownConfigPath: undefined instead of the error', () => {
    expect(knownConfigDir({ HOME: '' })).toBeUndefined();
    expect(knownConfigPath({ HOME: 'rel' })).toBeUndefined();
    expect(knownConfigDir({ HOME: '/h' })).toBe(join('/h', '.config', 'ordercli'));
    expect(knownConfigPath({ HOME: '/h' })).toBe(join('/h', '.config', 'ordercli', 'config.json'));
  });
});

describe('readConfigFile', () => {
  it('reads no file from the working folder when the config folder would be relative: an empty config', async () => {
    await expect(readConfigFile({ HOME: '' })).resolves.toEqual({});
    await expect(readConfigFile({ HOME: 'rel' })).resolves.toEqual({});
  });
});
