/**
 * `config set token|webhook-key`: the secret need not be on the command line (shell history,
 * process list): `-` reads it from stdin, and on a terminal a left-out value is asked for without
 * echo. A value on the command line still works, with a warning. The file stays mode 0600.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { KEY, startSession } from '../../support/session.js';

const TOKEN = 'tok_from_stdin_0123456789';
const WEBHOOK_KEY = 'whk_from_stdin_abcdef0123';

function configFile(dir: string): { text: string; mode: number } {
  const path = join(dir, 'config.json');
  return { text: readFileSync(path, 'utf8'), mode: statSync(path).mode & 0o777 };
}

describe('config set <secret>', () => {
  it('token -: reads the token from stdin, says nothing of it, keeps the file 0600', async () => {
    const dir = tempDir();
    const result = await runCli(['config', 'set', 'token', '-'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: `${TOKEN}\n`,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^Set token = \*{8} \(set\) in profile "default"/);
    expect(result.stderr).not.toContain('warning');
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    const file = configFile(dir);
    expect(JSON.parse(file.text).profiles.default.token).toBe(TOKEN);
    expect(file.mode).toBe(0o600);
  });

  it('webhook-key -: the same from stdin; empty stdin or several lines are refused (exit 2)', async () => {
    const dir = tempDir();
    const ok = await runCli(['config', 'set', 'webhook-key', '-'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: WEBHOOK_KEY,
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(configFile(dir).text).profiles.default['webhook-key']).toBe(WEBHOOK_KEY);
    const empty = await runCli(['config', 'set', 'webhook-key', '-'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: '',
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('Nothing was read from stdin for webhook-key');
    const lines = await runCli(['config', 'set', 'token', '-'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: 'a\nb\n',
    });
    expect(lines.code).toBe(2);
    // Nothing was changed by the refused runs.
    expect(JSON.parse(configFile(dir).text).profiles.default['webhook-key']).toBe(WEBHOOK_KEY);
  });

  it('a token on the command line is still accepted, with a warning on stderr saying why', async () => {
    const dir = tempDir();
    const result = await runCli(['config', 'set', 'token', TOKEN], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'warning: a token given on the command line stays in your shell history and shows in the process list; next time use ordercli config set token - (reads stdin)',
    );
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
    expect(configFile(dir).mode).toBe(0o600);
    // Not for values that are not secrets.
    const url = await runCli(['config', 'set', 'base-url', 'https://orders.example.com'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(url.stderr).not.toContain('warning');
  });

  it('no value and no terminal: exit 2, saying how to pipe it', async () => {
    const result = await runCli(['config', 'set', 'token'], { env: { ORDERCLI_CONFIG_DIR: tempDir() } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('pipe it in with config set token -');
  });

  it('no value on a terminal: a masked prompt; the token is never echoed', async () => {
    const dir = tempDir();
    const session = startSession(['config', 'set', 'token'], { ORDERCLI_CONFIG_DIR: dir });
    await session.waitFor('API token (not shown)');
    session.type(TOKEN);
    session.type(KEY.enter);
    expect(await session.done).toBe(0);
    expect(session.io.stdoutText() + session.io.stderrText()).not.toContain(TOKEN);
    expect(JSON.parse(configFile(dir).text).profiles.default.token).toBe(TOKEN);
    expect(configFile(dir).mode).toBe(0o600);
  });

  it('the help says why', async () => {
    const help = await runCli(['config', 'set', '--help']);
    expect(help.stdout).toContain('stays in your shell history');
    expect(help.stdout).toContain('config set token -');
  });
});
