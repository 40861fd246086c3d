// `logout [--profile <name>]`: removes the token and the webhook key from a profile, keeping the
// rest and mode 0600; asks on a terminal (No: exit 130, nothing removed), takes --yes in scripts,
// and without a terminal refuses (exit 2) until --yes is given. Never prints either secret.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, configFolder, runBin, runCli } from '../../support/cli.js';
import { KEY, startSession } from '../../support/session.js';
import { screenLines } from '../../support/terminal.js';

const TOKEN = 'tok-Lg5Wq8Pz3Vn1';
const WEBHOOK_KEY = 'whk-Mr2Xc7Tb4Kd9';
const STAGING_TOKEN = 'tok-Sj6Fh1Yu8Ae2';

type Profiles = Record<string, Record<string, string>>;

/** A config folder with these profiles, mode 0600 as ordercli writes it. */
function configWith(profiles: Profiles): string {
  return configFolder(profiles);
}

function profilesIn(dir: string): Profiles {
  return (JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { profiles: Profiles }).profiles;
}

function modeOf(dir: string): number {
  return statSync(join(dir, 'config.json')).mode & 0o777;
}

function loggedIn(): string {
  return configWith({
    default: {
      'base-url': 'https://orders.example.com',
      token: TOKEN,
      'webhook-key': WEBHOOK_KEY,
      timeout: '60s',
    },
    staging: { 'base-url': 'https://staging.example.com', token: STAGING_TOKEN },
  });
}

function expectNoSecret(result: Pick<CliResult, 'stdout' | 'stderr'>): void {
  for (const secret of [TOKEN, WEBHOOK_KEY, STAGING_TOKEN]) {
    expect(result.stdout + result.stderr).not.toContain(secret.slice(4, 10));
  }
}

describe('logout', () => {
  it('--yes removes the token and the webhook key, keeps the rest of the profile and mode 0600 (built binary)', async () => {
    const dir = loggedIn();
    const result = await runBin(['logout', '--yes'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe(
      `Removed the token and the webhook key from profile "default" (${join(dir, 'config.json')}).\n`,
    );
    expect(profilesIn(dir)).toEqual({
      default: { 'base-url': 'https://orders.example.com', timeout: '60s' },
      staging: { 'base-url': 'https://staging.example.com', token: STAGING_TOKEN },
    });
    expect(modeOf(dir)).toBe(0o600);
    expectNoSecret(result);
  });

  it('--profile names the profile; --json says what was removed; a second logout has nothing to remove', async () => {
    const dir = loggedIn();
    const env = { ORDERCLI_CONFIG_DIR: dir };
    const result = await runCli(['logout', '--profile', 'staging', '--yes', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      profile: 'staging',
      path: join(dir, 'config.json'),
      removed: ['token'],
    });
    expect(result.stderr).toContain('Removed the token from profile "staging"');
    expect(profilesIn(dir).staging).toEqual({ 'base-url': 'https://staging.example.com' });
    expect(profilesIn(dir).default?.token).toBe(TOKEN);
    expect(modeOf(dir)).toBe(0o600);

    const again = await runCli(['--profile', 'staging', 'logout', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('Profile "staging" holds no token and no webhook key: nothing to remove.');
    expect(JSON.parse(again.stdout).removed).toEqual([]);
    expectNoSecret(result);
    expectNoSecret(again);

    const unknown = await runCli(['logout', '--profile', 'nope', '--yes'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('There is no profile "nope"');
  });

  it('without a terminal and without --yes: exit 2 saying to pass --yes, nothing removed (built binary)', async () => {
    const dir = loggedIn();
    const before = readFileSync(join(dir, 'config.json'), 'utf8');
    const result = await runBin(['logout'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'logout asks before it removes the token and the webhook key, and there is no terminal to ask on: pass --yes',
    );
    expect(result.stderr).toContain('nothing was removed');
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(before);
    // CI on a terminal turns prompts off: still --yes, never an implied one.
    const ci = await runCli(['logout'], {
      env: { ORDERCLI_CONFIG_DIR: dir, CI: 'true' },
      tty: true,
      columns: 200,
    });
    expect(ci.code).toBe(2);
    expect(ci.stderr).toContain('prompts are turned off here (CI is set): pass --yes');
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(before);
  });

  it('on a terminal it asks: Yes removes them', async () => {
    const dir = loggedIn();
    const session = startSession(['logout'], { ORDERCLI_CONFIG_DIR: dir });
    await session.waitFor('Remove the token and the webhook key from profile "default"?');
    expect(screenLines(session.io.stdoutText())).toContain('❯ No, keep them');
    session.type(KEY.down);
    session.type(KEY.enter);
    expect(await session.done).toBe(0);
    expect(profilesIn(dir).default).toEqual({ 'base-url': 'https://orders.example.com', timeout: '60s' });
    expect(modeOf(dir)).toBe(0o600);
    expectNoSecret({ stdout: session.io.stdoutText(), stderr: session.io.stderrText() });
  });

  it('on a terminal, No (the default) exits 130 with nothing removed', async () => {
    const dir = loggedIn();
    const before = readFileSync(join(dir, 'config.json'), 'utf8');
    const session = startSession(['logout'], { ORDERCLI_CONFIG_DIR: dir });
    await session.waitFor('Remove the token and the webhook key');
    session.type(KEY.enter);
    expect(await session.done).toBe(130);
    expect(session.io.stderrText()).toContain('Nothing was removed.');
    expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(before);
  });

  it('names a token or key still set in the environment, which it does not touch', async () => {
    const dir = loggedIn();
    const result = await runCli(['logout', '--yes'], {
      env: { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_TOKEN: 'tok-Env-Zq3Xw7' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'note: ORDERCLI_TOKEN is set in the environment: commands still use the token it holds; unset it to log out there too.',
    );
    expect(result.stderr).not.toContain('ORDERCLI_WEBHOOK_KEY');
    expect(result.stdout + result.stderr).not.toContain('Zq3Xw7');
  });
});
