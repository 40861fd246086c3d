// `completion bash|zsh|fish`: scripts generated from the program tree. The bash one is run in a
// real bash; the zsh and fish ones are checked for every command, and run where those shells are
// installed for the profile names, which `config profiles` lists at each Tab.
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import type { CommandUnknownOpts as Command } from '../../../src/command-support/commander.js';
import { Context } from '../../../src/command-support/context.js';
import { CONTACT_REFERENCE_KEYS } from '../../../src/commands/refs/index.js';
import { columnKeys } from '../../../src/io/list-flags.js';
import { createTestIO } from '../../../src/io/memory.js';
import { TUNNEL_KINDS } from '../../../src/webhooks/tunnel.js';
import { BIN, configFolder, runCli, tempDir, testEnv } from '../../support/cli.js';
import { probe, requireTool } from '../../support/requirements.js';

const hasBash = requireTool('bash', {
  what: 'the bash completion run in a real bash (test/commands/completion/completion.test.ts)',
  missing: probe('bash', '--version'),
  how: 'apt-get install -y bash',
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const hasZsh = requireTool('zsh', {
  what: 'the zsh completion of profile names run in a real zsh (test/commands/completion/completion.test.ts)',
  missing: probe('zsh', '--version'),
  how: 'apt-get install -y zsh (.ci/install-shells)',
  ciRequired: true,
});

const hasFish = requireTool('fish', {
  what: 'the fish completion of profile names run in a real fish (test/commands/completion/completion.test.ts)',
  missing: probe('fish', '--version'),
  how: 'apt-get install -y fish (.ci/install-shells)',
  ciRequired: true,
});

/** POSIX single quotes. */
function sq(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What bash completes for the words typed so far (the last one is being completed), in `cwd`,
 * with `env` (else this process's).
 */
function complete(script: string, words: string[], cwd?: string, env?: NodeJS.ProcessEnv): string[] {
  const array = words.map(sq).join(' ');
  const program = `${script}\nCOMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _ordercli; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8', cwd, env });
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

describe('completion of profile names (listed by config profiles at each Tab)', () => {
  const TOKEN = 'tok-Qz8Wd3Lp6Rv1';

  /** A config folder with profiles default, staging and prod (one holding a token). */
  function configDir(): string {
    const profiles = {
      default: { token: TOKEN },
      staging: { 'base-url': 'https://staging.example' },
      prod: {},
    };
    return configFolder(profiles, 'ordercli-config-');
  }

  /** The environment of the shell: that config folder, and the built binary as `ordercli` on the PATH. */
  function shellEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const path = tempDir('ordercli-path-');
    symlinkSync(BIN, join(path, 'ordercli'));
    return testEnv({ ORDERCLI_CONFIG_DIR: dir, PATH: `${path}${delimiter}${process.env.PATH}`, ...extra });
  }

  it.runIf(hasBash)('offers the names after --profile, at the root and after a command (bash)', async () => {
    const { stdout: script } = await runCli(['completion', 'bash']);
    const env = shellEnv(configDir());
    expect(complete(script, ['ordercli', '--profile', ''], undefined, env)).toEqual([
      'default',
      'staging',
      'prod',
    ]);
    const importing = ['ordercli', 'orders', 'import', 'orders.csv', '--profile', 'st'];
    expect(complete(script, importing, undefined, env)).toEqual(['staging']);
    expect(
      complete(script, ['ordercli', 'refs', 'packagings', 'list', '--profile', 'p'], undefined, env),
    ).toEqual(['prod']);
  });

  it.runIf(hasBash)('reads the config file at each Tab, not when the script was made (bash)', async () => {
    const dir = configDir();
    const { stdout: script } = await runCli(['completion', 'bash'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(script).not.toContain('staging');
    const env = shellEnv(dir);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { qa: {}, staging: {} } }));
    expect(complete(script, ['ordercli', '--profile', ''], undefined, env)).toEqual(['qa', 'staging']);
  });

  it.runIf(hasBash)('runs the ordercli typed, when it is not on the PATH (bash)', async () => {
    const { stdout: script } = await runCli(['completion', 'bash']);
    const env = testEnv({ ORDERCLI_CONFIG_DIR: configDir() });
    expect(complete(script, [BIN, '--profile', 'de'], undefined, env)).toEqual(['default']);
  });

  it.runIf(hasBash)(
    'offers nothing, and says nothing, when the config file cannot be read (bash)',
    async () => {
      const { stdout: script } = await runCli(['completion', 'bash']);
      const dir = tempDir('ordercli-config-');
      writeFileSync(join(dir, 'config.json'), '{ not json');
      // complete() also checks that stderr stays empty.
      expect(complete(script, ['ordercli', '--profile', ''], dir, shellEnv(dir))).toEqual([]);
      // A profile of the environment that does not exist does not stop the listing.
      const env = shellEnv(configDir(), { ORDERCLI_PROFILE: 'gone', ORDERCLI_TIMEOUT: 'soon' });
      expect(complete(script, ['ordercli', '--profile', 'pr'], dir, env)).toEqual(['prod']);
    },
  );

  it.runIf(hasZsh)('offers the names after --profile (zsh)', async () => {
    const { stdout: script } = await runCli(['completion', 'zsh']);
    const file = join(tempDir('ordercli-completion-'), '_ordercli');
    writeFileSync(file, script);
    // compadd and compdef exist only inside compinit's widgets: stand-ins print what compadd would
    // offer (the words that start with the one being completed, as compadd keeps).
    const stubs = [
      'compdef() { :; }',
      `compadd() { [[ $1 == -- ]] && shift; local w; for w in "$@"; do [[ $w == "\${words[CURRENT]}"* ]] && print -r -- $w; done; }`,
      "_describe() { print -r -- '(described)'; }",
      "_files() { print -r -- '(files)'; }",
      "_message() { print -r -- '(message)'; }",
    ].join('\n');
    const zsh = (words: string[]) => {
      const program = `${stubs}\nsource ${sq(file)}\nwords=(${words.map(sq).join(' ')}); CURRENT=${words.length}; _ordercli`;
      const result = spawnSync('zsh', ['-f', '-c', program], {
        encoding: 'utf8',
        env: shellEnv(configDir()),
      });
      expect(result.stderr).toBe('');
      return result.stdout.split('\n').filter((line) => line !== '');
    };
    expect(zsh(['ordercli', '--profile', ''])).toEqual(['default', 'staging', 'prod']);
    expect(zsh(['ordercli', 'refs', 'packagings', 'list', '--profile', 'st'])).toEqual(['staging']);
  });

  it.runIf(hasFish)('offers the names after --profile (fish)', async () => {
    const { stdout: script } = await runCli(['completion', 'fish']);
    const home = tempDir('ordercli-fish-');
    const file = join(home, 'ordercli.fish');
    writeFileSync(file, script);
    const env = shellEnv(configDir(), { XDG_CONFIG_HOME: home, XDG_DATA_HOME: home });
    const fish = (line: string) => {
      const program = 'source $argv[1]; complete -C $argv[2]';
      const result = spawnSync('fish', ['--no-config', '-c', program, file, line], { encoding: 'utf8', env });
      expect(result.stderr).toBe('');
      // Each line is the word, a tab, and the option's description.
      return result.stdout
        .split('\n')
        .filter((entry) => entry !== '')
        .map((entry) => entry.split('\t')[0]);
    };
    expect(fish('ordercli --profile ')).toEqual(['default', 'prod', 'staging']);
    expect(fish('ordercli refs packagings list --profile st')).toEqual(['staging']);
  });

  it('writes the listing command into each script, not the names', async () => {
    const env = { ORDERCLI_CONFIG_DIR: configDir() };
    const bash = (await runCli(['completion', 'bash'], { env })).stdout;
    expect(bash).toContain("'ordercli --profile') echo '@ordercli config profiles' ;;");
    expect(bash).toContain("'ordercli orders import --profile') echo '@ordercli config profiles' ;;");
    const zsh = (await runCli(['completion', 'zsh'], { env })).stdout;
    expect(zsh).toContain("'ordercli --profile') echo '@ordercli config profiles' ;;");
    expect(zsh).toContain(`'@ordercli '*) compadd -- \${(f)"$(_ordercli_listed`);
    expect(zsh).toContain('"$cmd" "$@" </dev/null 2>/dev/null');
    const fish = (await runCli(['completion', 'fish'], { env })).stdout;
    expect(fish).toContain(
      "complete -c ordercli -l 'profile' -x -a '(__ordercli_listed config profiles)' -d",
    );
    expect(fish).toContain('$cmd $argv </dev/null 2>/dev/null');
    for (const script of [bash, zsh, fish]) {
      expect(script).not.toContain('staging');
      expect(script).not.toContain(TOKEN);
    }
  });
});
