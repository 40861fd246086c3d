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
 *   silently: it is copied to `<queue>.damaged` (once) and reported (`damaged`). A line is read
 *   with a bound (MAX_QUEUE_LINE_BYTES): a longer one is copied there piece by piece, never held
 *   whole, and reported with its size.
 *
 * Pending entries are kept as offsets and read back when their turn comes, so memory stays small
 * while the application is down.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, type FileHandle, open, truncate } from 'node:fs/promises';
import { AppendLog, AppendLogError, type ReplayBound } from '../io/append-log.js';
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
  /** Those over the bound, with their size in bytes (copied piece by piece). */
  oversize?: { line: number; bytes: number }[];
}

/** What the console and the inspector say of damaged lines: which, where they are kept, what to do. */
export function damagedLinesWarning(damaged: DamagedLines): string {
  const one = damaged.lines.length === 1;
  const lines = damaged.lines.slice(0, 5).join(', ') + (damaged.lines.length > 5 ? ', …' : '');
  const long = (damaged.oversize ?? [])
    .slice(0, 5)
    .map(
      ({ line, bytes }) =>
        `line ${line} is ${bytes} bytes, over the ${MAX_QUEUE_LINE_BYTES / MIB} MiB a line may hold`,
    );
  const why = long.length > 0 ? `; ${long.join(', ')}` : '';
  return `${one ? 'a line' : `${damaged.lines.length} lines`} of the queue could not be read (line ${lines}${why}), so ${one ? 'its event was' : 'their events were'} not resumed: kept in ${damaged.file}; repair ${one ? 'it' : 'them'} there and send ${one ? 'it' : 'them'} with ordercli webhooks replay ${damaged.file}.`;
}

const MIB = 1024 * 1024;
/** A drained file is emptied once it grows past this. */
const EMPTY_DRAINED_AT_BYTES = 4 * MIB;
/**
 * The longest queue line read into memory. A line holds one event, whose body the receiver caps at
 * 1 MiB (its raw copy, escaped, at most 2 MiB more, plus headers): a longer line is damage.
 */
export const MAX_QUEUE_LINE_BYTES = 8 * MIB;

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
    const aside = new DamagedFile(`${options.file}.damaged`, options.signal);
    try {
      const entries = new Map<number, QueuedEntry>();
      const damaged: { number: number; text: string }[] = [];
      let lastSeq = 0;
      // A torn last line is cut off: it was never acknowledged, since the 200 follows the sync.
      await log.replay(
        (line, number, offset) => {
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
        },
        options.signal,
        { maxLineBytes: MAX_QUEUE_LINE_BYTES, oversize: aside.keepPiece },
      );
      const unfinished = [...entries.values()].sort((a, b) => a.seq - b.seq);
      const kept = await aside.keep(damaged);
      if (unfinished.length === 0 && log.size > 0) await log.truncate(0);
      return new ForwardQueueFile(log, unfinished, lastSeq, kept);
    } catch (error) {
      await aside.close();
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
 * `<queue>.damaged` (0600: its lines may hold an event's body), where damaged lines are copied,
 * each once: a line already there (the queue was not emptied since) is not copied again. Lines are
 * compared by their SHA-256, so neither that file nor a long line is ever held whole; the file is
 * read only once a damaged line is found.
 */
class DamagedFile {
  private readonly oversize: { line: number; bytes: number }[] = [];
  /** The hashes of the lines already in the file (read when first needed). */
  private already: Promise<Set<string>> | undefined;
  /** The long line being copied: the file open for it, its hash, where the file ended before it. */
  private copying: { handle: FileHandle; hash: Hash; start: number } | undefined;

  constructor(
    readonly file: string,
    /** Ctrl-C: stops reading the file (the replay then stops at its next read). */
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** `replay`'s `oversize`: appends a long line's pieces, and drops the copy if it was already there. */
  readonly keepPiece: ReplayBound['oversize'] = async (piece, { line, bytes, end }) => {
    if (!this.copying) {
      await this.seen();
      const handle = await open(this.file, 'a', 0o600);
      this.copying = { handle, hash: createHash('sha256'), start: (await handle.stat()).size };
    }
    const { handle, hash, start } = this.copying;
    hash.update(piece);
    await handle.appendFile(piece);
    if (!end) return;
    await handle.appendFile('\n');
    this.copying = undefined;
    await handle.close();
    if (!this.remember(await this.seen(), hash.digest('hex'))) await truncate(this.file, start);
    this.oversize.push({ line, bytes });
  };

  /** Copies the other damaged lines; what to report, undefined when no line was damaged. */
  async keep(damaged: { number: number; text: string }[]): Promise<DamagedLines | undefined> {
    await this.close();
    if (damaged.length + this.oversize.length === 0) return undefined;
    const seen = await this.seen();
    const fresh = damaged
      .filter((line) => this.remember(seen, sha256(line.text)))
      .map((line) => `${line.text}\n`);
    if (fresh.length > 0) await appendFile(this.file, fresh.join(''), { mode: 0o600 });
    const lines = [...damaged.map((line) => line.number), ...this.oversize.map((line) => line.line)];
    const oversize = this.oversize.length > 0 ? this.oversize : undefined;
    return { lines: lines.sort((a, b) => a - b), file: this.file, ...(oversize && { oversize }) };
  }

  /** Closes the file if a long line was being copied (the replay was interrupted): its part is cut off. */
  async close(): Promise<void> {
    const copying = this.copying;
    this.copying = undefined;
    if (!copying) return;
    await copying.handle.truncate(copying.start).catch(() => undefined);
    await copying.handle.close();
  }

  /** Adds a line's hash; false when it was there already (the line is not copied again). */
  private remember(seen: Set<string>, digest: string): boolean {
    if (seen.has(digest)) return false;
    seen.add(digest);
    return true;
  }

  private seen(): Promise<Set<string>> {
    this.already ??= lineHashes(this.file, this.signal);
    return this.already;
  }
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The SHA-256 of each line of a file, read in pieces; none if it cannot be read (not there yet). */
async function lineHashes(file: string, signal: AbortSignal | undefined): Promise<Set<string>> {
  const hashes = new Set<string>();
  let hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(file, {
      highWaterMark: MIB,
      signal,
    }) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        hashes.add(hash.update(chunk.subarray(start, end)).digest('hex'));
        hash = createHash('sha256');
        start = end + 1;
      }
      hash.update(chunk.subarray(start));
    }
  } catch {
    // No such file yet (or Ctrl-C, which the replay then reports): every damaged line is copied.
  }
  return hashes;
}
