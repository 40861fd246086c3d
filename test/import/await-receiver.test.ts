// `--await-from <listen --log>`: the log is read from its start and followed; a line too long to be
// a notification (a damaged log) is passed over without being held, and what follows still counts.
// A remote service with no way back is refused before anything is sent.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReachable, startReceiving } from '../../src/import/await-receiver.js';
import { ValidationWaiter } from '../../src/import/await-validation.js';
import { formatEventLine } from '../../src/webhooks/event-record.js';
import { tempDir } from '../support/cli.js';

function eventLine(code: string): string {
  const body = { code, id: 1 };
  const text = JSON.stringify(body);
  const headers = { 'x-webhook-event': 'sales_order_validated' };
  return `${formatEventLine('2026-11-28T10:00:00.000Z', 'sales_order_validated', headers, Buffer.from(text), text, body)}\n`;
}

describe('--await-from', () => {
  it('follows the log past a damaged 20 MiB line, and finds the notifications before and after it', async () => {
    const log = join(tempDir('ordercli-await-from-'), 'events.ndjson');
    writeFileSync(log, `${eventLine('SO-1')}${'x'.repeat(20 << 20)}\n`);
    const waiter = new ValidationWaiter(60_000, () => undefined);
    const options = { from: log, signal: new AbortController().signal, env: {} };
    const receiving = await startReceiving(options as Parameters<typeof startReceiving>[0], waiter);
    waiter.expect({ key: 'A', code: 'SO-1', since: performance.now() });
    waiter.expect({ key: 'B', code: 'SO-2', since: performance.now() });
    appendFileSync(log, eventLine('SO-2'));
    waiter.done();
    await waiter.finished;
    await receiving.close();
    expect(waiter.counts).toEqual({ validated: 2, notValidated: 0 });
  });

  it('reads a character that the end of a 1 MiB read cuts in two as one character', async () => {
    const log = join(tempDir('ordercli-await-from-'), 'events.ndjson');
    const line = Buffer.from(eventLine('SO-É'));
    // A first line (no notification) as long as puts the two bytes of the code's É astride 1 MiB.
    const padding = (1 << 20) - 1 - line.indexOf(Buffer.from('É'));
    writeFileSync(log, Buffer.concat([Buffer.from(`${'x'.repeat(padding - 1)}\n`), line]));
    const waiter = new ValidationWaiter(60_000, () => undefined);
    const options = { from: log, signal: new AbortController().signal, env: {} };
    const receiving = await startReceiving(options as Parameters<typeof startReceiving>[0], waiter);
    // The log was read when receiving started: the notification waits for its order.
    waiter.expect({ key: 'A', code: 'SO-É', since: performance.now() });
    await receiving.close();
    expect(waiter.outcome('A')).toMatchObject({ validated: true });
  });

  it('a log that does not exist is exit 2, naming listen --log', async () => {
    const waiter = new ValidationWaiter(1_000, () => undefined);
    const options = {
      from: join(tempDir(), 'missing.ndjson'),
      signal: new AbortController().signal,
      env: {},
    };
    await expect(
      startReceiving(options as Parameters<typeof startReceiving>[0], waiter),
    ).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('ordercli listen --log'),
    });
  });
});

describe('checkReachable', () => {
  it('a service on this machine, or a way back, passes; a remote service without one is exit 2', () => {
    expect(() => checkReachable('http://127.0.0.1:4780', {})).not.toThrow();
    expect(() => checkReachable('https://orders.example.com', { tunnel: 'cloudflared' })).not.toThrow();
    expect(() => checkReachable('https://orders.example.com', {})).toThrow(/--tunnel cloudflared/);
  });
});
