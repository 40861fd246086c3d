import { completeWith } from '../../command-support/command-help.js';
import { type Command, Option, type OptionValues } from '../../command-support/commander.js';
import { formatChoices, formatNames } from '../../import/read/formats.js';

/**
 * The options every import reads its input with (`orders import`, `refs contacts import`):
 * declared once, so that the two commands read files alike; and `--force`, whose only meaning in
 * an import is to pass the ledger's move check. `renames` is the `--map` example.
 * Returns the command typed with them, so that they are part of each verb's `FlagsOf`.
 */
export function withImportInputOptions<
  Args extends unknown[],
  Opts extends OptionValues,
  Globals extends OptionValues,
>(command: Command<Args, Opts, Globals>, renames: string) {
  const declared = command
    .option('--format <format>', `${formatChoices()} (default: from the file extension)`)
    .option(
      '--sheet <name>',
      'the sheet of an .xlsx workbook to read (default: the first with known columns)',
    )
    .option('--delimiter <char>', 'CSV delimiter (default: detected from the header: , ; or tab)')
    .option(
      '--map <file.json>',
      `rename the file's own headers to the columns (${renames}; a header mapped to null is left out)`,
    )
    .option(
      '--ignore-columns <headers>',
      'leave out the columns of a CSV file or workbook that the import does not need: their headers as the file writes them, comma-separated (Date,Colis)',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    // A number's default shown as one (commander would print the string's JSON, "8").
    .addOption(new Option('--concurrency <n>', 'requests in flight at once').default('8', '8'))
    .option(
      '--dry-run',
      'validate the whole input, check what the real run needs (the ledger, the token, the outputs), and stop; nothing is sent',
    )
    .option(
      '--offline',
      'with --dry-run: check the input alone, without the ledger or the service (a job with no secrets)',
    )
    .option(
      '--force',
      'use a ledger that has no record of this service although the default ledger has some (see ledger copy)',
    );
  // The shell completion offers the formats' names (the aliases stay accepted).
  return completeWith(declared, '--format', formatNames());
}
