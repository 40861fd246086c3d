// `config profiles`: the names of the config file's profiles, one a line (what the shell completion
// of --profile reads at each Tab), `--json` as [{name}]; never a value of theirs, never a prompt,
// and nothing on stderr when there are names.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFolder, runBin, runCli, tempDir } from '../../support/cli.js';

const TOKEN = 'tok-Hb5Nc8Xe2Yf4';
const WEBHOOK_KEY = 'whk-Ja7Mq1Sd9Tg3';
const PASSWORD = 'pw-Kc4Vb6Zn0';

/** A config folder with profiles default, staging and prod, holding secrets and other values. */
function config(): Record<string, string> {
  const profiles = {
    default: { 'base-url': 'https://orders.example.com', token: TOKEN },
    staging: { 'webhook-key': WEBHOOK_KEY, timeout: '60s' },
    prod: { ledger: `postgres://orders:${PASSWORD}@db.example/orders` },
  };
  return { ORDERCLI_CONFIG_DIR: configFolder(profiles) };
}

function expectNoValue(text: string): void {
  for (const value of [TOKEN, WEBHOOK_KEY, PASSWORD, 'orders.example.com', '60s']) {
    expect(text).not.toContain(value);
  }
}

describe('config profiles', () => {
  it('piped: one name a line, in the order of the file, nothing else', async () => {
    const result = await runCli(['config', 'profiles'], { env: config() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('default\nstaging\nprod\n');
    expect(result.stderr).toBe('');
    expectNoValue(result.stdout);
  });

  it('on a terminal: the same lines', async () => {
    const result = await runCli(['config', 'profiles'], { env: config(), tty: true });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('default\nstaging\nprod\n');
    expect(result.stderr).toBe('');
  });

  it('--json: [{name}], no value', async () => {
    const result = await runCli(['config', 'profiles', '--json'], { env: config() });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([{ name: 'default' }, { name: 'staging' }, { name: 'prod' }]);
    expectNoValue(result.stdout + result.stderr);
  });

  it('lists the names whatever profile or settings the run is given', async () => {
    const env = { ...config(), ORDERCLI_PROFILE: 'gone', ORDERCLI_TIMEOUT: 'soon' };
    const result = await runCli(['--profile', 'missing', 'config', 'profiles'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('default\nstaging\nprod\n');
  });

  it('no config file: nothing on stdout, a note on stderr, exit 0; --json []', async () => {
    const dir = tempDir();
    const plain = await runCli(['config', 'profiles'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe(
      `No profiles in ${join(dir, 'config.json')}: create one with ordercli login (--profile <name> for another than "default").\n`,
    );
    const json = await runCli(['config', 'profiles', '--json'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it('a config file that is not JSON is exit 2, naming it', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'config.json'), '{ "profiles": ');
    const result = await runCli(['config', 'profiles'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`The config file ${join(dir, 'config.json')} is not valid JSON`);
  });

  it('works through the built binary (npm run build first)', async () => {
    const result = await runBin(['config', 'profiles'], { env: config() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('default\nstaging\nprod\n');
    expect(result.stderr).toBe('');
  });
});
