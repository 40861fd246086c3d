/** `listen --log`: lines appended in one turn are written together, whole and in order, before their callbacks. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/webhooks/event-log.js';
import { tempDir } from '../support/cli.js';

const append = (log: EventLog, line: string) =>
  new Promise<void>((resolve, reject) => log.append(line, (error) => (error ? reject(error) : resolve())));

describe('EventLog', () => {
  it('writes the lines of a turn whole and in order, and calls back only once they are in the file', async () => {
    const path = join(tempDir(), 'nested', 'events.ndjson');
    const log = await EventLog.open(path);
    const lines = Array.from({ length: 300 }, (_, n) => JSON.stringify({ n, note: 'é€😀'.repeat(n) }));
    let bytesBefore = 0;
    const written = lines.map((line) => {
      bytesBefore += Buffer.byteLength(line) + 1;
      const through = bytesBefore;
      // The callback comes after the write: the file holds the line by then.
      return append(log, line).then(() => expect(statSync(path).size).toBeGreaterThanOrEqual(through));
    });
    // Nothing is written before the turn ends.
    expect(readFileSync(path, 'utf8')).toBe('');
    await Promise.all(written);
    expect(readFileSync(path, 'utf8')).toBe(`${lines.join('\n')}\n`);

    const big = `{"big":"${'a'.repeat(5 * 1024 * 1024)}"}`;
    await Promise.all([append(log, big), append(log, '{"small":true}')]);
    expect(readFileSync(path, 'utf8').endsWith(`${big}\n{"small":true}\n`)).toBe(true);
  });

  it('writes what is pending on close, and refuses lines after it', async () => {
    const path = join(tempDir(), 'events.ndjson');
    const log = await EventLog.open(path);
    const pending = append(log, '{"last":true}');
    await log.close();
    await pending;
    expect(readFileSync(path, 'utf8')).toBe('{"last":true}\n');
    await expect(append(log, '{"late":true}')).rejects.toThrow(/Cannot write the log/);
  });
});
