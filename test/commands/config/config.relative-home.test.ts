/**
 * An empty or relative HOME through the CLI: `config path` (and whatever needs the config folder)
 * is exit 2 rather than a config, and an order ledger, under the working folder; an absolute
 * ORDERCLI_CONFIG_DIR works without HOME, and commands that need no config still run.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';

/** No config folder of the tests' own: only HOME (as given) says where it is. */
function homeOnly(HOME: string): Record<string, string | undefined> {
  return { HOME, ORDERCLI_CONFIG_DIR: undefined, XDG_CONFIG_HOME: undefined };
}

describe('config path with an empty or relative HOME', () => {
  it("HOME='': exit 2, naming HOME and what to set instead; nothing on stdout", async () => {
    const cwd = tempDir();
    const result = await runCli(['config', 'path'], { env: homeOnly(''), cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'HOME is "" (empty), so the config folder and the order ledger in it would depend on the working folder: set HOME to an absolute folder or ORDERCLI_CONFIG_DIR to an absolute folder, or give the ledger with --ledger <absolute dir>.',
    );
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("HOME='rel': exit 2, naming its value", async () => {
    const result = await runCli(['config', 'path'], { env: homeOnly('rel'), cwd: tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HOME is "rel", a relative folder, so the config folder');
  });

  it('a relative ORDERCLI_CONFIG_DIR: exit 2, naming it', async () => {
    const result = await runCli(['config', 'path'], {
      env: { HOME: tempDir(), ORDERCLI_CONFIG_DIR: 'state/config' },
      cwd: tempDir(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ORDERCLI_CONFIG_DIR is "state/config", a relative folder');
  });

  it('an absolute ORDERCLI_CONFIG_DIR works whatever HOME is', async () => {
    const dir = tempDir();
    for (const HOME of ['', 'rel']) {
      const result = await runCli(['config', 'path'], { env: { HOME, ORDERCLI_CONFIG_DIR: dir } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${join(dir, 'config.json')}\n`);
    }
  });

  it("config set with HOME='': exit 2, and no config file is written under the working folder", async () => {
    const cwd = tempDir();
    const result = await runCli(['config', 'set', 'base-url', 'https://orders.example.com'], {
      env: homeOnly(''),
      cwd,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('HOME is "" (empty)');
    expect(existsSync(join(cwd, '.config'))).toBe(false);
  });

  it("commands that need no config run with HOME='': --help, --version, schema order", async () => {
    for (const args of [['--help'], ['--version'], ['schema', 'order']]) {
      const result = await runCli(args, { env: homeOnly(''), cwd: tempDir() });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.stdout).not.toBe('');
    }
  });
});
