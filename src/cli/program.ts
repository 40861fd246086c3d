/**
 * The root command: global options of the contract and the registry of command groups. Only
 * commander and the groups' metadata load here; each verb's module is imported by its action.
 */
import { Command, type CommandUnknownOpts, Help, Option } from '../command-support/commander.js';
import type { Context } from '../command-support/context.js';
import { checkJqArgsNeedJq, takeJqArgs } from '../command-support/jq-args.js';
import { registerApi } from '../commands/api/index.js';
import { registerAuth } from '../commands/auth/index.js';
import { registerCompletion } from '../commands/completion/index.js';
import { registerConfig } from '../commands/config/index.js';
import { registerContacts } from '../commands/contacts/index.js';
import { registerDemo } from '../commands/demo/index.js';
import { registerGet } from '../commands/get/index.js';
import { registerLedger } from '../commands/ledger/index.js';
import { registerListen } from '../commands/listen/index.js';
import { registerLogin } from '../commands/login/index.js';
import { registerLogout } from '../commands/logout/index.js';
import { registerOrders } from '../commands/orders/index.js';
import { registerPackagings } from '../commands/packagings/index.js';
import { registerRefs } from '../commands/refs/index.js';
import { registerSandbox } from '../commands/sandbox/index.js';
import { registerSchema } from '../commands/schema/index.js';
import { registerWebhooks } from '../commands/webhooks/index.js';
import { UsageError } from '../core/errors.js';
import type { JqVariable } from '../io/jq.js';
import { VERSION } from '../version.js';

/** Each group adds its commands to the program; order here is the order in `--help`. */
const GROUPS: ((program: Command, ctx: Context) => void)[] = [
  registerDemo,
  registerLogin,
  registerLogout,
  registerAuth,
  registerOrders,
  registerRefs,
  registerContacts,
  registerPackagings,
  registerGet,
  registerApi,
  registerWebhooks,
  registerListen,
  registerSandbox,
  registerSchema,
  registerLedger,
  registerConfig,
  registerCompletion,
];

/** Builds the program for one run, bound to its context. */
export function buildProgram(ctx: Context): CommandUnknownOpts {
  const root = new Command('ordercli')
    .description(
      'Orders, bulk imports, reference lists and webhooks of the order-taking service, from the command line.',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command');
  const program = withGlobalOptions(root)
    .showSuggestionAfterError(true)
    .configureHelp({
      helpWidth: Math.min(ctx.io.columns, 120),
      // The global options are listed once, in `ordercli --help`; every other page points there.
      showGlobalOptions: false,
      sortSubcommands: false,
      formatHelp: (command, helper) => {
        const text = Help.prototype.formatHelp.call(helper, command, helper);
        return command.parent ? `${text}\n${GLOBAL_OPTIONS_LINE}\n` : text;
      },
    })
    .configureOutput({
      writeOut: (text) => ctx.io.out(text),
      writeErr: (text) => ctx.io.err(text),
    })
    .exitOverride();

  program.addHelpText('after', ROOT_HELP_AFTER);

  // `--arg <name> <value>` takes two words, which commander cannot: the root takes them out first.
  const jqVariables: JqVariable[] = [];
  const parseOptions = program.parseOptions.bind(program);
  program.parseOptions = (args) => parseOptions(takeJqArgs(args, jqVariables));

  program.hook('preAction', async (_root, actionCommand) => {
    ctx.useFlags(actionCommand.optsWithGlobals());
    const { jq } = program.opts();
    checkJqArgsNeedJq(jq, jqVariables);
    await ctx.useJq(jq, jqVariables);
  });
  program.hook('postAction', () => ctx.endOutput());

  for (const register of GROUPS) register(program, ctx);
  configureSubcommands(program, ctx);
  return program;
}

/** The global options of the contract, in the order `ordercli --help` lists them. */
function withGlobalOptions(program: Command) {
  return program
    .addOption(
      new Option('--base-url <url>', 'service root; /api/v1/... is appended (env ORDERCLI_BASE_URL)'),
    )
    .addOption(
      new Option('--token <token>', 'API credential, sent as Authorization: Bearer (env ORDERCLI_TOKEN)'),
    )
    .addOption(
      new Option(
        '--auth-header <name>',
        'send the raw token in this header instead (env ORDERCLI_AUTH_HEADER)',
      ),
    )
    .addOption(
      new Option('--profile <name>', 'profile of the config file (env ORDERCLI_PROFILE, default "default")'),
    )
    .option('--json', 'machine-readable JSON on stdout')
    .addOption(
      new Option(
        '--jq <expression>',
        "filter the JSON output with jq, implies --json: strings raw, one result a line (--jq '.[].code')",
      ),
    )
    .addOption(new Option('--arg <name> <value>', 'bind $name to the string value in --jq (repeatable)'))
    .option('--no-color', 'plain text without colour (also NO_COLOR, or when stdout is not a terminal)')
    .option('--verbose', 'trace each HTTP exchange on stderr, secrets redacted (env ORDERCLI_DEBUG=1)')
    .addOption(
      new Option(
        '--timeout <duration>',
        'per-request timeout: 30s, 500ms; a bare number is ms (env ORDERCLI_TIMEOUT, default 30s)',
      ),
    )
    .addOption(new Option('--retries <n>', 'retries of a failed request (env ORDERCLI_RETRIES, default 3)'))
    .addOption(
      new Option(
        '--ledger <url|dir>',
        'where the order ledger is: a postgres:// URL shared by a fleet, or a folder (env ORDERCLI_LEDGER; default: the config folder)',
      ),
    )
    .option('-y, --yes', 'never prompt (implied when stdin is not a terminal or CI is set)')
    .option('--allow-insecure-http', 'allow a plain http:// base URL for a non-loopback host');
}

const ROOT_HELP_AFTER = `
Examples:
  $ ordercli sandbox                                   # a local service to try everything on
  $ ordercli --base-url http://127.0.0.1:4780 --token <token> orders import orders.csv
  $ ordercli get packaging_references 401 --json | jq .label

Exit codes: 0 success, 1 service or network failure, 2 bad usage or invalid input (nothing sent),
3 authentication or authorization refused, 4 import finished with orders not created, 5 created but not
confirmed in time (--await validated, listen --expect), 130 interrupted.

Durations take a unit: 500ms, 30s, 2m, 1h. A bare number is read only where the option's help says
its unit (ms for --timeout, seconds for listen --wait), and refused elsewhere.`;

/**
 * Every subcommand writes through the same IO and never calls process.exit; every group gets a
 * `help [command...]` command and names its commands when given an unknown one.
 */
function configureSubcommands(command: CommandUnknownOpts, ctx: Context): void {
  for (const sub of command.commands) {
    sub.exitOverride();
    sub.configureOutput({ writeOut: (t) => ctx.io.out(t), writeErr: (t) => ctx.io.err(t) });
    sub.showSuggestionAfterError(true);
    configureSubcommands(sub, ctx);
  }
  if (command.commands.length > 0) {
    const example = command.parent
      ? `${commandPath(command)} help ${command.commands[0]!.name()}`
      : 'ordercli help orders import';
    command.helpCommand('help [command...]', `show the help of a command, as --help does (${example})`);
    command.on('command:*', (operands: string[]) => unknownCommand(command, operands[0] ?? ''));
  }
}

/**
 * `ordercli help orders import` (or `ordercli orders help import`) as `ordercli orders import
 * --help`: commander's own help command reads one word only, and so showed the group's help for
 * any verb. Words that name no command are a usage error naming the group's commands; options
 * before `help` (global ones) are kept, those after it dropped. Other argv is returned as is.
 */
export function expandHelpCommand(program: CommandUnknownOpts, argv: readonly string[]): string[] {
  let command = program;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return [...argv];
    if (word.startsWith('-')) {
      if (word === '--arg') i++; // its name, then its value below
      if (takesValue(command, word) || takesValue(program, word)) i++;
      continue;
    }
    const sub = findCommand(command, word);
    if (sub) {
      command = sub;
      continue;
    }
    if (word !== 'help' || command.commands.length === 0) return [...argv];
    let target = command;
    for (const name of argv.slice(i + 1).filter((rest) => !rest.startsWith('-'))) {
      const next = findCommand(target, name);
      if (!next) {
        if (target.commands.length > 0) unknownCommand(target, name);
        throw new UsageError(
          `${commandPath(target)} has no commands, so there is no help for '${name}' under it (see ${commandPath(target)} --help).`,
        );
      }
      target = next;
    }
    const path: string[] = [];
    for (let c: CommandUnknownOpts | null = target; c && c !== command; c = c.parent) path.unshift(c.name());
    return [...argv.slice(0, i), ...path, '--help'];
  }
  return [...argv];
}

/** The subcommand of `command` that `word` names (its name or an alias). */
function findCommand(command: CommandUnknownOpts, word: string): CommandUnknownOpts | undefined {
  return command.commands.find((sub) => sub.name() === word || sub.aliases().includes(word));
}

/** Whether `flag` is an option of `command` that takes the next word as its value. */
function takesValue(command: CommandUnknownOpts, flag: string): boolean {
  if (flag.includes('=')) return false;
  const option = command.options.find((o) => o.long === flag || o.short === flag);
  return option?.required === true;
}

const GLOBAL_OPTIONS_LINE = 'Global options (--json, --profile, --verbose, ...): see ordercli --help.';

/** The full name of a command, as typed: `ordercli refs contacts`. */
function commandPath(command: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let c: CommandUnknownOpts | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * A word that is none of a group's commands: names the group's commands and the closest one, and
 * exits 2 (a usage error, nothing done).
 */
function unknownCommand(group: CommandUnknownOpts, typed: string): never {
  const names = group.commands
    .filter((c) => !(c as CommandUnknownOpts & { _hidden?: boolean })._hidden)
    .map((c) => c.name());
  const path = commandPath(group);
  const closest = closestName(typed, names);
  const suggestion = closest ? `: did you mean ${closest}?` : '.';
  throw new UsageError(
    `Unknown command '${typed}' for ${path}${suggestion} The commands of ${path} are ${names.join(', ')} (see ${path} --help).`,
  );
}

/** The name closest to a mistyped word: a few letters off (swaps count as one), or a prefix of it. */
function closestName(typed: string, names: string[]): string | undefined {
  const word = typed.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const distance = name.startsWith(word) && word.length >= 2 ? 0.5 : editDistance(word, name);
    if (distance <= Math.max(1, Math.floor(name.length * 0.4)) && distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Edits (insert, delete, replace, swap of neighbours) that turn one word into the other. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}
