/**
 * Webhook deliveries of the sandbox: each notification goes through `sendNotification` (so it is
 * byte-for-byte what `webhooks trigger` sends), is retried with back-off while the receiver fails,
 * and every attempt is logged. The interface is silent on retries; a few attempts help a receiver
 * that restarts, without hiding one that is broken.
 */
import { Agent } from '../api/transport.js';
import { describeNetworkError } from '../core/network-error.js';
import { backOffDelay } from '../core/retry.js';
import { sendNotification } from '../webhooks/notify.js';
import { trimLog } from './request-log.js';

export interface DeliveryLogEntry {
  at: string;
  event: string;
  url: string;
  /** 1 for the first try. */
  attempt: number;
  /** The receiver's status, when it answered. */
  status?: number;
  /** Why the attempt failed without an answer (refused, timed out, …). */
  error?: string;
  durationMs?: number;
  /** The order code the notification is about, when there is one. */
  code?: string;
}

export interface DelivererOptions {
  log: DeliveryLogEntry[];
  logLimit?: number;
  maxAttempts?: number;
  /** Delay before the second attempt; it doubles for each later one (with jitter, as clients do). */
  backoffMs?: number;
  timeoutMs?: number;
  /** One line per attempt, for the `sandbox` command's console; never holds the key. */
  logger?: (line: string) => void;
  onDelivery?: (entry: DeliveryLogEntry) => void;
}

export const DEFAULT_DELIVERY_ATTEMPTS = 4;
export const DEFAULT_DELIVERY_BACKOFF_MS = 250;
/** Longest wait between two attempts, however many the sandbox is told to make. */
const MAX_DELIVERY_BACKOFF_MS = 60_000;
export const DEFAULT_DELIVERY_TIMEOUT_MS = 5_000;

export interface Notification {
  event: string;
  url: string;
  key: string;
  body: object;
}

export class WebhookDeliverer {
  private readonly options: Required<Omit<DelivererOptions, 'logger' | 'onDelivery'>> &
    Pick<DelivererOptions, 'logger' | 'onDelivery'>;
  /** Its own connection pool, so that closing the sandbox closes its connections to receivers. */
  private readonly agent = new Agent({ keepAliveTimeout: 1_000 });
  private cancel = new AbortController();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(options: DelivererOptions) {
    this.options = {
      ...options,
      logLimit: options.logLimit ?? Number.POSITIVE_INFINITY,
      maxAttempts: options.maxAttempts ?? DEFAULT_DELIVERY_ATTEMPTS,
      backoffMs: options.backoffMs ?? DEFAULT_DELIVERY_BACKOFF_MS,
      timeoutMs: options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS,
    };
  }

  /** Starts delivering in the background; the outcome lands in the log. */
  deliver(notification: Notification): void {
    // Encoded once, so that every attempt sends the same bytes.
    const body = JSON.stringify(notification.body);
    const code = (notification.body as { code?: unknown }).code;
    this.attempt(
      { ...notification, body },
      1,
      typeof code === 'string' ? code : undefined,
      this.cancel.signal,
    );
  }

  /** Attempts in flight and retries waiting for their turn (never 0 between an attempt and its retry). */
  get pending(): number {
    return this.inFlight.size + this.timers.size;
  }

  /** Drops pending retries and aborts requests in flight (reset). */
  cancelAll(): void {
    this.cancel.abort();
    this.cancel = new AbortController();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Cancels everything and closes the connections to receivers. */
  async close(): Promise<void> {
    this.cancelAll();
    await Promise.allSettled([...this.inFlight]);
    await this.agent.destroy();
  }

  private attempt(
    notification: Omit<Notification, 'body'> & { body: string },
    attempt: number,
    code: string | undefined,
    signal: AbortSignal,
  ): void {
    const run = this.send(notification, attempt, code, signal).then((delivered) => {
      if (delivered || signal.aborted || attempt >= this.options.maxAttempts) return;
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          this.attempt(notification, attempt + 1, code, signal);
        },
        backOffDelay(attempt, { baseMs: this.options.backoffMs, maxMs: MAX_DELIVERY_BACKOFF_MS }),
      );
      this.timers.add(timer);
    });
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  /** One attempt; true when the receiver answered 2xx. Never rejects. */
  private async send(
    notification: Omit<Notification, 'body'> & { body: string },
    attempt: number,
    code: string | undefined,
    signal: AbortSignal,
  ): Promise<boolean> {
    const entry: DeliveryLogEntry = {
      at: new Date().toISOString(),
      event: notification.event,
      url: notification.url,
      attempt,
    };
    if (code !== undefined) entry.code = code;
    try {
      const result = await sendNotification({
        url: notification.url,
        event: notification.event,
        key: notification.key,
        body: notification.body,
        timeoutMs: this.options.timeoutMs,
        dispatcher: this.agent,
        signal,
      });
      entry.status = result.status;
      entry.durationMs = result.durationMs;
    } catch (error) {
      if (signal.aborted) return false;
      entry.error = describeNetworkError(error);
    }
    this.record(entry);
    return entry.status !== undefined && entry.status >= 200 && entry.status < 300;
  }

  private record(entry: DeliveryLogEntry): void {
    const log = this.options.log;
    log.push(entry);
    trimLog(log, this.options.logLimit);
    const outcome = entry.status !== undefined ? String(entry.status) : `failed (${entry.error})`;
    this.options.logger?.(
      `webhook ${entry.event}${entry.code ? ` ${entry.code}` : ''} -> ${entry.url}: ${outcome}, attempt ${entry.attempt}`,
    );
    this.options.onDelivery?.(entry);
  }
}
