/**
 * What a command group declares about its commands besides commander's own: help examples and
 * the values shell completion offers. It imports no command, so every group may import it.
 */
import { columnKeys, withListOptions } from '../io/list-flags.js';
import type { Command, OptionValues } from './commander.js';

/**
 * What these helpers use of a command. Structural, so that they return the very type they are
 * given (a command typed by extra-typings keeps its flags) and take commander's own too.
 */
interface DeclaredCommand {
  readonly options: readonly { readonly long?: string | undefined; readonly short?: string | undefined }[];
  readonly registeredArguments: readonly { name(): string }[];
  name(): string;
  addHelpText(position: 'after', text: string): unknown;
}

/**
 * Values known only when Tab is pressed (the profiles of the config file): the words that
 * `ordercli <listedBy...>` prints, one a line. That command must be quiet and quick, and must
 * never prompt nor print a secret: the completion script runs it at each Tab.
 */
export interface ListedValues {
  readonly listedBy: readonly string[];
}

/** Fixed words, or words an ordercli command lists when Tab is pressed (options only). */
export type CompletionValues = readonly string[] | ListedValues;

/** Whether the values are listed by a command when Tab is pressed, rather than fixed. */
export function isListed(values: CompletionValues): values is ListedValues {
  return 'listedBy' in values;
}

/**
 * Values the shell completion offers for an option or argument that accepts others too (aliases,
 * any case, names the service may add), so that commander does not restrict them as `.choices()`
 * would. Read by `ordercli completion`.
 */
export const completionValues = new WeakMap<object, CompletionValues>();

/** Declares the values completion offers for `flag` (`--format`) or the argument named `flag`. */
export function completeWith<C extends DeclaredCommand>(
  command: C,
  flag: string,
  values: CompletionValues,
): C {
  const option = command.options.find((option) => option.long === flag || option.short === flag);
  const target = option ?? command.registeredArguments.find((argument) => argument.name() === flag);
  if (!target) throw new Error(`completeWith: ${command.name()} has no ${flag}`);
  // The scripts hold an argument's choices as fixed words: only an option's values can be listed.
  if (!option && isListed(values)) throw new Error(`completeWith: ${flag} is an argument, not an option`);
  completionValues.set(target, values);
  return command;
}

/** Appends an Examples section to a command's help. */
export function withExamples<C extends DeclaredCommand>(command: C, examples: string[]): C {
  command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
  return command;
}

/**
 * The list flags (`withListOptions`) of a list whose columns are documented: `keys` named in the
 * help of `--columns`, and offered by its completion.
 */
export function withListColumns<
  Args extends unknown[],
  Opts extends OptionValues,
  Globals extends OptionValues,
>(command: Command<Args, Opts, Globals>, keys: string) {
  return completeWith(withListOptions(command, keys), '--columns', columnKeys(keys));
}
