/** The forwarding queue's file on its own: appended entries, their outcomes, and emptying once all are done. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForwardQueueFile } from '../../src/webhooks/forward-queue-file.js';
import { tempDir } from '../support/cli.js';
import { eventLine } from '../support/listen.js';

const line = eventLine;

describe('ForwardQueueFile', () => {
  it('empties a file that has grown large once every entry has its outcome, and goes on appending', async () => {
    const file = join(tempDir(), 'queue.ndjson');
    const queue = await ForwardQueueFile.open({ file });
    const big = (n: number) => line(n, JSON.stringify({ id: n, note: 'x'.repeat(1024 * 1024) }));
    const entries = await Promise.all([1, 2, 3, 4, 5].map((n) => queue.append(big(n))));
    expect((await queue.read(entries[4]!))?.body).toMatchObject({ id: 5 });
    for (const entry of entries.slice(0, 4)) await queue.finish(entry.seq, 'delivered', 200);
    // One entry is still without an outcome: nothing is emptied yet.
    expect(statSync(file).size).toBeGreaterThan(5 * 1024 * 1024);
    await queue.finish(entries[4]!.seq, 'rejected', 422);
    const next = await queue.append(line(6));
    expect(readFileSync(file, 'utf8')).toBe(`{"type":"event","seq":6,${line(6).slice(1)}\n`);
    expect((await queue.read(next))?.body).toEqual({ id: 6, code: 'SO-6' });
    await queue.close();
  });
});
