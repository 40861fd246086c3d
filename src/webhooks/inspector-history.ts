/**
 * What `listen --inspect` remembers: the last requests (accepted or refused), each with its
 * forwarding attempts, in memory and bounded. At most MAX_REQUESTS requests and MAX_HISTORY_BYTES
 * of recorded lines are kept (the oldest go first); a body is shown to the page up to
 * MAX_SHOWN_BODY_BYTES (replay always sends it whole). History starts with the last events of the
 * `--log` file, read from its end.
 */
import { open } from 'node:fs/promises';
import type { Redactor } from '../core/redact.js';
import { codeOf, type EventRecord, parseEventLine } from './event-record.js';
import type { ForwardAttempt } from './forward-sender.js';
import type { AcceptedEvent, Rejection } from './receiver.js';

export const MAX_REQUESTS = 1000;
export const MAX_HISTORY_BYTES = 64 * 1024 * 1024;
export const MAX_SHOWN_BODY_BYTES = 256 * 1024;
/** Attempts kept per request (the first, then the latest: an application down for an hour retries a lot). */
const MAX_ATTEMPTS_KEPT = 20;
const MAX_ANSWER_CHARS = 2048;
/** Where the log's history is read from: its last bytes at most. */
const MAX_LOG_TAIL_BYTES = 32 * 1024 * 1024;

/** One forwarding attempt as the page shows it. */
export interface AttemptView {
  attempt: number;
  outcome: ForwardAttempt['outcome'];
  status: number | null;
  error: string | null;
  /** The start of the application's answer. */
  answer: string;
  durationMs: number | null;
  at: string;
}

/** One request as the page receives it (`event: request`). */
export interface RequestView {
  seq: number;
  receivedAt: string;
  /** `live` for this run, `log` for the history read from --log. */
  source: 'live' | 'log';
  status: number;
  /** Why it was refused, as the console prints it. */
  reason: string | null;
  method: string | null;
  path: string | null;
  event: string | null;
  code: string | null;
  /** Header names in lower case; the key and other secrets are `[redacted]`. */
  headers: Record<string, string>;
  /** The body as text (secrets masked), cut at MAX_SHOWN_BODY_BYTES; null when not read. */
  body: string | null;
  bodyBytes: number;
  bodyTruncated: boolean;
  /** Whether Replay can send it (accepted events only). */
  replayable: boolean;
  forwards: AttemptView[];
  /** Attempts left out of `forwards` (between the first and the latest kept). */
  forwardsOmitted: number;
}

export interface InspectedRequest {
  seq: number;
  source: 'live' | 'log';
  receivedAt: string;
  status: number;
  /** X-WEBHOOK-EVENT (null without one). */
  event: string | null;
  /** An accepted event's line (what replay reads); undefined for a refused request. */
  line?: string;
  rejection?: Rejection;
  forwards: AttemptView[];
  forwardsOmitted: number;
  /** Bytes counted against MAX_HISTORY_BYTES. */
  size: number;
}

export class InspectorHistory {
  private readonly entries: InspectedRequest[] = [];
  private bytes = 0;
  private nextSeq = 1;
  /** Queue seq → request, for the forwarding attempts of this run's events. */
  private readonly byForwardSeq = new Map<string, InspectedRequest>();
  /** Attempts reported before their event's `accepted` (the log's write can end after the first attempt). */
  private readonly early = new Map<string, AttemptView[]>();

  constructor(
    private readonly redactor: Redactor,
    private readonly limits = { requests: MAX_REQUESTS, bytes: MAX_HISTORY_BYTES },
  ) {}

  get size(): number {
    return this.entries.length;
  }

  /** Requests in arrival order. */
  all(): readonly InspectedRequest[] {
    return this.entries;
  }

  get(seq: number): InspectedRequest | undefined {
    const first = this.entries[0];
    if (first === undefined) return undefined;
    return this.entries[seq - first.seq];
  }

  addLogged(line: string): InspectedRequest | undefined {
    const record = parseEventLine(line);
    if (record === undefined) return undefined;
    return this.push({
      source: 'log',
      receivedAt: record.receivedAt,
      status: 200,
      event: record.event,
      line,
    });
  }

  addAccepted(event: AcceptedEvent): InspectedRequest {
    const entry = this.push({
      source: 'live',
      receivedAt: event.receivedAt,
      status: 200,
      event: event.event,
      line: event.line,
    });
    if (event.forwardSeq !== undefined) {
      const key = queueKey(event.forwardTarget, event.forwardSeq);
      this.byForwardSeq.set(key, entry);
      const early = this.early.get(key);
      if (early) {
        this.early.delete(key);
        for (const attempt of early) this.keepAttempt(entry, attempt);
      }
    }
    return entry;
  }

  addRejected(rejection: Rejection): InspectedRequest {
    return this.push({
      source: 'live',
      receivedAt: rejection.receivedAt,
      status: rejection.status,
      event: rejection.event ?? null,
      rejection,
    });
  }

  /** Adds a forwarding attempt to its request; the request, or undefined while it is not known yet. */
  addAttempt(report: ForwardAttempt): { entry: InspectedRequest; attempt: AttemptView } | undefined {
    const attempt: AttemptView = {
      attempt: report.attempt,
      outcome: report.outcome,
      status: report.status ?? null,
      error: report.error ?? null,
      answer: this.redactor.redactBody((report.responseText ?? '').slice(0, MAX_ANSWER_CHARS)),
      durationMs: report.durationMs ?? null,
      at: new Date().toISOString(),
    };
    const key = queueKey(report.target, report.seq);
    const entry = this.byForwardSeq.get(key);
    if (entry === undefined) {
      // An event resumed from an earlier run has no request here; this run's come within a moment.
      const list = this.early.get(key) ?? [];
      if (list.length < MAX_ATTEMPTS_KEPT) list.push(attempt);
      this.early.set(key, list);
      if (this.early.size > 100) this.early.delete(this.early.keys().next().value!);
      return undefined;
    }
    this.keepAttempt(entry, attempt);
    return { entry, attempt };
  }

  /** The recorded event of an accepted request (what replay sends), parsed when asked: memory holds only the line. */
  recordOf(entry: InspectedRequest): EventRecord | undefined {
    return entry.line === undefined ? undefined : parseEventLine(entry.line);
  }

  /** The request as the page shows it: secrets masked, the body cut. */
  view(entry: InspectedRequest): RequestView {
    const r = this.redactor;
    const base = {
      seq: entry.seq,
      receivedAt: entry.receivedAt,
      source: entry.source,
      status: entry.status,
      forwards: entry.forwards,
      forwardsOmitted: entry.forwardsOmitted,
    };
    const record = this.recordOf(entry);
    if (record) {
      const text = bodyTextOf(record);
      const shown = cut(text, MAX_SHOWN_BODY_BYTES);
      const code = codeOf(record.body);
      return {
        ...base,
        reason: null,
        method: 'POST',
        path: null,
        event: record.event,
        code: code ?? null,
        headers: r.redactHeaders(record.headers) as Record<string, string>,
        body: r.redact(shown),
        bodyBytes: Buffer.byteLength(text),
        bodyTruncated: shown.length < text.length,
        replayable: true,
      };
    }
    const rejection = entry.rejection!;
    const body = rejection.body ?? null;
    const shown = body === null ? null : cut(body, MAX_SHOWN_BODY_BYTES);
    return {
      ...base,
      reason: r.redact(rejection.reason),
      method: rejection.method ?? null,
      path: rejection.path ?? null,
      event: rejection.event ?? null,
      code: null,
      headers: r.redactHeaders(rejection.headers ?? {}) as Record<string, string>,
      body: shown === null ? null : r.redact(shown),
      bodyBytes: body === null ? 0 : Buffer.byteLength(body),
      bodyTruncated: shown !== null && body !== null && shown.length < body.length,
      replayable: false,
    };
  }

  private push(
    fields: Omit<InspectedRequest, 'seq' | 'forwards' | 'forwardsOmitted' | 'size'>,
  ): InspectedRequest {
    const size =
      (fields.line?.length ?? 0) + (fields.rejection?.body?.length ?? 0) + (fields.rejection ? 512 : 0);
    const entry: InspectedRequest = {
      ...fields,
      seq: this.nextSeq++,
      forwards: [],
      forwardsOmitted: 0,
      size,
    };
    this.entries.push(entry);
    this.bytes += size;
    while (
      this.entries.length > 1 &&
      (this.entries.length > this.limits.requests || this.bytes > this.limits.bytes)
    ) {
      const old = this.entries.shift()!;
      this.bytes -= old.size;
    }
    if (this.byForwardSeq.size > this.limits.requests) {
      const oldest = this.entries[0]!.seq;
      for (const [queueSeq, e] of this.byForwardSeq) if (e.seq < oldest) this.byForwardSeq.delete(queueSeq);
    }
    return entry;
  }

  private keepAttempt(entry: InspectedRequest, attempt: AttemptView): void {
    entry.forwards.push(attempt);
    if (entry.forwards.length > MAX_ATTEMPTS_KEPT) {
      // Keep the first attempt and the latest ones.
      entry.forwards.splice(1, 1);
      entry.forwardsOmitted++;
    }
  }
}

/** The body's text as received (the record's exact bytes, decoded). */
function bodyTextOf(record: EventRecord): string {
  if (record.rawBody !== undefined) return record.rawBody;
  if (record.bodyText !== undefined) return record.bodyText;
  if (record.rawBodyBase64 !== undefined) return Buffer.from(record.rawBodyBase64, 'base64').toString('utf8');
  return JSON.stringify(record.body);
}

/** At most `maxBytes` of UTF-8 (counted as characters: close enough for a display limit). */
function cut(text: string, maxBytes: number): string {
  return text.length > maxBytes ? text.slice(0, maxBytes) : text;
}

/**
 * The last `maxEvents` event lines of a `--log` file, read from its end (at most its last
 * MAX_LOG_TAIL_BYTES); none when the file does not exist yet.
 */
export async function readLogTail(path: string, maxEvents: number = MAX_REQUESTS): Promise<string[]> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return [];
    const size = stat.size;
    const start = Math.max(0, size - MAX_LOG_TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    let text = buffer.toString('utf8');
    // A tail that starts mid-line drops that first part line.
    if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    const events: string[] = [];
    for (let i = lines.length - 1; i >= 0 && events.length < maxEvents; i--) {
      const line = lines[i]!.trim();
      if (parseEventLine(line) !== undefined) events.push(line);
    }
    return events.reverse();
  } finally {
    await handle.close();
  }
}

/** An entry of a forwarding queue: each --forward-to target numbers its own from 1. */
function queueKey(target: string | undefined, seq: number): string {
  return `${target ?? ''} ${seq}`;
}
