/** The inspector's memory: bounded, in arrival order, attempts tied to their request, the log's tail. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/core/redact.js';
import { formatEventLine } from '../../src/webhooks/event-record.js';
import type { ForwardAttempt } from '../../src/webhooks/forward-sender.js';
import { InspectorHistory, readLogTail } from '../../src/webhooks/inspector-history.js';
import type { AcceptedEvent } from '../../src/webhooks/receiver.js';
import { tempDir } from '../support/cli.js';

const APP = 'http://127.0.0.1:3000/webhooks';

function accepted(n: number, forwardSeq?: number, target = APP): AcceptedEvent {
  const text = JSON.stringify({ id: n, code: `SO-${n}` });
  const headers = { 'x-webhook-event': 'sales_order_validated' };
  const receivedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
  const raw = Buffer.from(text);
  return {
    receivedAt,
    event: 'sales_order_validated',
    headers,
    body: JSON.parse(text),
    line: formatEventLine(receivedAt, 'sales_order_validated', headers, raw, text, JSON.parse(text)),
    raw,
    forwardSeq,
    forwardTarget: forwardSeq === undefined ? undefined : target,
  };
}

function attempt(seq: number, n: number, target = APP): ForwardAttempt {
  return {
    seq,
    target,
    event: 'sales_order_validated',
    code: undefined,
    attempt: n,
    outcome: 'retrying',
    status: 503,
  };
}

describe('InspectorHistory', () => {
  it('keeps the last requests within its bounds, numbered in arrival order', () => {
    const history = new InspectorHistory(new Redactor(), { requests: 3, bytes: 1_000_000 });
    for (let n = 1; n <= 5; n++) history.addAccepted(accepted(n));
    expect(history.all().map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(history.get(2)).toBeUndefined();
    expect(history.get(4)?.seq).toBe(4);

    const small = new InspectorHistory(new Redactor(), {
      requests: 100,
      bytes: 2.5 * accepted(1).line.length,
    });
    for (let n = 1; n <= 5; n++) small.addAccepted(accepted(n));
    expect(small.all().map((e) => e.seq)).toEqual([4, 5]);
  });

  it("ties forwarding attempts to their request, also those reported before the request's own event", () => {
    const history = new InspectorHistory(new Redactor());
    expect(history.addAttempt(attempt(7, 1))).toBeUndefined();
    const entry = history.addAccepted(accepted(1, 7));
    expect(entry.forwards.map((a) => a.attempt)).toEqual([1]);
    expect(history.addAttempt(attempt(7, 2))?.entry.seq).toBe(entry.seq);
    for (let n = 3; n <= 30; n++) history.addAttempt(attempt(7, n));
    // The first attempt and the latest ones.
    expect(entry.forwards.map((a) => a.attempt)).toEqual([
      1,
      ...Array.from({ length: 19 }, (_, i) => 12 + i),
    ]);
    expect(entry.forwardsOmitted).toBe(10);
  });

  it('ties an attempt to the request of its own target when two --forward-to queues use the same number', () => {
    const history = new InspectorHistory(new Redactor());
    const orders = history.addAccepted(accepted(1, 1, 'http://127.0.0.1:4000/orders'));
    const others = history.addAccepted(accepted(2, 1));
    history.addAttempt(attempt(1, 1, 'http://127.0.0.1:4000/orders'));
    history.addAttempt(attempt(1, 1));
    history.addAttempt(attempt(1, 2));
    expect(orders.forwards.map((a) => a.attempt)).toEqual([1]);
    expect(others.forwards.map((a) => a.attempt)).toEqual([1, 2]);
  });

  it('masks registered secrets in what the page is shown', () => {
    const redactor = new Redactor();
    redactor.addSecret('whk_super_secret_key_value');
    const history = new InspectorHistory(redactor);
    const event = accepted(1);
    const text = '{"note":"whk_super_secret_key_value"}';
    const line = formatEventLine(
      event.receivedAt,
      null,
      { authorization: 'Bearer x' },
      Buffer.from(text),
      text,
      {},
    );
    const view = history.view(history.addAccepted({ ...event, line }));
    expect(view.body).toBe('{"note":"[redacted]"}');
    expect(view.headers.authorization).toBe('[redacted]');
  });
});

describe('readLogTail', () => {
  it('reads the last events of a log, skipping lines that are not events; none for a missing file', async () => {
    const dir = tempDir();
    const file = join(dir, 'events.ndjson');
    const lines = Array.from({ length: 10 }, (_, i) => accepted(i + 1).line);
    writeFileSync(
      file,
      `${lines.slice(0, 5).join('\n')}\nnot an event\n${lines.slice(5).join('\n')}\n{"torn`,
    );
    const tail = await readLogTail(file, 4);
    expect(tail).toEqual(lines.slice(6));
    expect(await readLogTail(join(dir, 'missing.ndjson'))).toEqual([]);
  });
});
