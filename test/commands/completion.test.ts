// `completion bash|zsh|fish`: scripts generated from the program tree. The bash one is run in a
// real bash; zsh and fish are not installed here, so their scripts are checked for every command.
import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { Context } from '../../src/cli/context.js';
import { buildProgram } from '../../src/cli/program.js';
import { createTestIO } from '../../src/io/memory.js';
import { runCli } from '../support/cli.js';

const hasBash = !spawnSync('bash', ['--version']).error;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What bash completes for the words typed so far (the last one is being completed). */
function complete(script: string, words: string[]): string[] {
  const array = words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const program = `${script}\nCOMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _ordercli; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((line) => line !== '');
}

/** Every command path of the program, as commander knows it. */
function commandPaths(): string[] {
  const program = buildProgram(
    new Context({ io: createTestIO(), env: {}, signal: new AbortController().signal }),
  );
  const paths: string[] = [];
  const walk = (command: Command, path: string) => {
    for (const sub of command.commands) {
      paths.push(`${path} ${sub.name()}`);
      walk(sub, `${path} ${sub.name()}`);
    }
  };
  walk(program, 'ordercli');
  return paths;
}

describe('completion', () => {
  it.runIf(hasBash)('completes commands, subcommands, options and argument choices in bash', async () => {
    const { code, stdout } = await runCli(['completion', 'bash']);
    expect(code).toBe(0);
    expect(complete(stdout, ['ordercli', 're'])).toEqual(['refs']);
    expect(complete(stdout, ['ordercli', 'refs', ''])).toEqual(['contacts', 'packagings', 'browse']);
    expect(complete(stdout, ['ordercli', 'refs', 'packagings', 'list', '--s'])).toEqual(['--search']);
    // A global option with a value is skipped over, wherever it stands.
    expect(complete(stdout, ['ordercli', '--profile', 'staging', 'refs', 'pa'])).toEqual(['packagings']);
    expect(complete(stdout, ['ordercli', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
    expect(complete(stdout, ['ordercli', 'login', '--with'])).toEqual(['--with-token']);
    expect(complete(stdout, ['ordercli', 'contacts', 'list', '--'])).toEqual(
      expect.arrayContaining(['--csv', '--columns', '--json', '--base-url', '--help']),
    );
  });

  it('lists every command of the program in each script (generated, not maintained by hand)', async () => {
    const paths = commandPaths();
    expect(paths).toEqual(
      expect.arrayContaining(['ordercli refs packagings list', 'ordercli login', 'ordercli completion']),
    );
    for (const shell of ['bash', 'zsh', 'fish']) {
      const { code, stdout } = await runCli(['completion', shell]);
      expect(code).toBe(0);
      for (const path of paths) {
        const parent = path.split(' ').slice(0, -1).join(' ');
        const name = path.split(' ').at(-1) ?? '';
        // The parent's entry, then the name among its subcommands (same line, or the next in fish).
        const entry = new RegExp(
          `subcommands:${escapeRegExp(parent)}'\\)?[^\\n]*\\n?[^\\n]*[' ]${escapeRegExp(name)}[' :]`,
        );
        expect(stdout, `${shell}: ${path}`).toMatch(entry);
      }
    }
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    expect(zsh.startsWith('#compdef ordercli\n')).toBe(true);
    expect(zsh).toContain("'--search:only references whose label");
    const fish = (await runCli(['completion', 'fish'])).stdout;
    expect(fish).toContain(
      "complete -c ordercli -n '__ordercli_at \\'ordercli refs packagings list\\'' -l 'search' -r -F",
    );
  });

  it.runIf(hasBash)('writes a bash script that bash accepts as it is', async () => {
    const { stdout } = await runCli(['completion', 'bash']);
    const result = spawnSync('bash', ['-n'], { input: stdout, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
  });

  it('refuses an unknown shell (exit 2)', async () => {
    const result = await runCli(['completion', 'powershell']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Allowed choices are bash, zsh, fish');
  });
});
