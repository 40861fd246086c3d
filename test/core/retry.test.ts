import { describe, expect, it } from 'vitest';
import { AbortedError, backOffDelay, parseRetryAfter, sleep } from '../../src/core/retry.js';

describe('parseRetryAfter', () => {
  it('reads seconds, an HTTP date, and the first of a repeated header', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter(['2', '9'])).toBe(2000);
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    expect(parseRetryAfter(inAMinute)).toBeGreaterThan(55_000);
    expect(parseRetryAfter(new Date(0).toUTCString())).toBe(0);
  });

  it('is undefined when absent or unreadable', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(' ')).toBeUndefined();
    expect(parseRetryAfter([])).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('backOffDelay', () => {
  it('doubles per attempt, between half and all of it, never above the maximum', () => {
    for (let i = 0; i < 50; i++) {
      const first = backOffDelay(1, { baseMs: 100, maxMs: 1000 });
      expect(first).toBeGreaterThanOrEqual(50);
      expect(first).toBeLessThanOrEqual(100);
      const third = backOffDelay(3, { baseMs: 100, maxMs: 1000 });
      expect(third).toBeGreaterThanOrEqual(200);
      expect(third).toBeLessThanOrEqual(400);
      const late = backOffDelay(500, { baseMs: 100, maxMs: 1000 });
      expect(late).toBeGreaterThanOrEqual(500);
      expect(late).toBeLessThanOrEqual(1000);
    }
  });
});

describe('sleep', () => {
  it('resolves after the wait', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });

  it("rejects with the signal's reason when it aborts, before or during the wait", async () => {
    const reason = new Error('stop');
    await expect(sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('rejects with an AbortError when the signal aborts without a reason of its own', async () => {
    const signal = { aborted: true, reason: undefined } as unknown as AbortSignal;
    await expect(sleep(60_000, signal)).rejects.toBeInstanceOf(AbortedError);
  });
});
