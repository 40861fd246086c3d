/**
 * `completion bash|zsh|fish`: a completion script generated from the commander program tree, so
 * that it always knows every command, option and argument choice of this version.
 */
import { completionValues, isListed, type ListedValues } from '../../command-support/command-help.js';
import type { Argument, CommandUnknownOpts, Option } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

export type Shell = 'bash' | 'zsh' | 'fish';

/**
 * What completes the value of an option: fixed words (`csv json ndjson`), words an ordercli
 * command lists at each Tab (the profile names), file names, folder names, or nothing at all (a
 * number, a URL, a search text: file names would only mislead).
 */
export type ValueCompletion = readonly string[] | ListedValues | 'files' | 'dirs' | 'none';

interface OptionSpec {
  /** `--base-url`, `-y`. */
  names: string[];
  description: string;
  takesValue: boolean;
  values: ValueCompletion;
}

/** What can follow one command path (`ordercli refs packagings list`). */
export interface CommandNode {
  path: string;
  subcommands: { names: string[]; description: string }[];
  /** The command's own options followed by the global ones. */
  options: OptionSpec[];
  /** Fixed choices of its positional arguments (`completion <shell>`). */
  choices: string[];
  /** Takes positional arguments without fixed choices (files, ids): complete file names there. */
  freeArguments: boolean;
}

const HELP: OptionSpec = {
  names: ['-h', '--help'],
  description: 'show help for a command',
  takesValue: false,
  values: 'none',
};

function optionSpec(option: Option): OptionSpec {
  return {
    names: [option.short, option.long].filter((name): name is string => typeof name === 'string'),
    description: option.description,
    takesValue: Boolean(option.required || option.optional),
    values: valueCompletion(option),
  };
}

/**
 * The completion of an option's value, from its declaration: its choices, else file or folder
 * names when its name or value placeholder says it is one (`--report <file>`, `--queue-dir <dir>`),
 * else nothing (`--concurrency <n>`, `--url <url>`, `--search <text>`).
 */
export function valueCompletion(option: Option): ValueCompletion {
  const choices = completionValues.get(option) ?? option.argChoices;
  if (choices && (isListed(choices) || choices.length > 0)) return choices;
  const placeholder = /<([^>]*)>|\[([^\]]*)\]/.exec(option.flags);
  const value = (placeholder?.[1] ?? placeholder?.[2] ?? '').toLowerCase();
  const name = (option.long ?? '').replace(/^--/, '').toLowerCase();
  if (/\bdir\b/.test(value)) return 'dirs';
  // `<file>`, `<file.json>`, `<path|->` (a file or standard input), `--key-file`, `--log`.
  if (/file|\.[a-z]+$|\|-$/.test(value) || /(^|-)(file|log)$/.test(name)) return 'files';
  return 'none';
}

function argumentChoices(argument: Argument): readonly string[] {
  const values = completionValues.get(argument);
  // completeWith lists values for options only.
  return values && !isListed(values) ? values : (argument.argChoices ?? []);
}

/** Walks `program.commands` depth-first: one node per command path. */
export function commandTree(program: CommandUnknownOpts): CommandNode[] {
  const globals = program.options.filter((option) => !option.hidden).map(optionSpec);
  const nodes: CommandNode[] = [];
  const visit = (command: CommandUnknownOpts, path: string, isRoot: boolean) => {
    const visible = command.commands.filter(
      (sub) => !(sub as CommandUnknownOpts & { _hidden?: boolean })._hidden,
    );
    const own = isRoot ? [] : command.options.filter((option) => !option.hidden).map(optionSpec);
    nodes.push({
      path,
      subcommands: visible.map((sub) => ({
        names: [sub.name(), ...sub.aliases()],
        description: sub.description(),
      })),
      options: [...own, ...globals, HELP],
      choices: command.registeredArguments.flatMap((argument) => [...argumentChoices(argument)]),
      freeArguments: command.registeredArguments.some((argument) => argumentChoices(argument).length === 0),
    });
    for (const sub of visible) visit(sub, `${path} ${sub.name()}`, false);
  };
  visit(program, program.name(), true);
  return nodes;
}

export function run(shell: Shell, program: CommandUnknownOpts, ctx: Context): void {
  const nodes = commandTree(program);
  const script =
    shell === 'bash' ? bashScript(nodes) : shell === 'zsh' ? zshScript(nodes) : fishScript(nodes);
  ctx.io.out(script);
}

/** POSIX single quotes, for bash and zsh. */
function sq(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** fish single quotes: only `\` and `'` are escaped. */
function fishQuote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function words(node: CommandNode, what: 'subcommands' | 'options' | 'value-options' | 'choices'): string[] {
  switch (what) {
    case 'subcommands':
      return node.subcommands.flatMap((sub) => sub.names);
    case 'options':
      return node.options.flatMap((option) => option.names);
    case 'value-options':
      return node.options.filter((option) => option.takesValue).flatMap((option) => option.names);
    case 'choices':
      return node.choices;
  }
}

/** `_ordercli_words <path> <what>`: the words of each kind after each command path (bash and zsh). */
function wordsFunction(nodes: CommandNode[]): string {
  const cases: string[] = [];
  for (const node of nodes) {
    for (const what of ['subcommands', 'options', 'value-options', 'choices'] as const) {
      const list = words(node, what);
      if (list.length > 0) cases.push(`    ${sq(`${what}:${node.path}`)}) echo ${sq(list.join(' '))} ;;`);
    }
  }
  return `_ordercli_words() {\n  case "$2:$1" in\n${cases.join('\n')}\n  esac\n}\n`;
}

/**
 * How an option's value is completed, as a word of the scripts: `@files`, `@dirs`, `@ordercli
 * config profiles` (the words that command prints at each Tab), or the choices.
 */
function valueWords(values: ValueCompletion): string {
  if (values === 'files') return '@files';
  if (values === 'dirs') return '@dirs';
  if (values === 'none') return '';
  if (isListed(values)) return `@ordercli ${values.listedBy.join(' ')}`;
  return values.join(' ');
}

/**
 * `_ordercli_listed <typed command> <args...>` (bash and zsh): the words an ordercli command lists
 * at this Tab, one a line. It runs the ordercli being completed (`./bin/ordercli` too), else the
 * one on the PATH; its errors are silenced and it reads no terminal, so that a Tab never prompts.
 */
const LISTED_FUNCTION = `_ordercli_listed() {
  local cmd="$1"
  shift
  command -v "$cmd" >/dev/null 2>&1 || cmd=ordercli
  "$cmd" "$@" </dev/null 2>/dev/null
}
`;

/**
 * `_ordercli_values <path> <option>`: what completes the option's value there (bash and zsh);
 * nothing printed for a value that no list or file name can complete.
 */
function valuesFunction(nodes: CommandNode[]): string {
  const cases: string[] = [];
  for (const node of nodes) {
    for (const option of node.options) {
      const words = valueWords(option.values);
      if (!option.takesValue || words === '') continue;
      for (const name of option.names) cases.push(`    ${sq(`${node.path} ${name}`)}) echo ${sq(words)} ;;`);
    }
  }
  return `_ordercli_values() {\n  case "$1 $2" in\n${cases.join('\n')}\n  esac\n}\n`;
}

/** The loop shared by bash and zsh: the command path of the words before the cursor. */
const PATH_LOOP = `    if (( skip )); then skip=0; continue; fi
    case "$word" in
      --*=*) continue ;;
      -*) [[ " $(_ordercli_words "$cmdpath" value-options) " == *" $word "* ]] && skip=1; continue ;;
    esac
    [[ " $(_ordercli_words "$cmdpath" subcommands) " == *" $word "* ]] && cmdpath="$cmdpath $word"`;

export function bashScript(nodes: CommandNode[]): string {
  return `# bash completion for ordercli, generated from its commands.
# Load it now:     source <(ordercli completion bash)
# Load it always:  ordercli completion bash > ~/.local/share/bash-completion/completions/ordercli
${wordsFunction(nodes)}
${valuesFunction(nodes)}
${LISTED_FUNCTION}
_ordercli() {
  local cur prev word cmdpath=ordercli skip=0 i values
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
${PATH_LOOP}
  done
  if [[ "$prev" == -* && " $(_ordercli_words "$cmdpath" value-options) " == *" $prev "* ]]; then
    values="$(_ordercli_values "$cmdpath" "$prev")"
    case "$values" in
      @files) COMPREPLY=( $(compgen -f -- "$cur") ) ;;
      @dirs) COMPREPLY=( $(compgen -d -- "$cur") ) ;;
      '@ordercli '*)
        compopt +o default 2>/dev/null
        COMPREPLY=( $(compgen -W "$(_ordercli_listed "\${COMP_WORDS[0]}" \${values#@ordercli })" -- "$cur") ) ;;
      *)
        # Not file names, even when nothing matches.
        compopt +o default 2>/dev/null
        COMPREPLY=( $(compgen -W "$values" -- "$cur") ) ;;
    esac
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_ordercli_words "$cmdpath" options)" -- "$cur") )
    return
  fi
  COMPREPLY=( $(compgen -W "$(_ordercli_words "$cmdpath" subcommands) $(_ordercli_words "$cmdpath" choices)" -- "$cur") )
}
complete -o default -F _ordercli ordercli
`;
}

export function zshScript(nodes: CommandNode[]): string {
  const described: string[] = [];
  for (const node of nodes) {
    const subs = node.subcommands.flatMap((sub) =>
      sub.names.map((name) => `${name}:${oneLine(sub.description)}`),
    );
    const options = node.options.flatMap((option) =>
      option.names.map((name) => `${name}:${oneLine(option.description)}`),
    );
    const choices = node.choices.map((choice) => `${choice}:${choice}`);
    for (const [what, lines] of [
      ['subcommands', subs],
      ['options', options],
      ['choices', choices],
    ] as const) {
      if (lines.length > 0)
        described.push(`    ${sq(`${what}:${node.path}`)}) print -rl -- ${lines.map(sq).join(' ')} ;;`);
    }
  }
  return `#compdef ordercli
# zsh completion for ordercli, generated from its commands.
# Load it now:     source <(ordercli completion zsh)    (after compinit)
# Load it always:  ordercli completion zsh > "\${fpath[1]}/_ordercli"
${wordsFunction(nodes)}
${valuesFunction(nodes)}
${LISTED_FUNCTION}
_ordercli_described() {
  case "$2:$1" in
${described.join('\n')}
  esac
}

_ordercli() {
  local cmdpath=ordercli word prev skip=0 i values
  local -a entries
  for (( i = 2; i < CURRENT; i++ )); do
    word="\${words[i]}"
${PATH_LOOP}
  done
  prev="\${words[CURRENT-1]}"
  if [[ "$prev" == -* && " $(_ordercli_words "$cmdpath" value-options) " == *" $prev "* ]]; then
    values="$(_ordercli_values "$cmdpath" "$prev")"
    case "$values" in
      @files) _files ;;
      @dirs) _files -/ ;;
      '@ordercli '*) compadd -- \${(f)"$(_ordercli_listed "\${words[1]}" \${=values#@ordercli })"} ;;
      '') _message 'a value' ;;
      *) compadd -- \${=values} ;;
    esac
    return
  fi
  if [[ "\${words[CURRENT]}" == -* ]]; then
    entries=( \${(f)"$(_ordercli_described "$cmdpath" options)"} )
  else
    entries=( \${(f)"$(_ordercli_described "$cmdpath" subcommands)"} \${(f)"$(_ordercli_described "$cmdpath" choices)"} )
  fi
  if (( \${#entries} )); then
    _describe -t commands ordercli entries
  else
    _files
  fi
}

if [ "$funcstack[1]" = "_ordercli" ]; then
  _ordercli "$@"
else
  compdef _ordercli ordercli
fi
`;
}

/** fish: `-r` (the option takes a value) and what completes it; `-x` is `-r` without file names. */
function fishValue(values: ValueCompletion): string {
  if (values === 'files') return ' -r -F';
  if (values === 'dirs') return " -x -a '(__fish_complete_directories)'";
  if (values === 'none') return ' -x';
  if (isListed(values)) return ` -x -a ${fishQuote(`(__ordercli_listed ${values.listedBy.join(' ')})`)}`;
  return ` -x -a ${fishQuote(values.join(' '))}`;
}

/** fish's `switch` cases of the words of each command path, and its `complete` lines. */
function fishLines(nodes: CommandNode[]): { cases: string[]; completes: string[] } {
  const cases: string[] = [];
  const completes: string[] = [];
  for (const node of nodes) {
    for (const what of ['subcommands', 'value-options'] as const) {
      const list = words(node, what);
      if (list.length > 0)
        cases.push(
          `        case ${fishQuote(`${what}:${node.path}`)}\n            echo ${fishQuote(list.join(' '))}`,
        );
    }
    const at = `-n ${fishQuote(`__ordercli_at ${fishQuote(node.path)}`)}`;
    for (const sub of node.subcommands) {
      for (const name of sub.names)
        completes.push(
          `complete -c ordercli ${at} -a ${fishQuote(name)} -d ${fishQuote(oneLine(sub.description))}`,
        );
    }
    for (const choice of node.choices) completes.push(`complete -c ordercli ${at} -a ${fishQuote(choice)}`);
    if (node.freeArguments) completes.push(`complete -c ordercli ${at} -F`);
    // Global options and --help are the same everywhere: written once, without a condition.
    const own =
      node.path === 'ordercli'
        ? node.options
        : node.options.slice(0, node.options.length - nodes[0]!.options.length);
    for (const option of own) {
      const flags = option.names
        .map((name) =>
          name.startsWith('--') ? `-l ${fishQuote(name.slice(2))}` : `-s ${fishQuote(name.slice(1))}`,
        )
        .join(' ');
      const condition = node.path === 'ordercli' ? '' : `${at} `;
      completes.push(
        `complete -c ordercli ${condition}${flags}${option.takesValue ? fishValue(option.values) : ''} -d ${fishQuote(oneLine(option.description))}`,
      );
    }
  }
  return { cases, completes };
}

export function fishScript(nodes: CommandNode[]): string {
  const { cases, completes } = fishLines(nodes);
  return `# fish completion for ordercli, generated from its commands.
# Load it now:     ordercli completion fish | source
# Load it always:  ordercli completion fish > ~/.config/fish/completions/ordercli.fish
function __ordercli_words --argument-names cmdpath what
    switch "$what:$cmdpath"
${cases.join('\n')}
    end
end

function __ordercli_path
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmdpath ordercli
    set -l skip 0
    for word in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        if string match -q -- '-*' $word
            if contains -- $word (string split ' ' -- (__ordercli_words $cmdpath value-options))
                set skip 1
            end
            continue
        end
        if contains -- $word (string split ' ' -- (__ordercli_words $cmdpath subcommands))
            set cmdpath "$cmdpath $word"
        end
    end
    echo $cmdpath
end

function __ordercli_at
    test (__ordercli_path) = "$argv[1]"
end

# The words an ordercli command lists at this Tab (profile names), one a line: the ordercli being
# completed, else the one on the PATH; its errors silenced, no terminal read, so it never prompts.
function __ordercli_listed
    set -l cmd (commandline -opc)[1]
    command -q -- $cmd; or set cmd ordercli
    $cmd $argv </dev/null 2>/dev/null
end

complete -c ordercli -f
${completes.join('\n')}
`;
}
