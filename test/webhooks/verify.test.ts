/**
 * The key check compares in constant time: the match goes through one crypto.timingSafeEqual over
 * as many bytes as the expected key has, whatever the received length; the diagnostics of a
 * refused key compare SHA-256 digests. Never `===`.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) };
});
// Test files share their worker (vitest.config.ts: isolate false), so verify.js may already be
// loaded with the real node:crypto: it is loaded again here, after the mock.
vi.resetModules();
const crypto = await import('node:crypto');
const { keyFingerprint, WebhookKeyVerifier } = await import('../../src/webhooks/verify.js');

const KEY = 'whk_0123456789abcdef0123456789abcdef';
const spy = vi.mocked(crypto.timingSafeEqual);
const headers = (...values: string[]) => values.flatMap((v) => ['X-Webhook-Key', v]);

describe('WebhookKeyVerifier', () => {
  beforeEach(() => {
    spy.mockClear();
  });

  it('accepts the key through one timingSafeEqual over the bytes of the expected key', () => {
    const verifier = new WebhookKeyVerifier(KEY);
    expect(verifier.verify(headers(KEY))).toEqual({ ok: true });
    expect(spy).toHaveBeenCalledTimes(1);
    const [a, b] = spy.mock.calls[0]! as [Buffer, Buffer];
    expect(a.length).toBe(KEY.length);
    expect(b.length).toBe(KEY.length);
    expect(a.equals(b)).toBe(true);
  });

  it('compares as many bytes as the expected key has even when the keys differ in length', () => {
    const verifier = new WebhookKeyVerifier(KEY);
    for (const wrong of ['x', 'short-key', `${KEY}-and-more`, KEY.slice(0, -1), `${KEY.slice(0, -1)}X`]) {
      spy.mockClear();
      const verdict = verifier.verify(headers(wrong));
      expect(verdict.ok).toBe(false);
      const [first, ...diagnostics] = spy.mock.calls as [Buffer, Buffer][];
      expect(first!.map((buffer) => buffer.length)).toEqual([KEY.length, KEY.length]);
      for (const [a, b] of diagnostics) expect([a.length, b.length]).toEqual([32, 32]);
    }
  });

  it('names each reason without showing either key', () => {
    const verifier = new WebhookKeyVerifier(KEY, { apiToken: 'the-api-token' });
    const reasons = [
      [[], 'header-missing'],
      [headers(KEY, KEY), 'header-repeated'],
      [headers(''), 'header-empty'],
      [headers(`${KEY}\u00a0`), 'surrounding-whitespace'],
      [headers(`'${KEY}'`), 'quoted'],
      [headers(KEY.toUpperCase()), 'case-differs'],
      [headers('the-api-token'), 'api-token'],
      [headers('whk_other'), 'key-differs'],
    ] as const;
    for (const [raw, reason] of reasons) {
      const verdict = verifier.verify(raw as string[]);
      expect(verdict).toMatchObject({ ok: false, reason });
      if (!verdict.ok) expect(verdict.diagnosis).not.toContain(KEY);
      // The caller is told which header is at fault, nothing more.
      if (!verdict.ok)
        expect(verdict.message).toBe(
          reason === 'header-missing' ? 'X-WEBHOOK-KEY header missing' : 'X-WEBHOOK-KEY header wrong',
        );
    }
    const differs = verifier.verify(headers('whk_other'));
    expect(!differs.ok && differs.diagnosis).toBe(
      `X-WEBHOOK-KEY differs from the key (received 9 characters, ${keyFingerprint('whk_other')}; expected ${KEY.length} characters, ${keyFingerprint(KEY)})`,
    );
  });

  it('fingerprints are the first 8 hex digits of SHA-256, as sha256sum shows them', () => {
    expect(keyFingerprint('abc')).toBe('sha256:ba7816bf');
  });
});
