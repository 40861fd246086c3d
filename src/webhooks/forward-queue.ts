/**
 * `listen --forward-to`: a durable, ordered forwarding queue. Nothing accepted is lost.
 *
 * Each accepted event is on disk before the receiver answers 200 (`enqueue`, on the queue's file:
 * `forward-queue-file.ts`). One sender forwards the events in order, one at a time, until each is
 * delivered or refused for good (`forward-sender.ts`), and its outcome is added to the file. What
 * is still queued when `listen` stops (or crashes) is sent on the next start.
 */
import { type DamagedLines, ForwardQueueFile, type QueuedEntry } from './forward-queue-file.js';
import type { ForwardSender, ForwardSenderOptions } from './forward-sender.js';

export type { ForwardAttempt, ForwardOutcome } from './forward-sender.js';

export interface ForwardQueueOptions extends ForwardSenderOptions {
  /** The queue file (created with its folder if needed). */
  file: string;
  /** Longest wait for the queue's lock when its owner cannot be checked (default: the lock's). */
  lockWaitMs?: number;
  /** Told when that lock is waited for. */
  onLockWait?: (message: string) => void;
  /** Ends a wait for the lock (Ctrl-C). */
  signal?: AbortSignal;
}

export class ForwardQueue {
  /** Entries found undelivered in the file when it was opened. */
  readonly resumed: number;
  /** Lines of the file that were not entries, kept aside (see ForwardQueueFile). */
  readonly damaged: DamagedLines | undefined;
  /** Counts for the summary line. */
  readonly counts = { delivered: 0, rejected: 0 };
  private readonly pending: QueuedEntry[];
  private readonly stop = new AbortController();
  /** Resolves the sender's wait for an entry (set while the queue is empty). */
  private entryQueued: (() => void) | undefined;
  private sender: ForwardSender | undefined;
  private sending: Promise<void> | undefined;

  private constructor(
    private readonly options: ForwardQueueOptions,
    private readonly queueFile: ForwardQueueFile,
  ) {
    this.pending = [...queueFile.unfinished];
    this.resumed = this.pending.length;
    this.damaged = queueFile.damaged;
  }

  /** Opens the queue file, resuming what it holds; call `start()` to begin forwarding. */
  static async open(options: ForwardQueueOptions): Promise<ForwardQueue> {
    return new ForwardQueue({ ...options }, await ForwardQueueFile.open(options));
  }

  /** Where its entries are forwarded. */
  get target(): string {
    return this.options.target;
  }

  get file(): string {
    return this.queueFile.path;
  }

  /** Entries accepted and not yet delivered or rejected. */
  get waiting(): number {
    return this.pending.length;
  }

  /** The key to add back from now on (`listen --subscribe` learns it after the queue is open). */
  useKey(key: string): void {
    this.options.key = key;
    this.sender?.useKey(key);
  }

  /** Starts the sender. */
  start(): void {
    this.sending ??= this.send();
  }

  /** Adds an event line (as `formatEventLine` writes it); resolves with its `seq` once it is on disk. */
  async enqueue(eventLine: string): Promise<number> {
    if (this.stop.signal.aborted) throw new Error('the forwarding queue is closed');
    const entry = await this.queueFile.append(eventLine);
    this.pending.push(entry);
    this.entryQueued?.();
    return entry.seq;
  }

  /**
   * Stops after the attempt in flight (which is allowed to finish, within its time-out) and
   * closes the file. Entries not yet delivered stay in it for the next start.
   */
  async close(): Promise<void> {
    if (this.stop.signal.aborted) return;
    this.stop.abort();
    this.entryQueued?.();
    await this.sending;
    await this.queueFile.close();
  }

  private async send(): Promise<void> {
    // Loaded here: undici is needed only once there is something to forward.
    const { ForwardSender } = await import('./forward-sender.js');
    const sender = new ForwardSender({ ...this.options });
    this.sender = sender;
    try {
      while (!this.stop.signal.aborted) {
        const head = this.pending[0];
        if (head === undefined) {
          await new Promise<void>((resolve) => {
            this.entryQueued = resolve;
          });
          this.entryQueued = undefined;
          continue;
        }
        const record = await this.queueFile.read(head);
        // An entry that no longer reads as an event (the file was edited) is given up.
        const report = record ? await sender.deliver(head.seq, record, this.stop.signal) : undefined;
        if (record && !report) return;
        this.pending.shift();
        const outcome = report?.outcome === 'delivered' ? 'delivered' : 'rejected';
        if (report) this.counts[outcome]++;
        await this.queueFile.finish(head.seq, outcome, report?.status).catch(() => undefined);
      }
    } finally {
      await sender.close();
    }
  }
}
