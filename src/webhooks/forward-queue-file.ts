/**
 * The file of `listen --forward-to`'s queue, an append-only log (io/append-log.ts): one line per
 * accepted event (`{"type":"event","seq":n,` and the fields of its event line) and one per outcome
 * (`{"type":"delivered"|"rejected","seq":n,"status":s,"at":time}`). The key is never in it.
 *
 * - An event line is synced to disk before `append` resolves (appends that arrive together share
 *   one write and one sync), so an event answered 200 survives a crash.
 * - One `listen` per file (a lock): two would deliver every entry twice.
 * - On open, entries without an outcome come back in order, a line torn by a crash (never
 *   acknowledged, since the 200 follows the sync) is cut off, and a file whose entries all have an
 *   outcome is emptied; so is one that grows large while the queue is drained.
 * - A line in the middle that is not an entry (an edit, a disk that failed) is never dropped
 *   silently: it is copied to `<queue>.damaged` (once) and reported (`damaged`).
 *
 * Pending entries are kept as offsets and read back when their turn comes, so memory stays small
 * while the application is down.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { AppendLog, AppendLogError } from '../io/append-log.js';
import { type EventRecord, parseEventLine } from './event-record.js';

/** An event in the file: its number and where its line is. */
export interface QueuedEntry {
  seq: number;
  offset: number;
  length: number;
}

export type EntryOutcome = 'delivered' | 'rejected';

export interface QueueFileOptions {
  file: string;
  /** Longest wait for the file's lock when its owner cannot be checked (default: the lock's). */
  lockWaitMs?: number;
  /** Told when that lock is waited for. */
  onLockWait?: (message: string) => void;
  /** Ends a wait for the lock (Ctrl-C). */
  signal?: AbortSignal;
}

/** Lines of the queue that could not be read, kept aside in `file`. */
export interface DamagedLines {
  /** Their line numbers in the queue file. */
  lines: number[];
  file: string;
}

/** What the console and the inspector say of damaged lines: which, where they are kept, what to do. */
export function damagedLinesWarning(damaged: DamagedLines): string {
  const one = damaged.lines.length === 1;
  const lines = damaged.lines.slice(0, 5).join(', ') + (damaged.lines.length > 5 ? ', …' : '');
  return `${one ? 'a line' : `${damaged.lines.length} lines`} of the queue could not be read (line ${lines}), so ${one ? 'its event was' : 'their events were'} not resumed: kept in ${damaged.file}; repair ${one ? 'it' : 'them'} there and send ${one ? 'it' : 'them'} with ordercli webhooks replay ${damaged.file}.`;
}

/** A drained file is emptied once it grows past this. */
const EMPTY_DRAINED_AT_BYTES = 4 * 1024 * 1024;

export class ForwardQueueFile {
  /** Events appended (or found at open) without an outcome yet. */
  private entriesLeft: number;
  private nextSeq: number;

  private constructor(
    private readonly log: AppendLog,
    /** The entries without an outcome when the file was opened, in order. */
    readonly unfinished: QueuedEntry[],
    lastSeq: number,
    /** Lines found that were not entries, kept aside (undefined when there were none). */
    readonly damaged: DamagedLines | undefined,
  ) {
    this.entriesLeft = unfinished.length;
    this.nextSeq = lastSeq + 1;
  }

  /** Takes the lock and reads the file back (creating it and its folder if needed). */
  static async open(options: QueueFileOptions): Promise<ForwardQueueFile> {
    let log: AppendLog;
    try {
      log = await AppendLog.open(options.file, {
        what: `the forwarding queue ${options.file}`,
        synced: true,
        lock: {
          busyAdvice: 'stop that listen, or give this one its own --queue-dir.',
          waitMs: options.lockWaitMs,
          onWait: options.onLockWait,
          signal: options.signal,
          command: 'listen --forward-to',
        },
      });
    } catch (error) {
      // The system's own error (with its code), for the caller's message naming the flag.
      throw error instanceof AppendLogError && error.doing === 'open' ? error.cause : error;
    }
    try {
      const entries = new Map<number, QueuedEntry>();
      const damaged: { number: number; text: string }[] = [];
      let lastSeq = 0;
      // A torn last line is cut off: it was never acknowledged, since the 200 follows the sync.
      await log.replay((line, number, offset) => {
        let value: { type?: unknown; seq?: unknown };
        try {
          value = JSON.parse(line.toString('utf8')) as typeof value;
        } catch {
          damaged.push({ number, text: line.toString('utf8') });
          return;
        }
        if (typeof value?.seq !== 'number') {
          damaged.push({ number, text: line.toString('utf8') });
          return;
        }
        lastSeq = Math.max(lastSeq, value.seq);
        if (value.type === 'event') entries.set(value.seq, { seq: value.seq, offset, length: line.length });
        else if (value.type === 'delivered' || value.type === 'rejected') entries.delete(value.seq);
      }, options.signal);
      const unfinished = [...entries.values()].sort((a, b) => a.seq - b.seq);
      const aside = damaged.length > 0 ? await keepAside(options.file, damaged) : undefined;
      if (unfinished.length === 0 && log.size > 0) await log.truncate(0);
      return new ForwardQueueFile(log, unfinished, lastSeq, aside);
    } catch (error) {
      await log.close();
      throw error;
    }
  }

  get path(): string {
    return this.log.path;
  }

  /** Appends an event line (as `formatEventLine` writes it); resolves once it is on disk. */
  async append(eventLine: string): Promise<QueuedEntry> {
    const seq = this.nextSeq++;
    const line = `{"type":"event","seq":${seq},${eventLine.slice(1)}`;
    this.entriesLeft++;
    try {
      return { seq, offset: await this.log.append(line), length: Buffer.byteLength(line) };
    } catch (error) {
      this.entriesLeft--;
      throw error;
    }
  }

  /** Records an entry's outcome; once no entry is left without one, a large file is emptied. */
  async finish(seq: number, outcome: EntryOutcome, status: number | undefined): Promise<void> {
    this.entriesLeft--;
    const at = new Date().toISOString();
    await this.log.append(`{"type":"${outcome}","seq":${seq},"status":${status ?? null},"at":"${at}"}`);
    if (this.entriesLeft === 0 && this.log.size >= EMPTY_DRAINED_AT_BYTES) await this.log.truncate(0);
  }

  /** The event an entry holds; undefined if its line is no longer one (the file was edited). */
  async read(entry: QueuedEntry): Promise<EventRecord | undefined> {
    return parseEventLine((await this.log.read(entry.offset, entry.length)).toString('utf8'));
  }

  /** Writes what is pending, closes the file and releases the lock. */
  close(): Promise<void> {
    return this.log.close();
  }
}

/**
 * Copies damaged lines to `<queue>.damaged` (0600: they may hold an event's body), each once: a
 * line already there (the queue was not emptied since) is not copied again.
 */
async function keepAside(queue: string, damaged: { number: number; text: string }[]): Promise<DamagedLines> {
  const file = `${queue}.damaged`;
  const already = new Set(
    await readFile(file, 'utf8').then(
      (text) => text.split('\n'),
      () => [],
    ),
  );
  const fresh = damaged.filter((line) => !already.has(line.text)).map((line) => `${line.text}\n`);
  if (fresh.length > 0) await appendFile(file, fresh.join(''), { mode: 0o600 });
  return { lines: damaged.map((line) => line.number), file };
}
