/** The forwarding queue file after a crash: marked entries stay done, a torn last line is cut off. */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ForwardQueue } from '../../src/webhooks/forward-queue.js';
import { tempDir } from '../support/cli.js';
import { eventLine, type LocalApp, queuedEvent, startApp } from '../support/listen.js';
import { waitFor } from '../support/wait.js';

const KEY = 'whk_queue_file_key';
let app: LocalApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const line = eventLine;

describe('ForwardQueue file', () => {
  it('resumes unmarked entries in order, cuts a torn line, and keeps appending cleanly', async () => {
    const file = join(tempDir(), 'queue.ndjson');
    const entry = queuedEvent;
    writeFileSync(
      file,
      entry(1) + entry(2) + '{"type":"delivered","seq":1,"status":200,"at":"x"}\n' + entry(3),
    );
    appendFileSync(file, entry(4).slice(0, 30)); // the crash tore the last write

    app = await startApp();
    const queue = await ForwardQueue.open({ file, target: app.url, key: KEY });
    expect(queue.resumed).toBe(2);
    await queue.enqueue(line(5, '{ "id": 5, "code": "SO-5" }'));
    queue.start();
    await waitFor(() => app!.received.length === 3, 10_000, 'three deliveries');
    await queue.close();
    expect(app.received.map((r) => r.body.toString())).toEqual([
      '{"id":2,"code":"SO-2"}',
      '{"id":3,"code":"SO-3"}',
      '{ "id": 5, "code": "SO-5" }',
    ]);
    expect(app.received.every((r) => r.headers['x-webhook-key'] === KEY)).toBe(true);

    const lines = readFileSync(file, 'utf8').trim().split('\n');
    for (const l of lines) JSON.parse(l); // every line whole: the torn one is gone
    // The torn entry was never acknowledged: its number goes to the next event.
    const events = lines.filter((l) => l.includes('"type":"event"')).map((l) => JSON.parse(l));
    expect(events.map((e) => [e.seq, e.body.id])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 5],
    ]);
    expect(readFileSync(file, 'utf8')).not.toContain(KEY);

    // Everything delivered: the next start empties the file.
    const again = await ForwardQueue.open({ file, target: app.url, key: KEY });
    expect(again.resumed).toBe(0);
    await again.close();
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});
