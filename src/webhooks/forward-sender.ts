/**
 * Sends one queued event to the local application until it takes it or refuses it for good.
 *
 * Each attempt goes through `sendRecordedEvent`: the original headers and body bytes, the key
 * added back, so the application sees exactly what the service sends. A 2xx is `delivered`. A
 * connection error, a time-out (`--forward-timeout`, default 10 s), 5xx, 408, 425 or 429
 * (`isRetryableStatus`) is retried with exponential back-off and jitter (`Retry-After` honoured,
 * up to a minute), for as long as it takes: the application is expected to come back. Any other
 * answer (3xx, 4xx) is `rejected`: the same bytes would be refused again and would block every
 * later event behind them; the event stays in the file and the `--log` for `webhooks replay` once
 * the application is fixed.
 */
import type { Dispatcher } from 'undici';
import { Agent } from '../api/transport.js';
import { formatDuration } from '../config/duration.js';
import { describeNetworkError, isTimeoutError } from '../core/network-error.js';
import { backOffDelay, parseRetryAfter, sleep } from '../core/retry.js';
import { codeOf, type EventRecord } from './event-record.js';
import { isRetryableStatus } from './notify.js';
import { sendRecordedEvent } from './send-recorded.js';

export type ForwardOutcome = 'delivered' | 'rejected' | 'retrying';

export interface ForwardAttempt {
  /** The entry's number in the queue of `target`. */
  seq: number;
  /** Where it is forwarded (`--forward-to`). */
  target: string;
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

export interface ForwardSenderOptions {
  /** Where entries are forwarded. */
  target: string;
  /** Added back as `X-WEBHOOK-KEY` at each sending; undefined sends no key (`--no-verify`). */
  key: string | undefined;
  /** This listen run's id, added to the hop header of each request (`self-forward.ts`). */
  forwardedBy?: string;
  /** Per-attempt time-out, `listen --forward-timeout` (default 10 s). */
  timeoutMs?: number;
  /** First retry delay, doubled per attempt with jitter (default 250 ms). */
  retryBaseMs?: number;
  /** Longest retry delay (default 5 s: a local application that comes back is served quickly). */
  maxRetryDelayMs?: number;
  /** Told about every attempt, for the console. */
  onAttempt?: (report: ForwardAttempt) => void;
}

/** How long an attempt waits for the application's answer unless `--forward-timeout` says otherwise. */
export const DEFAULT_FORWARD_TIMEOUT_MS = 10_000;
const RESPONSE_PREVIEW_BYTES = 4096;
/** The longest `Retry-After` obeyed, so that one answer cannot stall the queue. */
const MAX_RETRY_AFTER_MS = 60_000;

export class ForwardSender {
  private readonly agent: Dispatcher = new Agent({ keepAliveTimeout: 2_000 });

  constructor(private readonly options: ForwardSenderOptions) {}

  /** The key to add back from now on (`listen --subscribe` learns it after the queue is open). */
  useKey(key: string): void {
    this.options.key = key;
  }

  /**
   * Attempts one event until it is delivered or rejected (the last attempt's report), or until
   * `stop` aborts (undefined: the event stays queued).
   */
  async deliver(seq: number, record: EventRecord, stop: AbortSignal): Promise<ForwardAttempt | undefined> {
    const code = codeOf(record.body);
    for (let attempt = 1; !stop.aborted; attempt++) {
      const report: ForwardAttempt = {
        seq,
        target: this.options.target,
        event: record.event,
        code,
        attempt,
        outcome: 'retrying',
      };
      let retryAfterMs: number | undefined;
      try {
        const result = await sendRecordedEvent(record, {
          url: this.options.target,
          key: this.options.key,
          forwardedBy: this.options.forwardedBy,
          timeoutMs: this.timeoutMs,
          dispatcher: this.agent,
          maxResponseBytes: RESPONSE_PREVIEW_BYTES,
        });
        report.status = result.status;
        report.durationMs = result.durationMs;
        report.responseText = result.bodyText;
        if (result.status >= 200 && result.status < 300) report.outcome = 'delivered';
        else if (!isRetryableStatus(result.status)) report.outcome = 'rejected';
        else retryAfterMs = parseRetryAfter(result.headers['retry-after']);
      } catch (error) {
        // A slow application is told apart from a down one: the attempt's time-out and how to change it.
        report.error = isTimeoutError(error)
          ? `no answer within ${formatDuration(this.timeoutMs)} (--forward-timeout)`
          : describeNetworkError(error);
      }
      if (report.outcome === 'retrying') {
        const delay =
          retryAfterMs === undefined ? this.backOff(attempt) : Math.min(MAX_RETRY_AFTER_MS, retryAfterMs);
        report.retryInMs = Math.round(delay);
      }
      this.options.onAttempt?.(report);
      if (report.outcome !== 'retrying') return report;
      await sleep(report.retryInMs!, stop).catch(() => undefined);
    }
    return undefined;
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
  }

  /** Closes the connections to the application. */
  close(): Promise<void> {
    return this.agent.close().catch(() => undefined);
  }

  private backOff(attempt: number): number {
    return backOffDelay(attempt, {
      baseMs: this.options.retryBaseMs ?? 250,
      maxMs: this.options.maxRetryDelayMs ?? 5_000,
    });
  }
}
