/**
 * `--arg <name> <value>` of `--jq`, as jq writes it: one option with two values, which commander
 * cannot declare (an option takes one value, or a variadic list that would swallow the command's
 * own arguments). The root command takes each such pair out of argv before parsing it.
 */
import { UsageError } from '../core/errors.js';
import type { JqVariable } from '../io/jq.js';
import { quote } from '../io/quote.js';

const JQ_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * argv without its `--arg <name> <value>` triples (wherever they stand, up to `--`), which are
 * appended to `variables`. A name jq cannot use, or an `--arg` short of its two values, is bad usage.
 */
export function takeJqArgs(args: readonly string[], variables: JqVariable[]): string[] {
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (arg.startsWith('--arg=')) throw argUsage();
    if (arg !== '--arg') {
      rest.push(arg);
      continue;
    }
    const name = args[i + 1];
    const value = args[i + 2];
    if (name === undefined || value === undefined) throw argUsage();
    if (!JQ_NAME.test(name)) {
      throw new UsageError(
        `--arg ${quote(name)} is not a jq variable name: use letters, digits and _, not starting with a digit (--arg code P1 binds $code).`,
      );
    }
    variables.push({ name, value });
    i += 2;
  }
  return rest;
}

/** `--arg` given without `--jq`: nothing would read the variable. */
export function checkJqArgsNeedJq(expression: string | undefined, variables: readonly JqVariable[]): void {
  if (expression === undefined && variables.length > 0) {
    throw new UsageError(
      `--arg binds a variable of a --jq expression, and no --jq is given: add one, such as --jq '.[] | select(.code == $${variables[0]!.name})'.`,
    );
  }
}

function argUsage(): UsageError {
  return new UsageError(
    '--arg takes a name and a value, as two words: --arg <name> <value> (--arg code P1).',
  );
}
