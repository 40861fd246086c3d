// The import journal on its own: durability order, replay, torn tails, base-URL scope, locking.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bodyHash, OrderJournal } from '../../src/import/journal.js';
import { tempDir } from '../support/cli.js';

const BASE = 'http://127.0.0.1:4780';

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('OrderJournal', () => {
  it('has the sending record in the file when sending() resolves, and outcomes after close()', async () => {
    const path = join(tempDir(), 'orders.csv.journal.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE, input: 'orders.csv' });
    await journal.sending('EXT-1', bodyHash('{"a":1}'));
    const afterSending = lines(path);
    expect(afterSending.map((r) => r.event)).toEqual(['run', 'sending']);
    expect(afterSending[1]).toMatchObject({
      externalId: 'EXT-1',
      baseUrl: BASE,
      bodyHash: bodyHash('{"a":1}'),
    });
    journal.created('EXT-1', { httpStatus: 201, id: 10001, code: 'SO-2026-000001' });
    await journal.close();
    expect(lines(path).map((r) => r.event)).toEqual(['run', 'sending', 'created']);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('groups the sending records queued during one sync into the next one', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE });
    const all = Array.from({ length: 50 }, (_, i) => journal.sending(`EXT-${i}`, 'h'));
    await Promise.all(all);
    const ids = lines(path)
      .filter((r) => r.event === 'sending')
      .map((r) => r.externalId);
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => `EXT-${i}`));
    await journal.close();
  });

  it('replays the last state of each order for its own base URL, and refuses another base URL with orders created there', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const first = await OrderJournal.open(path, { baseUrl: BASE });
    await first.sending('A', 'ha');
    first.created('A', { httpStatus: 201, id: 1, code: 'SO-1' });
    await first.sending('B', 'hb');
    first.failed('B', { httpStatus: 422, message: 'invalid' });
    await first.sending('C', 'hc');
    await first.sending('D', 'hd');
    first.unknown('D', 'connection reset');
    await first.close();
    // Another base URL with orders created or in doubt here: refused, it may be the same service.
    await expect(OrderJournal.open(path, { baseUrl: 'http://127.0.0.1:9999' })).rejects.toThrow(
      `records 1 orders created and 2 in doubt at ${BASE}, not at this run's http://127.0.0.1:9999`,
    );
    // An order only refused at another base URL changes nothing here.
    appendFileSync(
      path,
      `${JSON.stringify({ event: 'failed', externalId: 'E', baseUrl: 'http://127.0.0.1:9999', at: 'x', httpStatus: 422 })}\n`,
    );

    const again = await OrderJournal.open(path, { baseUrl: `${BASE}/` });
    expect(again.stateOf('A')).toMatchObject({ event: 'created', id: 1, code: 'SO-1', bodyHash: 'ha' });
    expect(again.stateOf('B')).toMatchObject({ event: 'failed', httpStatus: 422 });
    expect(again.stateOf('C')).toMatchObject({ event: 'sending', bodyHash: 'hc' });
    expect(again.stateOf('D')).toMatchObject({ event: 'unknown', reason: 'connection reset' });
    expect(again.stateOf('E')).toBeUndefined();
    expect(again.replay).toMatchObject({ created: 1, failed: 1, unknown: 2, tornTail: false });
    await again.close();
  });

  it('drops a torn last line (kill -9 during a write) and appends after the last complete one', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const first = await OrderJournal.open(path, { baseUrl: BASE });
    await first.sending('A', 'ha');
    await first.close();
    appendFileSync(path, `{"event":"created","externalId":"A","baseUrl":"${BASE}","httpSt`);

    const second = await OrderJournal.open(path, { baseUrl: BASE });
    expect(second.replay.tornTail).toBe(true);
    expect(second.stateOf('A')?.event).toBe('sending');
    second.failed('A', { message: 'x' });
    await second.close();
    // Every line parses: the new records did not glue onto the torn one.
    expect(lines(path).map((r) => r.event)).toEqual(['run', 'sending', 'run', 'failed']);
  });

  it('refuses a journal damaged before its last line, naming the line', async () => {
    const path = join(tempDir(), 'j.ndjson');
    writeFileSync(path, `{"event":"run"}\nnot json\n{"event":"run"}\n`);
    await expect(OrderJournal.open(path, { baseUrl: BASE })).rejects.toThrow(/damaged at line 2/);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('refuses a journal in use by a live process, and takes over the lock file of an older ordercli that died', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const held = await OrderJournal.open(path, { baseUrl: BASE });
    await expect(OrderJournal.open(path, { baseUrl: BASE })).rejects.toThrow(/already in use/);
    await held.close();

    // A live process other than this one.
    writeFileSync(`${path}.lock`, `${process.ppid}\n`);
    await expect(OrderJournal.open(path, { baseUrl: BASE })).rejects.toThrow(
      `in use by another ordercli (process ${process.ppid})`,
    );

    // The pid of a process that has exited.
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(`${path}.lock`, `${dead}\n`);
    const taken = await OrderJournal.open(path, { baseUrl: BASE });
    // The lock of an older ordercli (a file) was replaced by this version's lock folder.
    const owner = JSON.parse(readFileSync(`${path}.lock/owner-1.json`, 'utf8')) as { pid: number };
    expect(owner.pid).toBe(process.pid);
    await taken.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('inspect() reads without locking and treats a missing file as empty', async () => {
    const dir = tempDir();
    expect((await OrderJournal.inspect(join(dir, 'none.ndjson'), BASE)).replay.lines).toBe(0);
    const path = join(dir, 'j.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE });
    await journal.sending('A', 'h');
    journal.created('A', { httpStatus: 201 });
    await journal.sync();
    const { replay, states } = await OrderJournal.inspect(path, BASE);
    expect(replay.created).toBe(1);
    expect(states.get('A')?.event).toBe('created');
    await journal.close();
  });
});
