/** The one line format of log, `--json`, queue and replay: what goes in comes back byte for byte. */
import { describe, expect, it } from 'vitest';
import {
  formatEventLine,
  originalBodyBytes,
  parseEventLine,
  recordedHeaders,
  replayHeaders,
} from '../../src/webhooks/event-record.js';

const RAW_HEADERS = [
  'Content-Type',
  'application/json',
  'X-WEBHOOK-EVENT',
  'sales_order_validated',
  'X-Webhook-Key',
  'whk_secret_value_0123456789',
  'x-custom',
  'a',
  'X-Custom',
  'b',
];

function lineOf(raw: Buffer): string {
  const text = raw.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { replaced: true };
  }
  return formatEventLine(
    '2026-01-01T00:00:00.000Z',
    'sales_order_validated',
    recordedHeaders(RAW_HEADERS),
    raw,
    text,
    body,
  );
}

describe('recordedHeaders', () => {
  it('lower-cases names, joins a repeated header and redacts the key', () => {
    expect(recordedHeaders(RAW_HEADERS)).toEqual({
      'content-type': 'application/json',
      'x-webhook-event': 'sales_order_validated',
      'x-webhook-key': '[redacted]',
      'x-custom': 'a, b',
    });
    expect(recordedHeaders([...RAW_HEADERS, 'x-webhook-key', 'second'])['x-webhook-key']).toBe('[redacted]');
  });
});

describe('formatEventLine and parseEventLine', () => {
  it('keeps a one-line UTF-8 body verbatim as the end of the line', () => {
    const raw = Buffer.from('{ "id": 1, "code": "SO-1", "note": "validée" }');
    const line = lineOf(raw);
    expect(line.endsWith(`,"body":${raw.toString('utf8')}}`)).toBe(true);
    expect(line).not.toContain('whk_secret_value');
    const record = parseEventLine(line)!;
    expect(record.event).toBe('sales_order_validated');
    expect(record.body).toEqual({ id: 1, code: 'SO-1', note: 'validée' });
    expect(originalBodyBytes(record)).toEqual(raw);
    expect(replayHeaders(record)).not.toHaveProperty('x-webhook-key');
  });

  it('keeps a body with line breaks as rawBody, and bytes that are not UTF-8 as rawBodyBase64', () => {
    const multiline = Buffer.from('{\n  "id": 2,\r\n  "amount": 1.50\n}');
    const lineA = lineOf(multiline);
    expect(lineA).not.toMatch(/[\r\n]/);
    expect(originalBodyBytes(parseEventLine(lineA)!)).toEqual(multiline);

    const latin1 = Buffer.concat([Buffer.from('{"note":"'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const lineB = lineOf(latin1);
    expect(JSON.parse(lineB).rawBodyBase64).toBe(latin1.toString('base64'));
    expect(originalBodyBytes(parseEventLine(lineB)!)).toEqual(latin1);
  });

  it('reads a line whose fields were reordered by another tool, and refuses what is not an event', () => {
    const value = JSON.parse(lineOf(Buffer.from('{"id":3}')));
    const reordered = JSON.stringify({
      body: value.body,
      headers: value.headers,
      event: value.event,
      receivedAt: value.receivedAt,
    });
    expect(originalBodyBytes(parseEventLine(reordered)!).toString()).toBe('{"id":3}');
    expect(parseEventLine('not json')).toBeUndefined();
    expect(parseEventLine('{"receivedAt":"x"}')).toBeUndefined();
  });
});
