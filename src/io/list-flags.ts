/**
 * The flags every list command declares (`--csv`, `--columns`, `--limit`; `--json` is global) and
 * how they become the options of `writeList`. Loaded by the commands' `index.ts`, so by `--help`:
 * it imports nothing heavy.
 */
import type { Command, OptionValues } from '@commander-js/extra-typings';
import { UsageError } from '../core/errors.js';
import type { ListOptions } from './list-output.js';
import { quote } from './quote.js';

/** Rows of a table shown on a terminal unless `--limit` says otherwise: more than a person reads. */
export const DEFAULT_TABLE_ROWS = 1000;

/**
 * Declares the list flags on a command. `keys` names the columns in the help; lists of
 * undocumented records take their columns from the records' own keys.
 */
export function withListOptions<
  Args extends unknown[],
  Opts extends OptionValues,
  Globals extends OptionValues,
>(command: Command<Args, Opts, Globals>, keys = "the records' own keys, as in the table header") {
  return command
    .option('--csv', 'write the rows as CSV (RFC 4180) instead of a table')
    .option(
      '--columns <keys>',
      `comma-separated columns for the table, TSV and CSV, in this order: ${keys}`,
      columnKeys,
    )
    .option(
      '--limit <rows>',
      `rows of the table on a terminal, ${DEFAULT_TABLE_ROWS} unless given, 0 for all (piped rows, --csv and --json are never limited)`,
    );
}

/** The flags `withListOptions` declares, as commander parses them (`--limit` as typed: see `listOptions`). */
export type ListFlags = ReturnType<
  ReturnType<typeof withListOptions<[], Record<never, never>, Record<never, never>>>['opts']
>;

/**
 * Column keys from a comma-separated list (`'id, email'`): what `--columns` names, and the keys a
 * list documents, which completion offers for `--columns`.
 */
export function columnKeys(value: string): string[] {
  return value
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
}

/** The output options of a list command: its list flags and the global `--json`. */
export function listOptions(flags: ListFlags, json: boolean): ListOptions {
  return { json, csv: flags.csv, columns: flags.columns, limit: parseLimit(flags.limit) };
}

/** `--limit`: a whole number of rows, 0 for all. */
function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_TABLE_ROWS;
  const rows = Number(value.trim());
  if (value.trim() === '' || !Number.isSafeInteger(rows) || rows < 0) {
    throw new UsageError(`--limit must be a whole number of rows (0 for all), not ${quote(value)}.`);
  }
  return rows;
}
