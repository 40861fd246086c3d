// The matching of `--await validated`: a notification finds its order by code, else id, else
// externalId; one that comes before its order is kept; an order past its time is not validated;
// Ctrl-C ends the wait. Through the waiter alone (the binary's tests: import.await.test.ts).
import { describe, expect, it } from 'vitest';
import { ValidationWaiter } from '../../src/import/await-validation.js';
import { waitFor } from '../support/wait.js';

describe('ValidationWaiter', () => {
  it('matches by code, else id, else externalId, and keeps a notification that comes first', async () => {
    const recorded: string[] = [];
    const waiter = new ValidationWaiter(60_000, (key) => recorded.push(key));
    waiter.notify({ code: 'SO-3' }, '2026-11-28T10:00:00.000Z');
    waiter.expect({ key: 'A', code: 'SO-1', id: 1, since: performance.now() });
    waiter.expect({ key: 'B', code: 'SO-2', id: 2, since: performance.now() });
    waiter.expect({ key: 'C', code: 'SO-3', id: 3, since: performance.now() });
    waiter.expect({ key: 'D', since: performance.now() });
    waiter.notify({ code: 'SO-1', id: 99 }, '2026-11-28T10:00:01.000Z');
    waiter.notify({ id: '2' }, '2026-11-28T10:00:02.000Z');
    waiter.notify({ externalId: 'D' }, '2026-11-28T10:00:03.000Z');
    waiter.notify({ code: 'SO-unknown' }, '2026-11-28T10:00:04.000Z');
    waiter.done();
    await waiter.finished;
    expect(recorded.sort()).toEqual(['A', 'B', 'C', 'D']);
    expect(waiter.outcome('C')).toMatchObject({ validated: true, validatedAt: '2026-11-28T10:00:00.000Z' });
    expect(waiter.counts).toEqual({ validated: 4, notValidated: 0 });
  });

  it('an order past its time is not validated; a late notification changes nothing', async () => {
    const waiter = new ValidationWaiter(50, () => undefined);
    waiter.expect({ key: 'LATE', code: 'SO-9', since: performance.now() });
    waiter.done();
    await waiter.finished;
    expect(waiter.outcome('LATE')).toEqual({ validated: false, reason: 'timeout' });
    waiter.notify({ code: 'SO-9' }, '2026-11-28T10:00:00.000Z');
    expect(waiter.counts).toEqual({ validated: 0, notValidated: 1 });
  });

  it('Ctrl-C: every order still waiting is not validated, and the wait ends', async () => {
    const waiter = new ValidationWaiter(60_000, () => undefined);
    waiter.expect({ key: 'X', code: 'SO-X', since: performance.now() });
    waiter.done();
    let ended = false;
    void waiter.finished.then(() => {
      ended = true;
    });
    waiter.interrupt();
    await waitFor(() => ended, 1_000, 'the end of the wait');
    expect(waiter.outcome('X')).toEqual({ validated: false, reason: 'interrupted' });
  });
});
