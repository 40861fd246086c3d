// Help that guides: every group and verb shows runnable examples, the global options are listed
// once (in ordercli --help), and an unknown verb names the group's verbs and the closest one.
import { describe, expect, it } from 'vitest';
import { buildProgram, expandHelpCommand } from '../../src/cli/program.js';
import type { CommandUnknownOpts as Command } from '../../src/command-support/commander.js';
import { Context } from '../../src/command-support/context.js';
import { createTestIO } from '../../src/io/memory.js';
import { runBin, runCli } from '../support/cli.js';

interface CommandInfo {
  path: string[];
  /** Long and short names of the command's own options. */
  options: string[];
}

function program(): Command {
  return buildProgram(new Context({ io: createTestIO(), env: {}, signal: new AbortController().signal }));
}

/** Every command of the program (groups and verbs), with its own options. */
function allCommands(): { commands: CommandInfo[]; globals: string[] } {
  const root = program();
  const names = (command: Command) =>
    command.options.flatMap((o) => [o.long, o.short]).filter((n): n is string => typeof n === 'string');
  const commands: CommandInfo[] = [];
  const walk = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      const subPath = [...path, sub.name()];
      commands.push({ path: subPath, options: names(sub) });
      walk(sub, subPath);
    }
  };
  walk(root, []);
  return { commands, globals: names(root) };
}

const GLOBAL_WITH_VALUE = /\s--(base-url|token|auth-header|profile|timeout|retries)\s+\S+/g;
const GLOBAL_FLAG = /\s(--json|--no-color|--verbose|--yes|-y|--allow-insecure-http)(?=\s|$)/g;

/** The example lines of a help text (`  $ ...`). */
function examplesOf(help: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf('Examples:');
  if (start === -1) return [];
  const examples: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = /^ {2}\$ (.*)$/.exec(line);
    if (!match) break;
    examples.push(match[1] ?? '');
  }
  return examples;
}

describe('help pages', () => {
  const { commands, globals } = allCommands();

  it('finds the commands to check', () => {
    expect(commands.map((c) => c.path.join(' '))).toEqual(
      expect.arrayContaining(['orders', 'refs contacts', 'refs packagings list', 'config path', 'webhooks']),
    );
    expect(commands.length).toBeGreaterThan(30);
  });

  it('shows a number as a default unquoted: (default: 8), not (default: "8")', async () => {
    const quoted: string[] = [];
    for (const { path } of commands) {
      const { stdout } = await runCli([...path, '--help'], { columns: 200 });
      for (const match of stdout.matchAll(/^ *(-\S+).*\(default: "\d+"\)/gm))
        quoted.push(`${path.join(' ')} ${match[1]}`);
    }
    expect(quoted).toEqual([]);
    const { stdout } = await runCli(['orders', 'import', '--help'], { columns: 200 });
    expect(stdout).toMatch(/--concurrency <n> +requests in flight at once \(default: 8\)/);
  });

  it('gives every group and verb at least one example that runs that command with its own options', async () => {
    const optionsOf = new Map(commands.map((c) => [c.path.join(' '), c.options]));
    const missing: string[] = [];
    for (const { path } of commands) {
      const { code, stdout } = await runCli([...path, '--help']);
      expect(code, path.join(' ')).toBe(0);
      let runnable = 0;
      for (const example of examplesOf(stdout)) {
        const bare = ` ${example}`.replace(GLOBAL_WITH_VALUE, '').replace(GLOBAL_FLAG, '');
        const at = bare.indexOf(`ordercli ${path.join(' ')}`);
        if (at === -1) continue;
        runnable++;
        // The command the example really runs (a group's example runs one of its verbs), and
        // every option it uses is one of that command's or a global one: no stale flags.
        const words = (bare.slice(at).split(/[|>;)]/)[0] ?? '').trim().split(/\s+/).slice(1);
        const run: string[] = [];
        for (const word of words) {
          if (optionsOf.has([...run, word].join(' '))) run.push(word);
          else break;
        }
        for (const flag of words.filter((word) => /^--?[a-z]/.test(word))) {
          expect([...(optionsOf.get(run.join(' ')) ?? []), ...globals, '--help'], example).toContain(flag);
        }
      }
      if (runnable === 0) missing.push(path.join(' '));
    }
    expect(missing).toEqual([]);
  });

  it('lists the global options once, in ordercli --help, and points there from every other page', async () => {
    const root = await runCli(['--help']);
    expect(root.stdout).toContain('--base-url <url>');
    expect(root.stdout).toContain('--allow-insecure-http');
    for (const { path } of commands) {
      const { stdout } = await runCli([...path, '--help']);
      expect(stdout, path.join(' ')).not.toContain('Global Options:');
      expect(stdout, path.join(' ')).not.toContain('--allow-insecure-http');
      expect(stdout, path.join(' ')).toContain(
        'Global options (--json, --profile, --verbose, ...): see ordercli --help.',
      );
    }
  });

  it('keeps the help of a verb short in the built binary', async () => {
    const result = await runBin(['refs', 'contacts', 'list', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  $ ordercli refs contacts list\n');
    expect(result.stdout).toContain('see ordercli --help');
    expect(result.stdout).not.toContain('--base-url');
    expect(result.stdout.trimEnd().split('\n').length).toBeLessThan(25);
    const group = await runBin(['orders', '--help']);
    expect(group.stdout).toContain('Examples:\n  $ ordercli orders ');
  });
});

describe('unknown commands', () => {
  it('names the verbs of the group when a verb is unknown, exit 2', async () => {
    const result = await runCli(['orders', 'list']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      "error: Unknown command 'list' for ordercli orders. The commands of ordercli orders are create, new, import, journal, resolve, get (see ordercli orders --help).\n",
    );
  });

  it('suggests the closest verb of a nested group, and wraps the message on a terminal', async () => {
    const piped = await runCli(['refs', 'packagings', 'lsit']);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain(
      "Unknown command 'lsit' for ordercli refs packagings: did you mean list? The commands of ordercli refs packagings are list",
    );
    const tty = await runCli(['refs', 'packagings', 'lsit'], { tty: true, columns: 60 });
    expect(tty.code).toBe(2);
    const lines = tty.stderr
      .replace(/\x1b\[[0-9;]*m/g, '')
      .trimEnd()
      .split('\n');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain('did you mean list?');
  });

  it('still suggests a command for a typo at the top level, listing the commands (built binary)', async () => {
    const result = await runBin(['ordrs']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Unknown command 'ordrs' for ordercli: did you mean orders?");
    expect(result.stderr).toContain('orders, refs, contacts');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the help command', () => {
  const { commands } = allCommands();

  it('ordercli help <group> <verb> prints the verb’s help, for every command at any depth (built binary)', async () => {
    const result = await runBin(['help', 'orders', 'import']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: ordercli orders import \[options\] <path\|->\n/);
    expect(result.stdout).toContain('--journal <name>');
    const nested = await runBin(['help', 'refs', 'contacts', 'import']);
    expect(nested.stdout).toMatch(/^Usage: ordercli refs contacts import /);
  });

  it('prints exactly what --help prints, from the top (help a b) and from a group (a help b)', async () => {
    for (const { path } of commands) {
      const expected = await runCli([...path, '--help']);
      const fromTop = await runCli(['help', ...path]);
      expect(fromTop.code, path.join(' ')).toBe(0);
      expect(fromTop.stdout, `help ${path.join(' ')}`).toBe(expected.stdout);
      if (path.length > 1) {
        const group = path.slice(0, -1);
        const fromGroup = await runCli([...group, 'help', path.at(-1)!]);
        expect(fromGroup.stdout, `${group.join(' ')} help ${path.at(-1)}`).toBe(expected.stdout);
      }
    }
  });

  it('keeps global options before help, and names the commands of a group for a word that is none (exit 2)', async () => {
    const withGlobals = await runCli(['--base-url', 'http://127.0.0.1:1', '--json', 'help', 'orders', 'get']);
    expect(withGlobals.code).toBe(0);
    expect(withGlobals.stdout).toMatch(/^Usage: ordercli orders get /);
    const unknown = await runCli(['help', 'orders', 'improt']);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain(
      "error: Unknown command 'improt' for ordercli orders: did you mean import? The commands of ordercli orders are create, new, import, journal, resolve, get",
    );
    const beyond = await runCli(['help', 'orders', 'get', 'more']);
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toContain('ordercli orders get has no commands');
    // Where a verb takes arguments, a word named help is one of them, not the help command.
    expect(expandHelpCommand(program(), ['orders', 'import', 'help', '--dry-run'])).toEqual([
      'orders',
      'import',
      'help',
      '--dry-run',
    ]);
    expect(expandHelpCommand(program(), ['--profile', 'help', 'orders'])).toEqual([
      '--profile',
      'help',
      'orders',
    ]);
    const root = await runCli(['help']);
    expect(root.stdout).toMatch(/^Usage: ordercli \[options\] \[command\]/);
    expect(root.stdout).toContain('help [command...]');
  });
});
