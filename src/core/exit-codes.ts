/** The exit codes of the contract; scripts rely on them, so they never change meaning. */
export const ExitCode = {
  /** success */
  Ok: 0,
  /** the service or the network failed the command */
  Failure: 1,
  /** bad usage or invalid input; nothing was sent */
  Usage: 2,
  /** authentication or authorization refused (401, 403) */
  Auth: 3,
  /** an import finished with some orders not created */
  Partial: 4,
  /**
   * the command's work was done but not confirmed in time: not all expected notifications (or
   * validations) arrived before the deadline
   */
  Unconfirmed: 5,
  /** interrupted (Ctrl-C) */
  Interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
