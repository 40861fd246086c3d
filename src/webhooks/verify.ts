/**
 * Checks the `X-WEBHOOK-KEY` header of a notification. The comparison is constant-time:
 * `timingSafeEqual` always compares as many bytes as the expected key has (the expected key with
 * itself when the lengths differ), so neither the content nor the length of the expected key
 * shows in the time taken; only the received value's own length does, which its sender knows.
 *
 * A refused key gets two texts. `message` is all the caller learns: which header is at fault
 * (`X-WEBHOOK-KEY header missing` or `... wrong`), nothing about the expected key. `diagnosis` is
 * for the operator's console only, as precise as it can be without printing either key: sent
 * twice, empty, wrapped in white space or quotes, differs only in letter case, holds the API token
 * instead, or simply differs (with the lengths and fingerprints of both, which a user can compare
 * with `printf %s "$KEY" | sha256sum`). Told to the caller, these would be an oracle for anyone who
 * can reach the port. The diagnostic comparisons are made on digests, so a refused request learns
 * nothing from timing either.
 */
import { hash, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_KEY_HEADER = 'x-webhook-key';
export const WEBHOOK_EVENT_HEADER = 'x-webhook-event';

/** Why a key was refused; `message` says it in words a user acts on. */
export type KeyRejectionReason =
  | 'header-missing'
  | 'header-repeated'
  | 'header-empty'
  | 'surrounding-whitespace'
  | 'quoted'
  | 'case-differs'
  | 'api-token'
  | 'key-differs';

export type KeyVerdict =
  | { ok: true }
  | {
      ok: false;
      reason: KeyRejectionReason;
      /** What the HTTP answer says: the header at fault, nothing about the key. */
      message: string;
      /** Why, in words the operator acts on: for the console, never for the caller. */
      diagnosis: string;
    };

const HEADER_MISSING = 'X-WEBHOOK-KEY header missing';
const HEADER_WRONG = 'X-WEBHOOK-KEY header wrong';

function refused(reason: KeyRejectionReason, diagnosis: string): KeyVerdict {
  const message = reason === 'header-missing' ? HEADER_MISSING : HEADER_WRONG;
  return { ok: false, reason, message, diagnosis };
}

function digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

/** `sha256:` and the first 8 hex digits of the key's SHA-256: enough to tell two keys apart, never the key. */
export function keyFingerprint(key: string): string {
  return `sha256:${hash('sha256', key, 'hex').slice(0, 8)}`;
}

/** Constant-time equality of two values through their digests (equal-length buffers by construction). */
export function sameSecret(received: string | Buffer, expectedDigest: Buffer): boolean {
  const receivedDigest = typeof received === 'string' ? digest(received) : received;
  return timingSafeEqual(receivedDigest, expectedDigest);
}

export interface KeyVerifierOptions {
  /** The API token of this run: a key equal to it is a common mix-up worth naming. */
  apiToken?: string;
}

/** Verifies the key of each request against one expected key. */
export class WebhookKeyVerifier {
  private readonly expectedBytes: Buffer;
  private readonly expectedDigest: Buffer;
  private readonly expectedLowerDigest: Buffer;
  private readonly tokenDigest: Buffer | undefined;
  private readonly expectedLength: number;
  readonly fingerprint: string;

  constructor(expected: string, options: KeyVerifierOptions = {}) {
    if (expected === '') throw new Error('WebhookKeyVerifier: the expected key must not be empty');
    this.expectedBytes = Buffer.from(expected, 'utf8');
    this.expectedDigest = digest(expected);
    this.expectedLowerDigest = digest(expected.toLowerCase());
    this.tokenDigest = options.apiToken ? digest(options.apiToken) : undefined;
    this.expectedLength = expected.length;
    this.fingerprint = keyFingerprint(expected);
  }

  /**
   * Checks the raw header list of a request (`req.rawHeaders`): raw, so that a header sent twice
   * is seen as such rather than joined with a comma.
   */
  verify(rawHeaders: readonly string[]): KeyVerdict {
    let value: string | undefined;
    let count = 0;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      if (name.length === WEBHOOK_KEY_HEADER.length && name.toLowerCase() === WEBHOOK_KEY_HEADER) {
        count++;
        value = rawHeaders[i + 1];
      }
    }
    if (count === 0 || value === undefined) {
      return refused('header-missing', HEADER_MISSING);
    }
    if (count > 1) {
      return refused('header-repeated', `X-WEBHOOK-KEY header sent ${count} times`);
    }
    if (this.matches(value)) return { ok: true };
    return this.diagnose(value, digest(value));
  }

  /** Constant-time equality with the expected key (see the top of this file). */
  private matches(value: string): boolean {
    const expected = this.expectedBytes;
    const received = Buffer.from(value, 'utf8');
    const sameLength = received.length === expected.length;
    return timingSafeEqual(sameLength ? received : expected, expected) && sameLength;
  }

  private diagnose(value: string, receivedDigest: Buffer): KeyVerdict {
    if (value === '') return refused('header-empty', 'X-WEBHOOK-KEY header is empty');
    // HTTP strips spaces and tabs around header values; what is left is Unicode white space
    // (a no-break space pasted from a web page, say).
    const trimmed = value.trim();
    if (trimmed !== value && sameSecret(trimmed, this.expectedDigest)) {
      return refused(
        'surrounding-whitespace',
        'X-WEBHOOK-KEY has surrounding white space (the key matches without it)',
      );
    }
    const unquoted = /^(["'])(.*)\1$/s.exec(trimmed)?.[2];
    if (unquoted !== undefined && sameSecret(unquoted, this.expectedDigest)) {
      return refused('quoted', 'X-WEBHOOK-KEY is wrapped in quotes (the key matches without them)');
    }
    if (sameSecret(value.toLowerCase(), this.expectedLowerDigest)) {
      return refused('case-differs', 'X-WEBHOOK-KEY differs from the key only in letter case');
    }
    if (this.tokenDigest && timingSafeEqual(receivedDigest, this.tokenDigest)) {
      return refused(
        'api-token',
        'X-WEBHOOK-KEY holds the API token, not the webhook key of the subscription',
      );
    }
    return refused(
      'key-differs',
      `X-WEBHOOK-KEY differs from the key (received ${value.length} characters, ${keyFingerprint(value)}; ` +
        `expected ${this.expectedLength} characters, ${this.fingerprint})`,
    );
  }
}
