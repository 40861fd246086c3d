/**
 * Webhook deliveries of the sandbox: each notification goes through `sendNotification` (so it is
 * byte-for-byte what `webhooks trigger` sends), is retried with back-off while the receiver is
 * down or failing (`--delivery-retries`), and every attempt is logged. The interface is silent on
 * retries; a few of them let a receiver that starts late or restarts still get its notifications,
 * without hiding one that is broken (a 4xx answer, a wrong key say, is final).
 */
import { Agent } from '../api/transport.js';
import { describeNetworkError } from '../core/network-error.js';
import { isRetryableStatus, sendNotification } from '../webhooks/notify.js';
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
  /** When the attempt failed and another follows: the wait before it. Absent on the last one. */
  retryInMs?: number;
}

export interface DelivererOptions {
  log: DeliveryLogEntry[];
  logLimit?: number;
  /** Attempts after the first one failed; default 3. */
  retries?: number;
  /** Delay before the first retry; it doubles for each later one, up to 60 s. Default 500 ms. */
  backoffMs?: number;
  timeoutMs?: number;
  /** One line per attempt, for the `sandbox` command's console; never holds the key. */
  logger?: (line: string) => void;
  onDelivery?: (entry: DeliveryLogEntry) => void;
}

export const DEFAULT_DELIVERY_RETRIES = 3;
/** The most `--delivery-retries` accepts: beyond it the waits are all at the cap anyway. */
export const MAX_DELIVERY_RETRIES = 100;
export const DEFAULT_DELIVERY_BACKOFF_MS = 500;
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
      retries: checkRetries(options.retries ?? DEFAULT_DELIVERY_RETRIES),
      backoffMs: checkBackoff(options.backoffMs ?? DEFAULT_DELIVERY_BACKOFF_MS),
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
    const run = this.send(notification, attempt, code, signal).then((entry) => {
      if (entry === undefined) return;
      const retryInMs =
        worthRetrying(entry) && attempt <= this.options.retries ? this.delayAfter(attempt) : undefined;
      if (retryInMs !== undefined) entry.retryInMs = retryInMs;
      this.record(entry);
      if (retryInMs === undefined || signal.aborted) return;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.attempt(notification, attempt + 1, code, signal);
      }, retryInMs);
      this.timers.add(timer);
    });
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  /**
   * The wait after attempt `attempt` failed: the base doubled per attempt, capped. No jitter, unlike
   * the API client's retries: one sender to a few receivers herds nobody, and a fixed schedule lets
   * a CI script know how late its receiver may start (0.5 + 1 + 2 s by default).
   */
  private delayAfter(attempt: number): number {
    return Math.min(MAX_DELIVERY_BACKOFF_MS, this.options.backoffMs * 2 ** Math.min(attempt - 1, 30));
  }

  /** One attempt, as its log entry; undefined when cancelled (reset, close). Never rejects. */
  private async send(
    notification: Omit<Notification, 'body'> & { body: string },
    attempt: number,
    code: string | undefined,
    signal: AbortSignal,
  ): Promise<DeliveryLogEntry | undefined> {
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
      if (signal.aborted) return undefined;
      entry.error = describeNetworkError(error);
    }
    return entry;
  }

  private record(entry: DeliveryLogEntry): void {
    const log = this.options.log;
    log.push(entry);
    trimLog(log, this.options.logLimit);
    const outcome = entry.status !== undefined ? String(entry.status) : `failed (${entry.error})`;
    const next = entry.retryInMs !== undefined ? `, next in ${formatWait(entry.retryInMs)}` : '';
    this.options.logger?.(
      `webhook ${entry.event}${entry.code ? ` ${entry.code}` : ''} -> ${entry.url}: ${outcome}, attempt ${entry.attempt}${next}`,
    );
    this.options.onDelivery?.(entry);
  }
}

/**
 * Whether another attempt may succeed: no answer (refused, reset, timed out), or a status
 * `isRetryableStatus` names (5xx, 408, 425, 429: the rule `listen --forward-to` follows too).
 */
export function worthRetrying(entry: Pick<DeliveryLogEntry, 'status'>): boolean {
  return entry.status === undefined || isRetryableStatus(entry.status);
}

/** The retries, or a RangeError saying what is accepted. */
export function checkRetries(retries: number): number {
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_DELIVERY_RETRIES)
    throw new RangeError(
      `delivery retries must be a whole number from 0 to ${MAX_DELIVERY_RETRIES}, not ${retries}`,
    );
  return retries;
}

/** The back-off, or a RangeError saying what is accepted. */
export function checkBackoff(ms: number): number {
  if (!(Number.isFinite(ms) && ms >= 0))
    throw new RangeError(`delivery back-off must be a number >= 0, not ${ms}`);
  return ms;
}

/** `500 ms`, `2 s`. */
function formatWait(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}
