/**
 * `listen --forward-to`: a durable, ordered forwarding queue. Nothing accepted is lost.
 *
 * - Each accepted notification is appended to an append-only NDJSON file and `fdatasync`ed
 *   BEFORE the receiver answers 200 (`enqueue` resolves after the sync). Appends that arrive
 *   together share one write and one sync (group commit), so the cost per event stays small.
 * - One sender forwards the entries in order, one at a time, with the original headers and body
 *   bytes and the key added back at sending (the file never holds the key), through
 *   `sendNotification`, so the local application sees exactly what the service sends.
 * - A 2xx answer marks the entry `delivered` (a line appended to the same file). A connection
 *   error, a time-out, 5xx, 408, 425 or 429 is retried with exponential back-off and jitter
 *   (`Retry-After` honoured), for as long as it takes: the application is expected to come back.
 * - Any other answer (3xx, 4xx) is final: retrying the same bytes would get the same refusal and
 *   would block every later event behind it. The entry is marked `rejected`, shown with the
 *   application's answer, and stays in the file (and the `--log`) for `webhooks replay` once the
 *   application is fixed.
 * - On start, the file is read back: entries without a mark are resumed in order, a line torn by
 *   a crash (never acknowledged, since the 200 follows the sync) is cut off, and a file whose
 *   entries are all marked is emptied.
 *
 * Memory stays small while the target is down: pending entries are kept as file offsets and read
 * back one at a time when their turn comes.
 */

import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Agent } from 'undici';
import { parseRetryAfter } from '../core/retry.js';
import { acquireFileLock, type FileLock } from '../io/file-lock.js';
import {
  codeOf,
  type EventRecord,
  originalBodyBytes,
  parseEventLine,
  replayHeaders,
} from './event-record.js';
import { sendNotification } from './notify.js';

export interface ForwardQueueOptions {
  /** The queue file (created with its folder if needed). */
  file: string;
  /** Where entries are forwarded. */
  target: string;
  /** Added back as `X-WEBHOOK-KEY` at each sending; undefined sends no key (`--no-verify`). */
  key: string | undefined;
  /** Per-attempt time-out (default 10 s). */
  timeoutMs?: number;
  /** First retry delay, doubled per attempt with jitter (default 250 ms). */
  retryBaseMs?: number;
  /** Longest retry delay (default 5 s: a local application that comes back is served quickly). */
  maxRetryDelayMs?: number;
  /** Told about every attempt, for the console. */
  onAttempt?: (report: ForwardAttempt) => void;
  /** Longest wait for the queue's lock when its owner cannot be checked (default: the lock's). */
  lockWaitMs?: number;
  /** Told when that lock is waited for. */
  onLockWait?: (message: string) => void;
  /** Ends a wait for the lock (Ctrl-C). */
  signal?: AbortSignal;
}

export type ForwardOutcome = 'delivered' | 'rejected' | 'retrying';

export interface ForwardAttempt {
  seq: number;
  event: string | null;
  code: string | undefined;
  attempt: number;
  outcome: ForwardOutcome;
  status?: number;
  /** Why no answer came (refused, timed out, ...). */
  error?: string;
  /** The start of the application's answer. */
  responseText?: string;
  durationMs?: number;
  /** When retrying: the delay before the next attempt. */
  retryInMs?: number;
}

interface PendingEntry {
  seq: number;
  offset: number;
  length: number;
}

interface WriteRequest {
  data: string;
  /** Called with the byte offset of `data` once it is written and synced. */
  done: (offset: number) => void;
  fail: (error: Error) => void;
}

const RETRY_STATUSES = new Set([408, 425, 429]);
/** A drained queue file is emptied once it grows past this. */
const COMPACT_AT_BYTES = 4 * 1024 * 1024;
const RESPONSE_PREVIEW_BYTES = 4096;

export class ForwardQueue {
  readonly file: string;
  /** Entries found undelivered in the file when it was opened. */
  readonly resumed: number;
  private readonly options: ForwardQueueOptions;
  private readonly handle: FileHandle;
  private readonly lock: FileLock;
  private readonly pending: PendingEntry[];
  private size: number;
  private nextSeq: number;
  private writes: WriteRequest[] = [];
  private flushing: Promise<void> | undefined;
  private stopping = false;
  private wake: (() => void) | undefined;
  private readonly sleepAbort = new AbortController();
  private sender: Promise<void> | undefined;
  private agent: Agent | undefined;
  /** Counts for the summary line. */
  readonly counts = { delivered: 0, rejected: 0, attempts: 0 };

  private constructor(
    options: ForwardQueueOptions,
    handle: FileHandle,
    state: { pending: PendingEntry[]; size: number; nextSeq: number },
    lock: FileLock,
  ) {
    this.options = options;
    this.lock = lock;
    this.file = options.file;
    this.handle = handle;
    this.pending = state.pending;
    this.size = state.size;
    this.nextSeq = state.nextSeq;
    this.resumed = state.pending.length;
  }

  /** Opens the queue file, resuming what it holds; call `start()` to begin forwarding. */
  static async open(options: ForwardQueueOptions): Promise<ForwardQueue> {
    await mkdir(dirname(options.file), { recursive: true });
    const lock = await acquireLock(options);
    let handle: FileHandle | undefined;
    try {
      const state = await readQueueFile(options.file);
      handle = await open(options.file, 'a+', 0o600);
      if (state.pending.length === 0 && state.size > 0) {
        // Everything was delivered: start from an empty file.
        await handle.truncate(0);
        state.size = 0;
      } else if (state.validSize < state.size) {
        // A line torn by a crash was never acknowledged; drop it so the next append starts clean.
        await handle.truncate(state.validSize);
        state.size = state.validSize;
      }
      await handle.datasync();
      return new ForwardQueue(options, handle, state, lock);
    } catch (error) {
      await handle?.close();
      await lock.release();
      throw error;
    }
  }

  /** Entries accepted and not yet delivered or rejected. */
  get waiting(): number {
    return this.pending.length;
  }

  /** The key to add back from now on (`listen --subscribe` learns it after the queue is open). */
  useKey(key: string): void {
    this.options.key = key;
  }

  /** Starts the sender. */
  start(): void {
    this.sender ??= this.runSender();
  }

  /**
   * Adds an event line (as `formatEventLine` writes it) and resolves once it is on disk: only
   * then may the receiver answer 200.
   */
  async enqueue(eventLine: string): Promise<void> {
    if (this.stopping) throw new Error('the forwarding queue is closed');
    const seq = this.nextSeq++;
    const data = `{"type":"event","seq":${seq},${eventLine.slice(1)}\n`;
    const offset = await this.write(data);
    this.pending.push({ seq, offset, length: Buffer.byteLength(data) - 1 });
    this.wake?.();
  }

  /**
   * Stops after the attempt in flight (which is allowed to finish, within its time-out), syncs
   * and closes the file. Entries not yet delivered stay in the file for the next start.
   */
  async close(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.sleepAbort.abort();
    this.wake?.();
    await this.sender;
    await this.flushing;
    await this.handle.datasync().catch(() => undefined);
    await this.handle.close();
    await this.agent?.close().catch(() => undefined);
    await this.lock.release();
  }

  /** Appends through the group commit; resolves with the offset where `data` was written. */
  private write(data: string): Promise<number> {
    return new Promise((done, fail) => {
      this.writes.push({ data, done, fail });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    while (this.writes.length > 0) {
      const batch = this.writes;
      this.writes = [];
      const buffer = Buffer.from(batch.map((w) => w.data).join(''), 'utf8');
      const start = this.size;
      try {
        for (let written = 0; written < buffer.length; ) {
          written += (await this.handle.write(buffer, written, buffer.length - written)).bytesWritten;
        }
        await this.handle.datasync();
      } catch (error) {
        // Refuse the whole batch (each sender gets a 500 and will retry) and cut off what part of it
        // may have reached the file, so that the next batch starts on a line of its own.
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
    this.flushing = undefined;
  }

  private async runSender(): Promise<void> {
    const { Agent } = await import('undici');
    this.agent = new Agent({ keepAliveTimeout: 2_000 });
    while (!this.stopping) {
      const head = this.pending[0];
      if (head === undefined) {
        await this.compactIfDrained();
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      const record = await this.readEntry(head);
      if (record === undefined) {
        // Unreadable (the file was edited under us): skip it rather than block the queue forever.
        this.pending.shift();
        continue;
      }
      await this.deliver(head, record);
    }
  }

  /** Attempts one entry until it is delivered, rejected, or the queue stops. */
  private async deliver(entry: PendingEntry, record: EventRecord): Promise<void> {
    const body = originalBodyBytes(record);
    const code = codeOf(record.body);
    for (let attempt = 1; !this.stopping; attempt++) {
      this.counts.attempts++;
      const report: ForwardAttempt = {
        seq: entry.seq,
        event: record.event,
        code,
        attempt,
        outcome: 'retrying',
      };
      let retryAfterMs: number | undefined;
      try {
        const result = await sendNotification({
          url: this.options.target,
          event: record.event ?? '',
          key: this.options.key,
          body,
          headers: replayHeaders(record),
          timeoutMs: this.options.timeoutMs,
          dispatcher: this.agent,
          maxResponseBytes: RESPONSE_PREVIEW_BYTES,
        });
        report.status = result.status;
        report.durationMs = result.durationMs;
        report.responseText = result.bodyText;
        if (result.status >= 200 && result.status < 300) report.outcome = 'delivered';
        else if (result.status < 500 && !RETRY_STATUSES.has(result.status)) report.outcome = 'rejected';
        else retryAfterMs = retryAfter(result.headers['retry-after']);
      } catch (error) {
        report.error = describeSendError(error);
      }
      if (report.outcome !== 'retrying') {
        this.pending.shift();
        this.counts[report.outcome]++;
        await this.write(
          `{"type":"${report.outcome}","seq":${entry.seq},"status":${report.status},"at":"${new Date().toISOString()}"}\n`,
        ).catch(() => undefined);
        this.options.onAttempt?.(report);
        return;
      }
      const delay = retryAfterMs ?? this.backOff(attempt);
      report.retryInMs = Math.round(delay);
      this.options.onAttempt?.(report);
      await sleep(delay, this.sleepAbort.signal);
    }
  }

  private backOff(attempt: number): number {
    const base = this.options.retryBaseMs ?? 250;
    const max = this.options.maxRetryDelayMs ?? 5_000;
    const exponential = Math.min(max, base * 2 ** Math.min(attempt - 1, 20));
    return exponential / 2 + Math.random() * (exponential / 2);
  }

  private async readEntry(entry: PendingEntry): Promise<EventRecord | undefined> {
    const buffer = Buffer.alloc(entry.length);
    await this.handle.read(buffer, 0, entry.length, entry.offset);
    return parseEventLine(buffer.toString('utf8'));
  }

  /** Empties a drained file that has grown large, between two writes. */
  private async compactIfDrained(): Promise<void> {
    if (this.size < COMPACT_AT_BYTES) return;
    await this.flushing;
    if (this.pending.length > 0 || this.writes.length > 0 || this.flushing) return;
    await this.handle.truncate(0);
    await this.handle.datasync();
    this.size = 0;
  }
}

/** What a queue file holds: undelivered entries in order, its size, and the size up to its last whole line. */
async function readQueueFile(
  file: string,
): Promise<{ pending: PendingEntry[]; size: number; validSize: number; nextSeq: number }> {
  const size = await stat(file).then(
    (s) => s.size,
    () => 0,
  );
  const entries = new Map<number, PendingEntry>();
  let maxSeq = 0;
  let offset = 0;
  let validSize = 0;
  let carry: Buffer[] = [];
  let carryStart = 0;
  const handleLine = (line: Buffer, lineOffset: number): void => {
    let value: { type?: unknown; seq?: unknown };
    try {
      value = JSON.parse(line.toString('utf8')) as typeof value;
    } catch {
      return;
    }
    if (typeof value.seq !== 'number') return;
    maxSeq = Math.max(maxSeq, value.seq);
    if (value.type === 'event')
      entries.set(value.seq, { seq: value.seq, offset: lineOffset, length: line.length });
    else if (value.type === 'delivered' || value.type === 'rejected') entries.delete(value.seq);
  };
  if (size > 0) {
    for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
      let start = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
        const piece = chunk.subarray(start, i);
        const line = carry.length > 0 ? Buffer.concat([...carry, piece]) : piece;
        handleLine(line, carry.length > 0 ? carryStart : offset + start);
        carry = [];
        start = i + 1;
        validSize = offset + i + 1;
      }
      if (start < chunk.length) {
        if (carry.length === 0) carryStart = offset + start;
        carry.push(chunk.subarray(start));
      }
      offset += chunk.length;
    }
  }
  const pending = [...entries.values()].sort((a, b) => a.seq - b.seq);
  return { pending, size, validSize, nextSeq: maxSeq + 1 };
}

/** One `listen` per queue file: two would deliver every entry twice. */
function acquireLock(options: ForwardQueueOptions): Promise<FileLock> {
  return acquireFileLock(`${options.file}.lock`, {
    what: `the forwarding queue ${options.file}`,
    busyAdvice: 'stop that listen, or give this one its own --queue-dir.',
    waitMs: options.lockWaitMs,
    onWait: options.onLockWait,
    signal: options.signal,
    command: 'listen --forward-to',
  });
}

/** The application's `Retry-After`, capped at a minute so that one answer cannot stall the queue. */
function retryAfter(value: string | string[] | undefined): number | undefined {
  const ms = parseRetryAfter(Array.isArray(value) ? value[0] : value);
  return ms === undefined ? undefined : Math.min(60_000, ms);
}

/** undici wraps the useful cause (ECONNREFUSED, ...); name it. */
export function describeSendError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || (error as { code?: unknown }).code === 'UND_ERR_HEADERS_TIMEOUT') {
    return 'no answer in time';
  }
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `${code} ${connectionHint(code)}`.trim();
    const errors = (current as { errors?: unknown[] }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : current.cause;
  }
  return error.message;
}

function connectionHint(code: string): string {
  if (code === 'ECONNREFUSED') return '(nothing listens there)';
  if (code === 'ECONNRESET') return '(the connection was reset)';
  if (code === 'ENOTFOUND') return '(unknown host)';
  return '';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
