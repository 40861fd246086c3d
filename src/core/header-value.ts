/**
 * Credentials and addresses that go into HTTP headers (a token, a webhook key, the base URL's
 * host) must be visible ASCII: a character pasted with them from a chat or a document (U+200B, a
 * non-breaking space) would make every request fail, or hang, far from its cause. Refused up
 * front, naming the setting, where it came from and the position, never the value itself.
 */
import { UsageError } from './errors.js';

/** Invisible in a URL: controls, format characters (U+200B, U+FEFF) and every kind of space. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}]/u;

/**
 * The first character of `value` that cannot be sent, by 1-based position: for a credential, one
 * that is not visible ASCII, space or tab; for a URL (`url`), an invisible one (a host may be
 * written in any script: it is sent as punycode).
 */
export function unsendableCharacter(
  value: string,
  url = false,
): { position: number; codePoint: string } | undefined {
  let position = 0;
  for (const char of value) {
    position++;
    const code = char.codePointAt(0)!;
    if (url ? !INVISIBLE.test(char) : code === 0x09 || (code >= 0x20 && code <= 0x7e)) continue;
    return { position, codePoint: `U+${code.toString(16).toUpperCase().padStart(4, '0')}` };
  }
  return undefined;
}

/** Throws exit 2 when `value` (described as `what`, e.g. `the token from ORDERCLI_TOKEN`) cannot be sent. */
export function checkSendable(value: string | undefined, what: string, { url = false } = {}): void {
  if (value === undefined) return;
  const found = unsendableCharacter(value, url);
  if (!found) return;
  const error = new UsageError(
    `${what[0]!.toUpperCase()}${what.slice(1)} holds a character that cannot be sent in an HTTP request: character ${found.position} is ${found.codePoint}, ${url ? 'an invisible one' : 'not visible ASCII'}; nothing was sent.`,
  );
  error.hint =
    'such characters are often invisible and come with a copy from a chat or a document: type or paste the value again without it.';
  throw error;
}

/** `--token`, `ORDERCLI_TOKEN` or `the profile "default"`: where a setting came from, as the user names it. */
export function settingSource(
  source: 'flag' | 'env' | 'profile' | 'default' | undefined,
  names: { flag: string; env: string },
  profileName: string,
): string {
  if (source === 'flag') return names.flag;
  if (source === 'env') return names.env;
  if (source === 'profile') return `the profile "${profileName}"`;
  return 'the value given';
}
