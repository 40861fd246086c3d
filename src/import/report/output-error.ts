import { CliError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';

/**
 * An output of an import (`--report`, `--rejects`) could not be written: a full or read-only
 * disk, a folder gone. `reason` is the system's code (`ENOSPC`), for the sentence that says what
 * the import did all the same.
 */
export class OutputWriteError extends CliError {
  readonly reason: string;
  /** `the report /tmp/report.csv (ENOSPC)`, to name it in another sentence. */
  readonly named: string;

  constructor(what: string, path: string, error: unknown) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    super(`Cannot write ${what} ${path}: ${reason}.`, ExitCode.Failure);
    this.reason = reason;
    this.named = `${what} ${path} (${reason})`;
  }
}
