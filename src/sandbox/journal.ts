/**
 * Optional persistence for `--data <dir>`: every change to the sandbox's state is appended as one
 * JSON line to `<dir>/sandbox-journal.ndjson` and replayed at start. Appending costs one small
 * write per change, where rewriting a snapshot would cost the whole state at benchmark rates.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const JOURNAL_FILE = 'sandbox-journal.ndjson';

/** One recorded change; `record` is the stored object as it was at that moment. */
export type JournalEntry =
  | { op: 'order'; record: Record<string, unknown> }
  | { op: 'order-validated'; id: number; validatedAt: string }
  | { op: 'contact-reference'; record: Record<string, unknown> }
  | { op: 'subscription'; record: Record<string, unknown> };

export class StateJournal {
  readonly path: string;
  private fd: number | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.fd = fd;
  }

  /** Opens (creating the folder and file if needed) and returns the entries already recorded. */
  static open(dataDir: string): { journal: StateJournal; entries: JournalEntry[] } {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, JOURNAL_FILE);
    const fd = openSync(path, 'a+');
    const bytes = readFileSync(fd);
    // A torn last line is what a kill during a write leaves: drop it, or the next append would
    // be glued to it and corrupt a good entry.
    const completeLength = bytes.lastIndexOf(0x0a) + 1;
    if (completeLength < bytes.length) ftruncateSync(fd, completeLength);
    const entries = parseJournal(path, bytes.subarray(0, completeLength).toString('utf8'));
    return { journal: new StateJournal(path, fd), entries };
  }

  /**
   * Synchronous on purpose: the line reaches the OS before the response is sent, so a sandbox
   * killed right after answering still remembers what it answered.
   */
  append(entry: JournalEntry): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
  }

  /** Forgets everything (reset to the seed). The file is opened for appending, so writes follow. */
  clear(): void {
    if (this.fd !== undefined) ftruncateSync(this.fd, 0);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}

function parseJournal(path: string, text: string): JournalEntry[] {
  const entries: JournalEntry[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch (error) {
      throw new Error(`${path}:${index + 1}: not JSON (${(error as Error).message})`, { cause: error });
    }
  }
  return entries;
}
