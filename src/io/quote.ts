/**
 * How a value from an input or from the service is shown in a message: control characters
 * escaped (an ESC sequence in a cell must never drive the terminal) and at most a short excerpt
 * (a 50 MB cell must not become a 50 MB error).
 */

/** Characters of a value shown in a message before it is cut with `…`. */
export const EXCERPT_CHARS = 60;

// C0 and C1 controls and DEL: what a terminal may act on.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROLS_BUT_LINE_BREAKS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\b': '\\b', '\f': '\\f' };

function escapeOne(char: string): string {
  return NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The text with every control character written as an escape (`\u001b`, `\t`, ...). */
export function escapeControl(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROLS, escapeOne) : text;
}

/** As `escapeControl`, but line breaks stay: for text that is shown as several lines. */
export function escapeControlKeepingLines(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROLS_BUT_LINE_BREAKS, escapeOne) : text;
}

/** The first `max` characters of a text, with `…` when it was longer (a surrogate pair is never split). */
export function shorten(text: string, max = EXCERPT_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/** A value to name in a message without quotes (a header, a field name): short and escaped. */
export function excerpt(text: string, max = EXCERPT_CHARS): string {
  return escapeControl(shorten(text, max));
}

/**
 * A value quoted in a message: in double quotes, JSON's escapes (control characters, quotes and
 * backslashes), at most `max` characters of it with `…` when it is longer.
 */
export function quote(value: string, max = EXCERPT_CHARS): string {
  if (value.length <= max) return JSON.stringify(value).replace(/[\u007f-\u009f]/g, escapeOne);
  const shown = JSON.stringify(shorten(value, max).slice(0, -1)).slice(0, -1);
  return `${shown.replace(/[\u007f-\u009f]/g, escapeOne)}…"`;
}

/** A value of any kind quoted in a message: strings as `quote`, others as their short JSON. */
export function quoteAny(value: unknown, max = EXCERPT_CHARS): string {
  if (typeof value === 'string') return quote(value, max);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  return excerpt(text ?? String(value), max);
}

/** `text` with its first letter upper-case: a noun phrase (`the journal x`) starting a sentence. */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A word as a POSIX shell reads it, for a command a message offers: unquoted when safe, else in single quotes. */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
