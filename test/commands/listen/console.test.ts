/**
 * What `listen` prints when its stdout's reader lags: event lines past a bound of bytes waiting
 * are dropped, and one note on stderr says how many, once the reader catches up or at the end.
 */
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ListenConsole } from '../../../src/commands/listen/console.js';
import { createTestIO } from '../../../src/io/memory.js';
import { NodeStreamsIO } from '../../../src/io/streams.js';
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

/** IO whose stdout takes nothing until `release()`, as a pipe nobody reads; stderr is kept. */
function stalledIO() {
  const written: string[] = [];
  const held: (() => void)[] = [];
  const stdout = new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      written.push(chunk.toString());
      held.push(callback);
    },
  });
  const stderr = new PassThrough();
  let errText = '';
  stderr.on('data', (chunk: Buffer) => {
    errText += chunk.toString();
  });
  const stdin = new PassThrough();
  stdin.end();
  const io = new NodeStreamsIO(stdin, stdout, stderr, false, false, false, () => 80);
  const release = async () => {
    while (held.length > 0) {
      held.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const printedIds = () =>
    written
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).body.id);
  return { io, release, printedIds, stderrText: () => errText };
}

const lineBytes = Buffer.byteLength(`${event(1).line}\n`);

describe('ListenConsole and a stdout that does not drain', () => {
  it('prints every event, in order, while the reader keeps up', () => {
    const io = createTestIO();
    const out = new ListenConsole(io, { json: true, maxBacklog: lineBytes });
    for (let id = 1; id <= 5; id++) out.event(event(id));
    out.close();
    const ids = io
      .stdoutText()
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).body.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(io.stderrText()).toBe('');
  });

  it('drops the lines past its bound, and says how many once the reader catches up', async () => {
    const { io, release, printedIds, stderrText } = stalledIO();
    const out = new ListenConsole(io, { json: true, logFile: 'events.ndjson', maxBacklog: lineBytes * 3 });
    for (let id = 1; id <= 10; id++) out.event(event(id));
    // Four lines are waiting (the fourth found three, not more than the bound); six were dropped.
    expect(stderrText()).toBe('');
    await release();
    expect(printedIds()).toEqual([1, 2, 3, 4]);
    expect(stderrText()).toBe(
      'note: stdout was not read fast enough: 6 events were not printed (events.ndjson has them all).\n',
    );
    // Caught up: lines are printed again, and the note is not repeated.
    out.event(event(11));
    await release();
    out.close();
    expect(printedIds()).toEqual([1, 2, 3, 4, 11]);
    expect(stderrText().match(/note:/g)).toHaveLength(1);
  });

  it('says so at the end when the reader never caught up', async () => {
    const { io, release, printedIds, stderrText } = stalledIO();
    const out = new ListenConsole(io, { json: true, maxBacklog: lineBytes });
    out.event(event(1));
    out.event(event(2));
    out.event(event(3));
    out.close();
    await release();
    expect(printedIds()).toEqual([1, 2]);
    expect(stderrText()).toBe(
      'note: stdout was not read fast enough: 1 event was not printed (they were answered and forwarded as usual; --log keeps every event).\n',
    );
  });
});
