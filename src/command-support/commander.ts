/**
 * commander's classes under the declarations of `@commander-js/extra-typings`, so that a command's
 * `.action()` receives its arguments and options typed from the calls that declare them. The
 * values are commander's own, bundled as before: extra-typings is a development dependency whose
 * declarations only are read (its runtime would add a module and a second program object).
 */
import type * as typed from '@commander-js/extra-typings';
import * as commander from 'commander';

export type { CommandUnknownOpts, OptionValues } from '@commander-js/extra-typings';

// What extra-typings exports at runtime is these same classes of commander, unchanged.
export const Command = commander.Command as unknown as typeof typed.Command;
/** A command typed by its declarations: `Args` its arguments, `Opts` its options (`{}`: none yet). */
export type Command<
  // biome-ignore lint/suspicious/noExplicitAny: the bound extra-typings gives its own Command.
  Args extends any[] = [],
  // biome-ignore lint/complexity/noBannedTypes: extra-typings' own default (no options declared).
  Opts extends typed.OptionValues = {},
  // biome-ignore lint/complexity/noBannedTypes: extra-typings' own default (no options declared).
  GlobalOpts extends typed.OptionValues = {},
> = typed.Command<Args, Opts, GlobalOpts>;
export const Option = commander.Option as unknown as typeof typed.Option;
export type Option = typed.Option;
export const Argument = commander.Argument as unknown as typeof typed.Argument;
export type Argument = typed.Argument;
export const Help = commander.Help as unknown as typeof typed.Help;
export type Help = typed.Help;

/**
 * The options a declared command parses, as its action receives them: a verb's flags, typed by
 * the `.option()` calls that declare them and written nowhere else.
 */
export type FlagsOf<C extends { opts(): typed.OptionValues }> = ReturnType<C['opts']>;
