/**
 * Errors a user can cause or meet. Each carries its exit code; `cli/main.ts` is the one place
 * that turns them into a message on stderr and a process exit code.
 */
import { ExitCode, type ExitCodeValue } from './exit-codes.js';

/** Base of every error that is rendered as one sentence without a stack trace. */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  /** Extra lines printed below the sentence (the problems, the service's details). */
  readonly details: string[];
  /** A suggestion for the user, printed last (`hint: ...`). */
  hint: string | undefined;

  constructor(message: string, exitCode: ExitCodeValue, details: string[] = []) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.details = details;
  }
}

/** Bad flags or arguments (exit 2). */
export class UsageError extends CliError {
  constructor(message: string, details: string[] = []) {
    super(message, ExitCode.Usage, details);
  }
}

/** One problem in an input file: where it is and what is wrong. */
export interface InputProblem {
  file: string;
  /** 1-based line of a text input; for a workbook, the row in its sheet. */
  line?: number;
  field?: string;
  message: string;
  /** For a workbook: the cell (`Commandes!D4`) or row (`Commandes!4:4`), printed instead of the line. */
  cell?: string;
}

/** Formats a problem as `file:line: field: message` (the contract's form), or `file:Sheet!D4: ...`. */
export function formatInputProblem(problem: InputProblem): string {
  const where =
    problem.cell !== undefined
      ? `${problem.file}:${problem.cell}`
      : problem.line === undefined
        ? problem.file
        : `${problem.file}:${problem.line}`;
  return problem.field ? `${where}: ${problem.field}: ${problem.message}` : `${where}: ${problem.message}`;
}

/** Invalid input (exit 2): every problem is listed, nothing was sent. */
export class InputError extends CliError {
  readonly problems: InputProblem[];

  constructor(message: string, problems: InputProblem[] = []) {
    super(message, ExitCode.Usage, problems.map(formatInputProblem));
    this.problems = problems;
  }
}

/** The user interrupted the command (Ctrl-C, Escape in a prompt): exit 130. */
export class CancelledError extends CliError {
  constructor(message = 'Interrupted.') {
    super(message, ExitCode.Interrupted);
  }
}

/** The command ran but did not fully succeed, with its own exit code (an import with failures). */
export class IncompleteError extends CliError {}

/** The system's code of an error (ENOSPC, EROFS…), or its message when it has none. */
export function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
