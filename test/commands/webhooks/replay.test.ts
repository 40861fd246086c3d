// `webhooks replay` before it sends: the log read and checked as a whole, and the events selected
// (a log that holds nothing to send, or a line that is not a recorded event, sends nothing).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Context } from '../../../src/command-support/context.js';
import type { ReplayFlags } from '../../../src/commands/webhooks/index.js';
import { readRecordedEvents, run } from '../../../src/commands/webhooks/replay.js';
import { InputError, UsageError } from '../../../src/core/errors.js';
import { createTestIO } from '../../../src/io/memory.js';
import { tempDir, testEnv } from '../../support/cli.js';
import { lines, rejection } from '../../support/import-input.js';

function event(event: string | null, body: unknown, receivedAt = '2026-11-26T10:00:00.000Z'): string {
  return JSON.stringify({ receivedAt, event, headers: { 'content-type': 'application/json' }, body });
}

describe('readRecordedEvents', () => {
  it('reads each recorded event with its line, passing over blank lines and delivery marks', () => {
    const text = [
      event('sales_order_validated', { code: 'SO-1' }),
      '',
      JSON.stringify({ type: 'delivered', id: 1 }),
      JSON.stringify({ type: 'rejected', id: 2 }),
      event(null, [1, 2]),
      '',
    ].join('\n');
    const { events, problems } = readRecordedEvents(text, 'events.ndjson');
    expect(problems).toEqual([]);
    expect(events.map(({ line, record }) => [line, record.event, record.body])).toEqual([
      [1, 'sales_order_validated', { code: 'SO-1' }],
      [5, null, [1, 2]],
    ]);
  });

  it('lists every line that is not JSON or not a recorded event', () => {
    const text = [event('e', {}), '{"receivedAt": "torn', '{"receivedAt": "x", "body": {}}', '[]'].join('\n');
    const { events, problems } = readRecordedEvents(text, 'events.ndjson');
    expect(events).toHaveLength(1);
    expect(problems.map((problem) => problem.line)).toEqual([2, 3, 4]);
    expect(problems[0]?.message).toMatch(/^not JSON: /);
    expect(lines(problems.slice(1))).toEqual([
      'events.ndjson:3: not an event recorded by listen --log (receivedAt, event, headers, body)',
      'events.ndjson:4: not an event recorded by listen --log (receivedAt, event, headers, body)',
    ]);
  });
});

describe('run: refusals before anything is sent', () => {
  /** Replays `text` to a port where nothing listens; a refusal comes before any request. */
  async function replay(text: string, flags: Partial<ReplayFlags> = {}) {
    const cwd = tempDir('ordercli-replay-');
    writeFileSync(join(cwd, 'events.ndjson'), text);
    const io = createTestIO();
    const ctx = new Context({ io, env: testEnv(), signal: new AbortController().signal, cwd });
    const error = await rejection(
      run('events.ndjson', { url: 'http://127.0.0.1:9/', key: 'whk_k', ...flags } as ReplayFlags, ctx),
    );
    return { error, io };
  }

  it('refuses a log with a line that is not a recorded event', async () => {
    const { error } = await replay(`${event('e', {})}\nnot json\n`);
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe('events.ndjson has lines that are not recorded events; nothing was sent.');
  });

  it('refuses a selection that leaves nothing to replay, naming what was asked', async () => {
    const log = `${event('sales_order_validated', {}, 'T1')}\n${event(null, {}, 'T2')}\n`;
    const byEvent = await replay(log, { event: 'sales_order_created' });
    expect(byEvent.error).toBeInstanceOf(UsageError);
    expect(byEvent.error.message).toBe(
      'Nothing to replay: events.ndjson holds 2 events, no sales_order_created events; nothing was sent.',
    );
    const byTime = await replay(log, { receivedAt: 'T2' });
    expect(byTime.error.message).toBe(
      'Nothing to replay: events.ndjson holds 2 events, no recorded events received at T2; nothing was sent.',
    );
  });

  it('counts in words and names one line as a line: "1 event", "(line 2)", never "event(s)" or "lines 2"', async () => {
    const log = `${event('sales_order_validated', {}, 'T1')}\n${event(null, {}, 'T2')}\n`;
    const { error, io } = await replay(log);
    expect(io.stderrText()).toContain('Skipping 1 event recorded without X-WEBHOOK-EVENT (line 2).');
    // Nothing listens on port 9: the one event sent is not accepted.
    expect(error.message).toBe('1 of 1 notifications were not accepted by http://127.0.0.1:9/ (line 1).');
    const one = await replay(`${event(null, {}, 'T2')}\n`, { event: 'sales_order_created' });
    expect(one.error.message).toBe(
      'Nothing to replay: events.ndjson holds 1 event, no sales_order_created events; nothing was sent.',
    );
  });

  it('refuses a file it cannot read, and a receiver URL that is not http', async () => {
    const cwd = tempDir('ordercli-replay-');
    const ctx = new Context({
      io: createTestIO(),
      env: testEnv(),
      signal: new AbortController().signal,
      cwd,
    });
    await expect(
      run('none.ndjson', { url: 'http://127.0.0.1:9/', key: 'k' } as ReplayFlags, ctx),
    ).rejects.toThrow('Cannot read none.ndjson: ENOENT.');
    await expect(run('none.ndjson', { url: 'ftp://x/', key: 'k' } as ReplayFlags, ctx)).rejects.toThrow(
      '--url must be an http:// or https:// URL, not ftp://.',
    );
  });
});
