/**
 * Optional persistence for `--data <dir>`: every change to the sandbox's state is appended as one
 * JSON line to `<dir>/sandbox-journal.ndjson` (an AppendLog) and replayed at start. Appending
 * costs one small write per change, where rewriting a snapshot would cost the whole state.
 */
import { join } from 'node:path';
import { AppendLog } from '../io/append-log.js';

export const JOURNAL_FILE = 'sandbox-journal.ndjson';

/** One recorded change; `record` is the stored object as it was at that moment. */
export type JournalEntry =
  | { op: 'order'; record: Record<string, unknown> }
  | { op: 'order-validated'; id: number; validatedAt: string }
  | { op: 'contact-reference'; record: Record<string, unknown> }
  | { op: 'subscription'; record: Record<string, unknown> };

export class StateJournal {
  private readonly log: AppendLog;
  private closed = false;

  private constructor(log: AppendLog) {
    this.log = log;
  }

  get path(): string {
    return this.log.path;
  }

  /**
   * Opens (creating the folder and file if needed) and returns the entries already recorded; a
   * torn last line (a kill during a write) is cut off, so the next append does not glue onto it.
   */
  static async open(dataDir: string): Promise<{ journal: StateJournal; entries: JournalEntry[] }> {
    const path = join(dataDir, JOURNAL_FILE);
    const log = await AppendLog.open(path, { what: `the sandbox journal ${path}`, mode: 0o666 });
    const entries: JournalEntry[] = [];
    try {
      await log.replay((line, number) => {
        const text = line.toString('utf8');
        if (text.trim() === '') return;
        try {
          entries.push(JSON.parse(text) as JournalEntry);
        } catch (error) {
          throw new Error(`${path}:${number}: not JSON (${(error as Error).message})`, { cause: error });
        }
      });
    } catch (error) {
      await log.close();
      throw error;
    }
    return { journal: new StateJournal(log), entries };
  }

  /**
   * Synchronous on purpose: the line reaches the OS before the response is sent, so a sandbox
   * killed right after answering still remembers what it answered.
   */
  append(entry: JournalEntry): void {
    if (this.closed) return;
    this.log.appendNow(JSON.stringify(entry));
  }

  /** Forgets everything (reset to the seed). */
  clear(): void {
    if (!this.closed) this.log.truncateNow();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.log.closeNow();
  }
}
