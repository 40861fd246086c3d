/**
 * The file of `listen --forward-to`'s queue: append-only NDJSON, one line per accepted event
 * (`{"type":"event","seq":n,` and the fields of its event line) and one per outcome
 * (`{"type":"delivered"|"rejected","seq":n,"status":s,"at":time}`). The key is never in it.
 *
 * - An event line is synced to disk before `append` resolves (appends that arrive together share
 *   one write and one sync), so an event answered 200 survives a crash.
 * - One `listen` per file (a lock): two would deliver every entry twice.
 * - On open, entries without an outcome come back in order, a line torn by a crash (never
 *   acknowledged, since the 200 follows the sync) is cut off, and a file whose entries all have an
 *   outcome is emptied; so is one that grows large while the queue is drained.
 *
 * Pending entries are kept as offsets and read back when their turn comes, so memory stays small
 * while the application is down.
 */
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { acquireFileLock, type FileLock } from '../io/file-lock.js';
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

interface PendingWrite {
  data: string;
  done: (offset: number) => void;
  fail: (error: Error) => void;
}

/** A drained file is emptied once it grows past this. */
const EMPTY_DRAINED_AT_BYTES = 4 * 1024 * 1024;

export class ForwardQueueFile {
  private writes: PendingWrite[] = [];
  private writing: Promise<void> | undefined;
  /** Events appended (or found at open) without an outcome yet. */
  private entriesLeft = 0;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    private readonly lock: FileLock,
    private size: number,
    private nextSeq: number,
    /** The entries without an outcome when the file was opened, in order. */
    readonly unfinished: QueuedEntry[],
  ) {
    this.entriesLeft = unfinished.length;
  }

  /** Takes the lock and reads the file back (creating it and its folder if needed). */
  static async open(options: QueueFileOptions): Promise<ForwardQueueFile> {
    await mkdir(dirname(options.file), { recursive: true });
    const lock = await acquireFileLock(`${options.file}.lock`, {
      what: `the forwarding queue ${options.file}`,
      busyAdvice: 'stop that listen, or give this one its own --queue-dir.',
      waitMs: options.lockWaitMs,
      onWait: options.onLockWait,
      signal: options.signal,
      command: 'listen --forward-to',
    });
    let handle: FileHandle | undefined;
    try {
      const state = await readQueueFile(options.file);
      handle = await open(options.file, 'a+', 0o600);
      // Everything has an outcome: start empty. Otherwise cut a torn last line off.
      const keep = state.unfinished.length === 0 ? 0 : state.wholeSize;
      if (keep < state.size) await handle.truncate(keep);
      await handle.datasync();
      return new ForwardQueueFile(options.file, handle, lock, keep, state.nextSeq, state.unfinished);
    } catch (error) {
      await handle?.close();
      await lock.release();
      throw error;
    }
  }

  /** Appends an event line (as `formatEventLine` writes it); resolves once it is on disk. */
  async append(eventLine: string): Promise<QueuedEntry> {
    const seq = this.nextSeq++;
    const data = `{"type":"event","seq":${seq},${eventLine.slice(1)}\n`;
    this.entriesLeft++;
    try {
      const offset = await this.write(data);
      return { seq, offset, length: Buffer.byteLength(data) - 1 };
    } catch (error) {
      this.entriesLeft--;
      throw error;
    }
  }

  /** Records an entry's outcome; once no entry is left without one, a large file is emptied. */
  async finish(seq: number, outcome: EntryOutcome, status: number | undefined): Promise<void> {
    this.entriesLeft--;
    const at = new Date().toISOString();
    await this.write(`{"type":"${outcome}","seq":${seq},"status":${status ?? null},"at":"${at}"}\n`);
    if (this.entriesLeft === 0 && this.size >= EMPTY_DRAINED_AT_BYTES && !this.writing) {
      this.writing = this.emptyFile();
    }
  }

  /** The event an entry holds; undefined if its line is no longer one (the file was edited). */
  async read(entry: QueuedEntry): Promise<EventRecord | undefined> {
    const buffer = Buffer.alloc(entry.length);
    await this.handle.read(buffer, 0, entry.length, entry.offset);
    return parseEventLine(buffer.toString('utf8'));
  }

  /** Waits for the writes in progress, then closes the file and releases the lock. */
  async close(): Promise<void> {
    while (this.writing) await this.writing;
    await this.handle.close();
    await this.lock.release();
  }

  private write(data: string): Promise<number> {
    return new Promise((done, fail) => {
      this.writes.push({ data, done, fail });
      this.writing ??= this.flush();
    });
  }

  /** Writes and syncs the waiting appends as one batch, until none is left. */
  private async flush(): Promise<void> {
    while (this.writes.length > 0) {
      const batch = this.writes;
      this.writes = [];
      const buffer = Buffer.from(batch.map((w) => w.data).join(''), 'utf8');
      const start = this.size;
      try {
        for (let written = 0; written < buffer.length; ) {
          written += (await this.handle.write(buffer, written)).bytesWritten;
        }
        await this.handle.datasync();
      } catch (error) {
        // Refuse the whole batch (each sender gets a 500 and will retry) and cut off what part of
        // it may have reached the file, so that the next batch starts on a line of its own.
        await this.handle.truncate(start).catch(() => undefined);
        for (const w of batch) w.fail(error as Error);
        continue;
      }
      this.size += buffer.length;
      let offset = start;
      for (const w of batch) {
        w.done(offset);
        offset += Buffer.byteLength(w.data);
      }
    }
    this.writing = undefined;
  }

  /** Empties the file (every entry has its outcome), then writes what arrived meanwhile. */
  private async emptyFile(): Promise<void> {
    await this.handle.truncate(0);
    await this.handle.datasync();
    this.size = 0;
    this.writing = undefined;
    if (this.writes.length > 0) this.writing = this.flush();
  }
}

interface QueueFileState {
  unfinished: QueuedEntry[];
  size: number;
  /** The size up to the end of the last whole line. */
  wholeSize: number;
  nextSeq: number;
}

async function readQueueFile(file: string): Promise<QueueFileState> {
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  const entries = new Map<number, QueuedEntry>();
  let maxSeq = 0;
  const readLine = (line: Buffer, offset: number): void => {
    let value: { type?: unknown; seq?: unknown };
    try {
      value = JSON.parse(line.toString('utf8')) as typeof value;
    } catch {
      return;
    }
    if (typeof value.seq !== 'number') return;
    maxSeq = Math.max(maxSeq, value.seq);
    if (value.type === 'event') entries.set(value.seq, { seq: value.seq, offset, length: line.length });
    else if (value.type === 'delivered' || value.type === 'rejected') entries.delete(value.seq);
  };
  let offset = 0;
  let wholeSize = 0;
  let carry: Buffer[] = [];
  if (size > 0) {
    for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, end + 1)) {
        const piece = chunk.subarray(start, end);
        readLine(carry.length > 0 ? Buffer.concat([...carry, piece]) : piece, wholeSize);
        carry = [];
        start = end + 1;
        wholeSize = offset + end + 1;
      }
      if (start < chunk.length) carry.push(chunk.subarray(start));
      offset += chunk.length;
    }
  }
  const unfinished = [...entries.values()].sort((a, b) => a.seq - b.seq);
  return { unfinished, size, wholeSize, nextSeq: maxSeq + 1 };
}
