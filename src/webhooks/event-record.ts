/**
 * One received notification as a line of JSON: the form `listen --json` prints, `listen --log`
 * appends, the forwarding queue keeps and `webhooks replay` reads. One serialization serves all
 * four, so they can never disagree.
 *
 * `{"receivedAt": ISO time, "event": X-WEBHOOK-EVENT or null, "headers": {...}, "body": JSON}`
 *
 * The key is never in it: `x-webhook-key` is written `[redacted]`. The original body bytes are
 * kept exactly. A body that is valid UTF-8 without line breaks (what services send) is written
 * verbatim as the value of `body`, the last field of the line, so that reading it back is a
 * matter of cutting the line after `,"body":` (`parseEventLine`). Any other body is written as `JSON.stringify(body)` followed by its exact
 * bytes in `rawBody` (UTF-8 text) or `rawBodyBase64` (bytes that are not valid UTF-8).
 */
import { isUtf8 } from 'node:buffer';
import { REDACTED } from '../core/redact.js';
import { WEBHOOK_KEY_HEADER } from './verify.js';

export interface EventRecord {
  receivedAt: string;
  event: string | null;
  headers: Record<string, string>;
  body: unknown;
  rawBody?: string;
  rawBodyBase64?: string;
  /** The body's text as it stands in the line (verbatim bodies), set by `parseEventLine`. */
  bodyText?: string;
}

const BODY_KEY = ',"body":';

/**
 * The headers as recorded, from `req.rawHeaders`: lower-case names, a repeated header's values
 * joined with `, `, the key redacted.
 */
export function recordedHeaders(rawHeaders: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = name === WEBHOOK_KEY_HEADER ? REDACTED : rawHeaders[i + 1]!;
    const previous = out[name];
    out[name] = previous === undefined || name === WEBHOOK_KEY_HEADER ? value : `${previous}, ${value}`;
  }
  return out;
}

/**
 * Serializes an accepted notification to one line (no trailing newline). `bodyText` is the body
 * decoded as UTF-8 and `body` its parsed value (so it is valid JSON); the receiver has both.
 */
export function formatEventLine(
  receivedAt: string,
  event: string | null,
  headers: Record<string, string>,
  raw: Buffer,
  bodyText: string,
  body: unknown,
): string {
  const head = `{"receivedAt":${JSON.stringify(receivedAt)},"event":${JSON.stringify(event)},"headers":${JSON.stringify(headers)}${BODY_KEY}`;
  if (isVerbatimBody(raw)) return `${head}${bodyText}}`;
  const utf8 = isUtf8(raw);
  const canonical = JSON.stringify(body);
  if (!utf8) return `${head}${canonical},"rawBodyBase64":${JSON.stringify(raw.toString('base64'))}}`;
  return `${head}${canonical},"rawBody":${JSON.stringify(bodyText)}}`;
}

/** A body the line holds as it came (valid UTF-8 without line breaks), closed by `}`. */
function isVerbatimBody(raw: Buffer): boolean {
  return raw.indexOf(0x0a) === -1 && raw.indexOf(0x0d) === -1 && isUtf8(raw);
}

/** Reads one line of a log or queue file; undefined when it is not a recorded event. */
export function parseEventLine(line: string): EventRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const record = parseEventRecord(value);
  if (record === undefined || record.rawBody !== undefined || record.rawBodyBase64 !== undefined)
    return record;
  // A verbatim body is the end of the line; take it only if it is the same value (a line
  // rewritten by another tool, with its fields in another order, falls back to JSON.stringify).
  const trimmed = line.trimEnd();
  const at = trimmed.indexOf(BODY_KEY);
  if (at !== -1 && trimmed.endsWith('}')) {
    const text = trimmed.slice(at + BODY_KEY.length, -1);
    try {
      if (JSON.stringify(JSON.parse(text)) === JSON.stringify(record.body)) record.bodyText = text;
    } catch {
      // Not the body after all.
    }
  }
  return record;
}

/** Reads a line written by `formatEventLine` (or a queue entry, which adds fields); undefined if it is not one. */
export function parseEventRecord(value: unknown): EventRecord | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.receivedAt !== 'string' || !('body' in record)) return undefined;
  if (record.event !== null && typeof record.event !== 'string') return undefined;
  const headers = record.headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) return undefined;
  const out: EventRecord = {
    receivedAt: record.receivedAt,
    event: record.event as string | null,
    headers: Object.fromEntries(
      Object.entries(headers as Record<string, unknown>).filter(
        (e): e is [string, string] => typeof e[1] === 'string',
      ),
    ),
    body: record.body,
  };
  if (typeof record.rawBody === 'string') out.rawBody = record.rawBody;
  if (typeof record.rawBodyBase64 === 'string') out.rawBodyBase64 = record.rawBodyBase64;
  return out;
}

/** The body bytes exactly as they were received. */
export function originalBodyBytes(record: EventRecord): Buffer {
  if (record.rawBodyBase64 !== undefined) return Buffer.from(record.rawBodyBase64, 'base64');
  if (record.rawBody !== undefined) return Buffer.from(record.rawBody, 'utf8');
  if (record.bodyText !== undefined) return Buffer.from(record.bodyText, 'utf8');
  return Buffer.from(JSON.stringify(record.body), 'utf8');
}

/** Headers to send again: as recorded, without the redacted key (the sender adds the real one). */
export function replayHeaders(record: EventRecord): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(record.headers))
    if (name !== WEBHOOK_KEY_HEADER) out[name] = value;
  return out;
}

/** The order code (or any `code`) of a body, when it has one. */
export function codeOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const code = (body as Record<string, unknown>).code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

/** The `id` of a body, when it has one. */
export function idOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const id = (body as Record<string, unknown>).id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
}

/** A few words about a body: id, the client's references, customer, item count, status. */
export function summarizeBody(body: unknown): string {
  if (body === null || typeof body !== 'object') return `body ${truncate(JSON.stringify(body), 60)}`;
  if (Array.isArray(body)) return `a list of ${body.length}`;
  const b = body as Record<string, unknown>;
  const parts: string[] = [];
  const id = idOf(b);
  if (id !== undefined) parts.push(`id ${id}`);
  if (typeof b.externalId === 'string') parts.push(`externalId ${truncate(b.externalId, 40)}`);
  if (typeof b.externalReference === 'string') parts.push(`ref ${truncate(b.externalReference, 40)}`);
  const customer = b.customer as { name?: unknown } | null | undefined;
  if (customer && typeof customer.name === 'string') parts.push(truncate(customer.name, 40));
  if (Array.isArray(b.items)) parts.push(`${b.items.length} item${b.items.length === 1 ? '' : 's'}`);
  if (typeof b.status === 'string') parts.push(b.status);
  if (parts.length > 0) return parts.join(' · ');
  const keys = Object.keys(b);
  return keys.length === 0 ? 'empty object' : `fields ${truncate(keys.slice(0, 6).join(', '), 60)}`;
}

/**
 * The entity path `--fetch` reads for an event: the event name without its last word is the
 * entity (`sales_order_validated` → orders, `contact_updated` → contacts), the body's `id` its id.
 * The interface names only `sales_order_validated`; the rule for others is a guess, stated in help.
 */
export function entityOf(event: string | null): string | undefined {
  if (!event) return undefined;
  const words = event.toLowerCase().split('_').filter(Boolean);
  if (words.length < 2) return undefined;
  words.pop();
  if (words[0] === 'sales' && words.length > 1) words.shift();
  const noun = words.join('_');
  return noun.endsWith('s') ? noun : `${noun}s`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
