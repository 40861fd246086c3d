import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({}, { resetEach: false });

/** A config folder with a profile written through `config set`, as a user would. */
async function profileDir(values: Record<string, string>, profile = 'default'): Promise<string> {
  const dir = tempDir('ordercli-config-');
  for (const [key, value] of Object.entries(values)) {
    const result = await runCli(['--profile', profile, 'config', 'set', key, value], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(result.code, result.stderr).toBe(0);
  }
  return dir;
}

const DEAD_URL = 'http://127.0.0.1:9'; // discard port: nothing listens there

describe('settings precedence: flag > environment > profile > default', () => {
  it('uses the profile when nothing else is given', async () => {
    const dir = await profileDir({ 'base-url': sandbox.url, token: sandbox.tokens.partner });
    const result = await runCli(['get', 'packaging_references', '401'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).id).toBe(401);
  });

  it('prefers the environment to the profile', async () => {
    const dir = await profileDir({ 'base-url': DEAD_URL, token: 'wrong-token-in-profile' });
    const result = await runCli(['get', 'packaging_references', '401'], {
      env: {
        ORDERCLI_CONFIG_DIR: dir,
        ORDERCLI_BASE_URL: sandbox.url,
        ORDERCLI_TOKEN: sandbox.tokens.partner,
      },
    });
    expect(result.code, result.stderr).toBe(0);
  });

  it('prefers the flag to the environment', async () => {
    const result = await runCli(
      ['--base-url', sandbox.url, '--token', 'wrong-token-on-flag', 'get', 'packaging_references', '401'],
      { env: { ORDERCLI_BASE_URL: DEAD_URL, ORDERCLI_TOKEN: sandbox.tokens.partner } },
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('401');
  });

  it('selects a named profile with --profile and with ORDERCLI_PROFILE', async () => {
    const dir = await profileDir({ 'base-url': sandbox.url, token: sandbox.tokens.full }, 'staging');
    const byFlag = await runCli(['--profile', 'staging', 'get', 'contacts', '101'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(byFlag.code, byFlag.stderr).toBe(0);
    const byEnv = await runCli(['get', 'contacts', '101'], {
      env: { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_PROFILE: 'staging' },
    });
    expect(byEnv.code, byEnv.stderr).toBe(0);
    const missing = await runCli(['--profile', 'nope', 'get', 'contacts', '101'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no profile "nope"');
  });

  it('uses the auth header from the environment instead of Bearer', async () => {
    const result = await runCli(['get', 'packaging_references', '401'], {
      env: {
        ORDERCLI_BASE_URL: sandbox.url,
        ORDERCLI_TOKEN: sandbox.tokens.partner,
        ORDERCLI_AUTH_HEADER: 'X-Api-Key',
      },
    });
    expect(result.code, result.stderr).toBe(0);
  });

  it('applies the timeout of the profile, overridden by the flag', async () => {
    const dir = await profileDir({ 'base-url': sandbox.url, token: sandbox.tokens.partner, timeout: '50' });
    sandbox.setFaults({ latencyMs: 400 });
    try {
      const slow = await runCli(['--retries', '0', 'get', 'packaging_references', '401'], {
        env: { ORDERCLI_CONFIG_DIR: dir },
      });
      expect(slow.code).toBe(1);
      expect(slow.stderr).toContain('within 50 ms');
      const patient = await runCli(['--timeout', '5000', 'get', 'packaging_references', '401'], {
        env: { ORDERCLI_CONFIG_DIR: dir },
      });
      expect(patient.code, patient.stderr).toBe(0);
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
  });

  it('refuses a timeout that is not a duration, naming where it came from', async () => {
    const result = await runCli(['get', 'orders', '1'], {
      env: { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TIMEOUT: 'soon' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'ORDERCLI_TIMEOUT must be a duration such as 500ms, 30s, 2m or 1h (a bare number is milliseconds), not "soon".',
    );
  });
});

describe('config commands', () => {
  it('creates the config file with mode 0600 and never shows the token', async () => {
    const dir = tempDir('ordercli-config-');
    const secret = 'tok_precedence_secret_123456';
    const set = await runCli(['config', 'set', 'token', secret], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(set.code, set.stderr).toBe(0);
    expect(statSync(join(dir, 'config.json')).mode & 0o777).toBe(0o600);
    const list = await runCli(['config', 'list'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    const get = await runCli(['config', 'get', 'token'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    const json = await runCli(['config', 'list', '--json'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    for (const result of [set, list, get, json]) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
    expect(get.stdout).toContain('(set)');
    const path = await runCli(['config', 'path'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(path.stdout.trim()).toBe(join(dir, 'config.json'));
  });

  it('rejects unknown keys and bad values with exit 2', async () => {
    const unknown = await runCli(['config', 'set', 'colour', 'blue']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown config key "colour"');
    const badUrl = await runCli(['config', 'set', 'base-url', 'ftp://x']);
    expect(badUrl.code).toBe(2);
  });
});
