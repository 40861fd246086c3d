/**
 * `listen --log`: every accepted notification appended as one JSON line (`formatEventLine`) to an
 * append-only log (io/append-log.ts, unsynced). The lines of one turn of the event loop go out in
 * one synchronous write, and `append` calls back once its line is written (handed to the operating
 * system): the receiver answers 200 only then. It does not wait for the disk itself (no fsync): a
 * crash of the machine may lose the last lines, a crash of `listen` does not.
 */
import { AppendLog, AppendLogError } from '../io/append-log.js';

export class EventLog {
  private constructor(private readonly log: AppendLog) {}

  /** Opens (creating it and its folder) the log for appending; fails early if it cannot be written. */
  static async open(path: string): Promise<EventLog> {
    try {
      return new EventLog(await AppendLog.open(path, { what: `the log ${path}` }));
    } catch (error) {
      // The system's own error (with its code), for the caller's message naming the flag.
      throw error instanceof AppendLogError && error.doing === 'open' ? error.cause : error;
    }
  }

  get path(): string {
    return this.log.path;
  }

  /** Appends one line (without its newline); `done` is called once it is written, or with the error that stopped it. */
  append(line: string, done: (error?: Error) => void): void {
    this.log.append(line).then(() => done(), done);
  }

  /** Writes what is pending, then closes the file. */
  close(): Promise<void> {
    return this.log.close();
  }
}
