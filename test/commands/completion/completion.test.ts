// `completion bash|zsh|fish`: scripts generated from the program tree. The bash one is run in a
// real bash; zsh and fish are not installed here, so their scripts are checked for every command.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import type { CommandUnknownOpts as Command } from '../../../src/command-support/commander.js';
import { Context } from '../../../src/command-support/context.js';
import { CONTACT_REFERENCE_KEYS } from '../../../src/commands/refs/index.js';
import { columnKeys } from '../../../src/io/list-flags.js';
import { createTestIO } from '../../../src/io/memory.js';
import { TUNNEL_KINDS } from '../../../src/webhooks/tunnel.js';
import { runCli, tempDir } from '../../support/cli.js';
import { probe, requireTool } from '../../support/requirements.js';

const hasBash = requireTool('bash', {
  what: 'the bash completion run in a real bash (test/commands/completion/completion.test.ts)',
  missing: probe('bash', '--version'),
  how: 'apt-get install -y bash',
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What bash completes for the words typed so far (the last one is being completed), in `cwd`. */
function complete(script: string, words: string[], cwd?: string): string[] {
  const array = words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const program = `${script}\nCOMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _ordercli; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8', cwd });
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
      "complete -c ordercli -n '__ordercli_at \\'ordercli refs packagings list\\'' -l 'search' -x -d",
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

describe('completion of option values', () => {
  /** A folder holding one file and one folder, to see what is offered as a file name. */
  function folder(): string {
    const dir = tempDir('ordercli-completion-');
    writeFileSync(join(dir, 'report.csv'), '');
    mkdirSync(join(dir, 'queue'));
    return dir;
  }

  it.runIf(hasBash)('offers the formats, not file names, after orders import --format (bash)', async () => {
    const { stdout } = await runCli(['completion', 'bash']);
    const dir = folder();
    const words = ['ordercli', 'orders', 'import', 'orders.csv', '--format'];
    expect(complete(stdout, [...words, ''], dir)).toEqual(['csv', 'json', 'ndjson', 'xlsx']);
    expect(complete(stdout, [...words, 'nd'], dir)).toEqual(['ndjson']);
  });

  it.runIf(hasBash)(
    'offers files for a file, folders for a folder, nothing for a number or a text (bash)',
    async () => {
      const { stdout } = await runCli(['completion', 'bash']);
      const dir = folder();
      const importing = ['ordercli', 'orders', 'import', 'orders.csv'];
      expect(complete(stdout, [...importing, '--report', 'rep'], dir)).toEqual(['report.csv']);
      expect(complete(stdout, [...importing, '--concurrency', ''], dir)).toEqual([]);
      expect(complete(stdout, ['ordercli', 'refs', 'packagings', 'list', '--search', ''], dir)).toEqual([]);
      expect(complete(stdout, ['ordercli', '--base-url', ''], dir)).toEqual([]);
      expect(complete(stdout, ['ordercli', 'listen', '--queue-dir', ''], dir)).toEqual(['queue']);
      expect(complete(stdout, ['ordercli', 'config', 'get', ''], dir)).toEqual([
        'base-url',
        'token',
        'auth-header',
        'timeout',
        'allow-insecure-http',
        'webhook-key',
        'ledger',
      ]);
      expect(complete(stdout, ['ordercli', 'completion', ''], dir)).toEqual(['bash', 'zsh', 'fish']);
    },
  );

  it.runIf(hasBash)('offers the tunnel programs and the column keys of a list (bash)', async () => {
    const { stdout } = await runCli(['completion', 'bash']);
    const dir = folder();
    expect(complete(stdout, ['ordercli', 'listen', '--tunnel', ''], dir)).toEqual([...TUNNEL_KINDS]);
    expect(complete(stdout, ['ordercli', 'listen', '--tunnel', 'ng'], dir)).toEqual(['ngrok']);
    const contacts = ['ordercli', 'refs', 'contacts', 'list', '--columns', ''];
    expect(complete(stdout, contacts, dir)).toEqual(columnKeys(CONTACT_REFERENCE_KEYS));
    const packagings = ['ordercli', 'refs', 'packagings', 'list', '--columns', 'pro'];
    expect(complete(stdout, packagings, dir)).toEqual(['product', 'product-label']);
    expect(complete(stdout, ['ordercli', 'ledger', 'list', '--columns', 'sent'], dir)).toEqual(['sent-at']);
    expect(complete(stdout, ['ordercli', 'webhooks', 'available', '--columns', ''], dir)).toEqual([
      'event',
      'description',
    ]);
  });

  it('writes the same value completions into the zsh and fish scripts', async () => {
    const zsh = (await runCli(['completion', 'zsh'])).stdout;
    expect(zsh).toContain("'ordercli orders import --format') echo 'csv json ndjson xlsx' ;;");
    expect(zsh).toContain("'ordercli orders import --report') echo '@files' ;;");
    expect(zsh).toContain("'ordercli listen --queue-dir') echo '@dirs' ;;");
    expect(zsh).not.toContain("'ordercli orders import --concurrency')");
    expect(zsh).toContain(`compadd -- \${=values}`);
    const fish = (await runCli(['completion', 'fish'])).stdout;
    const at = (path: string) => `complete -c ordercli -n '__ordercli_at \\'${path}\\''`;
    expect(fish).toContain(`${at('ordercli orders import')} -l 'format' -x -a 'csv json ndjson xlsx' -d`);
    expect(fish).toContain(`${at('ordercli orders import')} -l 'report' -r -F -d`);
    expect(fish).toContain(`${at('ordercli orders import')} -l 'concurrency' -x -d`);
    expect(fish).toContain(
      `${at('ordercli listen')} -l 'queue-dir' -x -a '(__fish_complete_directories)' -d`,
    );
    expect(fish).toContain("complete -c ordercli -l 'base-url' -x -d");
  });

  it('keeps accepting the format aliases that completion does not offer', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'orders.txt'), '{"externalId":"x"}\n');
    const result = await runCli(['orders', 'import', 'orders.txt', '--format', 'JSONL', '--dry-run'], {
      cwd: dir,
    });
    expect(result.stderr).not.toContain('Allowed choices');
    expect(result.stderr).not.toContain('Unknown format');
  });
});
