// `config list`: the SOURCE column its help promises (the flag, the environment variable, the
// profile or the default each effective value comes from), durations with their unit, the list
// conventions (table on a terminal, TSV piped, --csv, --columns), and a --json that only adds fields.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';

const TOKEN = 'tok-Cf4Gk7Hm2Jn9';
const WEBHOOK_KEY = 'whk-Pv3Rs6Tw1Ux8';
const MASKED = '******** (set)';

/** A config folder whose default profile holds a bare-millisecond timeout and a webhook key. */
function config(): Record<string, string> {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      profiles: {
        default: { 'base-url': 'https://orders.example.com', timeout: '60000', 'webhook-key': WEBHOOK_KEY },
      },
    }),
    { mode: 0o600 },
  );
  return { ORDERCLI_CONFIG_DIR: dir };
}

function rowsOf(tsv: string): Record<string, string[]> {
  return Object.fromEntries(
    tsv
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t'))
      .map(([key, ...rest]) => [key ?? '', rest]),
  );
}

describe('config list', () => {
  it('piped: one row per key with its source, durations with their unit', async () => {
    const result = await runCli(['config', 'list'], { env: { ...config(), ORDERCLI_TOKEN: TOKEN } });
    expect(result.code, result.stderr).toBe(0);
    expect(rowsOf(result.stdout)).toEqual({
      'base-url': ['https://orders.example.com', 'https://orders.example.com', 'profile'],
      token: ['', MASKED, 'ORDERCLI_TOKEN'],
      'auth-header': ['', '', ''],
      timeout: ['1m', '1m', 'profile'],
      'allow-insecure-http': ['', 'false', 'default'],
      'webhook-key': [MASKED, MASKED, 'profile'],
      ledger: ['', '', 'default'],
    });
    expect(result.stdout + result.stderr).not.toContain(TOKEN.slice(4));
    expect(result.stdout + result.stderr).not.toContain(WEBHOOK_KEY.slice(4));
  });

  it('a flag wins and is named by its flag, a variable by its name; the default timeout is 30s', async () => {
    const env = config();
    const flagged = await runCli(
      ['config', 'list', '--timeout', '45s', '--allow-insecure-http', '--token', TOKEN],
      {
        env: { ...env, ORDERCLI_TIMEOUT: '2m' },
      },
    );
    expect(flagged.code, flagged.stderr).toBe(0);
    const rows = rowsOf(flagged.stdout);
    expect(rows.timeout).toEqual(['1m', '45s', '--timeout']);
    expect(rows['allow-insecure-http']).toEqual(['', 'true', '--allow-insecure-http']);
    expect(rows.token).toEqual(['', MASKED, '--token']);

    const fromEnv = await runCli(['config', 'list'], {
      env: {
        ...env,
        ORDERCLI_TIMEOUT: '2m',
        ORDERCLI_WEBHOOK_KEY: 'whk-Env-Yt5Qa',
        ORDERCLI_LEDGER: '/srv/ledger',
      },
    });
    const envRows = rowsOf(fromEnv.stdout);
    expect(envRows.timeout).toEqual(['1m', '2m', 'ORDERCLI_TIMEOUT']);
    expect(envRows['webhook-key']).toEqual([MASKED, MASKED, 'ORDERCLI_WEBHOOK_KEY']);
    expect(envRows.ledger).toEqual(['', '/srv/ledger', 'ORDERCLI_LEDGER']);

    const defaults = await runCli(['config', 'list']);
    expect(rowsOf(defaults.stdout).timeout).toEqual(['', '30s', 'default']);
  });

  it('on a terminal: a table with a SOURCE column; --csv and --columns as every list', async () => {
    const env = { ...config(), ORDERCLI_TOKEN: TOKEN };
    const table = await runCli(['config', 'list'], {
      env: { ...env, NO_COLOR: '1' },
      tty: true,
      columns: 120,
    });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/│ KEY +│ IN PROFILE +│ EFFECTIVE +│ SOURCE +│/);
    expect(table.stdout).toMatch(/│ timeout +│ 1m +│ 1m +│ profile +│/);
    expect(table.stdout).toMatch(/│ token +│ +│ \*{8} \(set\) +│ ORDERCLI_TOKEN +│/);

    const csv = await runCli(['config', 'list', '--csv'], { env });
    expect(csv.stdout).toMatch(/^KEY,IN PROFILE,EFFECTIVE,SOURCE\r?\n/);
    expect(csv.stdout).toContain('timeout,1m,1m,profile');
    const picked = await runCli(['config', 'list', '--csv', '--columns', 'key,source'], { env });
    expect(picked.stdout).toMatch(/^KEY,SOURCE\r?\n/);
    expect(picked.stdout).toMatch(/token,ORDERCLI_TOKEN\r?\n/);
    const unknown = await runCli(['config', 'list', '--columns', 'key,nope'], { env });
    expect(unknown.code).toBe(2);
  });

  it('--json keeps its fields as they were (the timeout in ms) and adds source and sourceName', async () => {
    const env = config();
    const result = await runCli(['--json', 'config', 'list', '--timeout', '45s'], {
      env: { ...env, ORDERCLI_TOKEN: TOKEN },
    });
    expect(result.code, result.stderr).toBe(0);
    const parsed = JSON.parse(result.stdout) as { profile: string; path: string; values: unknown[] };
    expect(parsed.profile).toBe('default');
    expect(parsed.path).toBe(join(env.ORDERCLI_CONFIG_DIR!, 'config.json'));
    expect(parsed.values).toEqual([
      {
        key: 'base-url',
        profile: 'https://orders.example.com',
        effective: 'https://orders.example.com',
        source: 'profile',
        sourceName: 'profile',
      },
      { key: 'token', profile: '', effective: MASKED, source: 'env', sourceName: 'ORDERCLI_TOKEN' },
      { key: 'auth-header', profile: '', effective: '', source: null, sourceName: null },
      { key: 'timeout', profile: '60000', effective: '45000', source: 'flag', sourceName: '--timeout' },
      {
        key: 'allow-insecure-http',
        profile: '',
        effective: 'false',
        source: 'default',
        sourceName: 'default',
      },
      { key: 'webhook-key', profile: MASKED, effective: MASKED, source: 'profile', sourceName: 'profile' },
      { key: 'ledger', profile: '', effective: '', source: 'default', sourceName: 'default' },
    ]);
    expect(result.stdout).not.toContain(TOKEN.slice(4));
    const both = await runCli(['--json', 'config', 'list', '--csv'], { env });
    expect(both.code).toBe(2);
  });
});
