/**
 * What a command group declares about its commands besides commander's own: help examples and
 * the values shell completion offers. It imports no command, so every group may import it.
 */

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
 * Values the shell completion offers for an option or argument that accepts others too (aliases,
 * any case, names the service may add), so that commander does not restrict them as `.choices()`
 * would. Read by `ordercli completion`.
 */
export const completionValues = new WeakMap<object, readonly string[]>();

/** Declares the values completion offers for `flag` (`--format`) or the argument named `flag`. */
export function completeWith<C extends DeclaredCommand>(
  command: C,
  flag: string,
  values: readonly string[],
): C {
  const target =
    command.options.find((option) => option.long === flag || option.short === flag) ??
    command.registeredArguments.find((argument) => argument.name() === flag);
  if (!target) throw new Error(`completeWith: ${command.name()} has no ${flag}`);
  completionValues.set(target, values);
  return command;
}

/** Appends an Examples section to a command's help. */
export function withExamples<C extends DeclaredCommand>(command: C, examples: string[]): C {
  command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
  return command;
}
