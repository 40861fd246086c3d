/** The errors of the order ledger, shared by its stores. */
import { CliError, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { describeOwner, type LedgerEntry } from './record.js';

/** The ledger could not be written: nothing more may be sent (exit 1). */
export class LedgerWriteError extends CliError {
  constructor(location: string, cause: Error) {
    super(
      `Cannot write the order ledger ${location} (${(cause as NodeJS.ErrnoException).code ?? cause.message}), so nothing more was sent.`,
      ExitCode.Failure,
      ['Free some space, fix the permissions or reach the ledger again, then run the command again.'],
    );
    this.cause = cause;
  }
}

/** The ledger holds a record that cannot be read (not a torn last line): nothing is sent (exit 2). */
export class LedgerDamagedError extends UsageError {
  constructor(file: string, line: number, what: string) {
    super(
      `The order ledger ${file} is damaged at line ${line} (${what}), so it cannot tell which orders were already sent; nothing was sent.`,
      [
        `Look at that line (keep a copy of the file first): remove it if it holds no order; if it held one, remove it and record that order with ordercli orders resolve.`,
        'Or move the whole file aside and record its orders with ordercli orders resolve: until then they may be sent again.',
      ],
    );
  }
}

/** `orders resolve` of an order another ordercli is sending right now (exit 2, nothing recorded). */
export class ClaimedNowError extends UsageError {
  constructor(externalId: string, entry: LedgerEntry) {
    super(
      `The order ${JSON.stringify(externalId)} is being sent right now by another ordercli (${describeOwner(entry)}), so its outcome is not in doubt; nothing was recorded.`,
      ['Wait for that command to end: it records the outcome itself.'],
    );
  }
}
