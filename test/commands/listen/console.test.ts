/**
 * What `listen` prints when its stdout's reader lags: writes go out one at a time and in order,
 * what waits is bounded, and lines past the bound are counted in a note instead of printed.
 */
import { describe, expect, it } from 'vitest';
import { ListenConsole } from '../../../src/commands/listen/console.js';
import { createTestIO } from '../../../src/io/memory.js';
import type { AcceptedEvent } from '../../../src/webhooks/receiver.js';

function event(id: number): AcceptedEvent {
  const body = { id, code: `SO-2026-${String(id).padStart(6, '0')}` };
  const receivedAt = '2026-11-22T10:00:00.000Z';
  return {
    receivedAt,
    event: 'sales_order_validated',
    headers: {},
    body,
    line: JSON.stringify({ receivedAt, event: 'sales_order_validated', headers: {}, body }),
    raw: Buffer.from(JSON.stringify(body)),
  };
}

/** Test IO whose stdout writes wait until `release()`; `writes` holds each outAsync call's text. */
function slowIO() {
  const io = createTestIO();
  const writes: string[] = [];
  const waiting: (() => void)[] = [];
  io.outAsync = (text: string) => {
    writes.push(text);
    return new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = async () => {
    while (waiting.length > 0) {
      waiting.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { io, writes, release };
}

describe('ListenConsole and a stdout that lags', () => {
  it('has one write in flight at a time and keeps the order of the events', async () => {
    const { io, writes, release } = slowIO();
    const out = new ListenConsole(io, true);
    out.event(event(1));
    out.flush();
    out.event(event(2));
    out.flush();
    out.event(event(3));
    out.flush();
    expect(writes).toHaveLength(1);
    const drained = out.drain();
    await release();
    await drained;
    expect(writes).toHaveLength(2);
    const ids = writes
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).body.id);
    expect(ids).toEqual([1, 2, 3]);
    expect(io.stderrText()).toBe('');
  });

  it('counts the lines past its bound instead of keeping them, and says so on stderr', async () => {
    const { io, writes, release } = slowIO();
    const lineLength = event(1).line.length + 1;
    const out = new ListenConsole(io, true, lineLength * 3);
    for (let id = 1; id <= 10; id++) {
      out.event(event(id));
      out.flush();
    }
    // The first is being written, three wait, six did not fit.
    const drained = out.drain();
    await release();
    await drained;
    const ids = writes
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).body.id);
    expect(ids).toEqual([1, 2, 3, 4]);
    expect(io.stderrText()).toContain(
      'note: stdout was not read fast enough: 6 lines of events not printed (the events were answered, logged and forwarded as usual)',
    );
  });

  it('does not wait for ever at the end when stdout is never read', async () => {
    const { io, writes } = slowIO();
    const out = new ListenConsole(io, true);
    out.event(event(1));
    out.flush();
    out.event(event(2));
    const started = Date.now();
    await out.drain(50);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(writes).toHaveLength(1);
    expect(io.stderrText()).toContain('note: stdout is not being read: the last events were not all printed');
  });
});
