/** A queue line far over the bound (a damaged file): copied aside piece by piece, never held whole. */
import { once } from 'node:events';
import { createWriteStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  damagedLinesWarning,
  ForwardQueueFile,
  MAX_QUEUE_LINE_BYTES,
} from '../../src/webhooks/forward-queue-file.js';
import { tempDir } from '../support/cli.js';
import { eventLine } from '../support/listen.js';

const MIB = 1024 * 1024;
const LONG_BYTES = 64 * MIB;

/** A queue: event 1, a 64 MiB line that is not JSON (written 1 MiB at a time), event 2. */
async function damagedQueue(file: string): Promise<void> {
  writeFileSync(file, `{"type":"event","seq":1,${eventLine(1).slice(1)}\n`);
  const out = createWriteStream(file, { flags: 'a' });
  const piece = Buffer.alloc(MIB, 'x');
  for (let i = 0; i < LONG_BYTES / MIB; i++) if (!out.write(piece)) await once(out, 'drain');
  out.end(`\n{"type":"event","seq":2,${eventLine(2).slice(1)}\n`);
  await once(out, 'finish');
}

describe('ForwardQueueFile with a line over the bound', () => {
  it('copies it to <queue>.damaged in pieces, reports it with its size and resumes the events around it', async () => {
    expect(MAX_QUEUE_LINE_BYTES).toBeLessThan(LONG_BYTES);
    const file = join(tempDir(), 'queue.ndjson');
    await damagedQueue(file);

    // The peak of the resident set while the file is read (sampled between its reads).
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 1);
    const started = performance.now();
    let queue: ForwardQueueFile;
    try {
      queue = await ForwardQueueFile.open({ file });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(peak - before).toBeLessThan(32 * MIB);

    expect(queue.unfinished.map((entry) => entry.seq)).toEqual([1, 2]);
    expect((await queue.read(queue.unfinished[1]!))?.body).toEqual({ id: 2, code: 'SO-2' });
    expect(queue.damaged).toEqual({
      lines: [2],
      file: `${file}.damaged`,
      oversize: [{ line: 2, bytes: LONG_BYTES }],
    });
    expect(statSync(`${file}.damaged`).size).toBe(LONG_BYTES + 1);
    expect(statSync(`${file}.damaged`).mode & 0o777).toBe(0o600);
    expect(damagedLinesWarning(queue.damaged!)).toContain(
      `could not be read (line 2; line 2 is ${LONG_BYTES} bytes, over the 8 MiB a line may hold)`,
    );
    const next = await queue.append(eventLine(3));
    expect(next.seq).toBe(3);
    await queue.close();

    // Opened again (the queue not emptied since): the long line is reported, not copied twice.
    const again = await ForwardQueueFile.open({ file });
    expect(again.damaged?.oversize).toEqual([{ line: 2, bytes: LONG_BYTES }]);
    expect(again.unfinished.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(statSync(`${file}.damaged`).size).toBe(LONG_BYTES + 1);
    const damaged = readFileSync(`${file}.damaged`);
    expect(damaged.subarray(0, 4).toString()).toBe('xxxx');
    expect(damaged.at(-1)).toBe(0x0a);
    await again.close();
  });

  it('stops at Ctrl-C in the middle of the long line, cutting its partial copy off again', async () => {
    const file = join(tempDir(), 'queue.ndjson');
    await damagedQueue(file);
    const damaged = `${file}.damaged`;
    writeFileSync(damaged, 'kept before\n', { mode: 0o600 });
    // Ctrl-C as soon as a first piece of the long line is copied (the replay looks at each read).
    const stop = new AbortController();
    Object.defineProperty(stop.signal, 'aborted', {
      get: () => existsSync(damaged) && statSync(damaged).size > 12,
    });
    const started = performance.now();
    await expect(ForwardQueueFile.open({ file, signal: stop.signal })).rejects.toThrow(
      `Interrupted while reading the forwarding queue ${file}.`,
    );
    expect(performance.now() - started).toBeLessThan(2000);
    expect(readFileSync(damaged, 'utf8')).toBe('kept before\n');
    // The lock was released: the next start reads it all.
    const again = await ForwardQueueFile.open({ file });
    expect(again.unfinished.map((entry) => entry.seq)).toEqual([1, 2]);
    expect(statSync(damaged).size).toBe(12 + LONG_BYTES + 1);
    await again.close();
  });
});
