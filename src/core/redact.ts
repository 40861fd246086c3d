/**
 * Removes credentials and webhook keys from any text before it is printed or written. Every
 * stream of the CLI (stdout, stderr, traces, logs) goes through one Redactor.
 */
export const REDACTED = '[redacted]';

/** Secrets shorter than this are not worth masking and would garble unrelated text. */
const MIN_SECRET_LENGTH = 4;

/** Header names whose values are always masked, whatever they hold. */
const SECRET_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-webhook-key',
  'x-api-key',
  'cookie',
  'set-cookie',
]);

/**
 * Field names whose values are secrets, matched by their words (`webhookKey`, `api_key`,
 * `X-Auth-Token`, `clientSecret`, `password`...): a name is secret when one of its words is a
 * secret word, or when it ends with `key` or `token` (`publicKey` too: masking a harmless value
 * costs less than printing a secret one). `tokenType` or `keyId` are not secret.
 */
const SECRET_WORDS = new Set([
  'secret',
  'password',
  'passwd',
  'passphrase',
  'credential',
  'credentials',
  'apikey',
]);
const SECRET_LAST_WORDS = new Set(['key', 'token', 'pwd', 'authorization', 'signature']);

/** Answers of isSecretField by name: a list of 50,000 records repeats the same few names. */
const secretFieldCache = new Map<string, boolean>();

/** Whether a JSON field of this name holds a secret (see SECRET_WORDS). */
export function isSecretField(name: string): boolean {
  let secret = secretFieldCache.get(name);
  if (secret === undefined) {
    secret = nameIsSecret(name);
    if (secretFieldCache.size < 10_000) secretFieldCache.set(name, secret);
  }
  return secret;
}

function nameIsSecret(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
  if (words.length === 0) return false;
  if (words.some((word) => SECRET_WORDS.has(word))) return true;
  return SECRET_LAST_WORDS.has(words[words.length - 1]!);
}

/** What `redactSecretFields` did: the value to show and the dotted paths it masked. */
export interface FieldRedaction<T = unknown> {
  value: T;
  /** `key`, `data.subscription.secret`, `[2].token`...: each field masked, in order. */
  fields: string[];
}

/**
 * Copies a parsed JSON value with the value of every secret-named field (at any depth, in objects
 * and arrays) replaced by `[redacted]`; `null`, booleans and empty strings stay as they are.
 */
export function redactSecretFields<T = unknown>(value: T): FieldRedaction<T> {
  const fields: string[] = [];
  const mask = (inner: unknown): unknown => {
    if (inner === null || inner === '' || typeof inner === 'boolean') return inner;
    if (Array.isArray(inner)) return inner.map(mask);
    if (typeof inner === 'object') {
      return Object.fromEntries(
        Object.entries(inner as Record<string, unknown>).map(([k, v]) => [k, mask(v)]),
      );
    }
    return REDACTED;
  };
  // Copy on write: a value without secret fields comes back as the same object. The path of a
  // field is spelled out only when it is masked (a list of 50,000 records has none, usually).
  const at: (string | number)[] = [];
  const pathOf = () =>
    at.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`)).join('');
  const walk = (inner: unknown): unknown => {
    if (inner === null || typeof inner !== 'object') return inner;
    if (Array.isArray(inner)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < inner.length; i++) {
        const item = inner[i];
        if (item === null || typeof item !== 'object') continue;
        at.push(i);
        const shown = walk(item);
        at.pop();
        if (shown !== item) {
          copy ??= inner.slice();
          copy[i] = shown;
        }
      }
      return copy ?? inner;
    }
    let copy: Record<string, unknown> | undefined;
    for (const name in inner) {
      if (!Object.hasOwn(inner, name)) continue;
      const field = (inner as Record<string, unknown>)[name];
      let shown: unknown;
      at.push(name);
      if (isSecretField(name) && field !== null && field !== '' && field !== REDACTED) {
        shown = mask(field);
        if (shown !== field) fields.push(pathOf());
      } else shown = walk(field);
      at.pop();
      if (shown !== field) {
        copy ??= { ...(inner as Record<string, unknown>) };
        copy[name] = shown;
      }
    }
    return copy ?? inner;
  };
  const redacted = walk(value) as T;
  return { value: fields.length === 0 ? value : redacted, fields };
}

/** `"name": "value"` pairs of a JSON text, for text that does not parse (a clipped body). */
const JSON_STRING_FIELD = /"((?:[^"\\]|\\.)*)"(\s*:\s*)"((?:[^"\\]|\\.)*)"/g;

/**
 * A JSON text with the values of its secret-named fields masked (`redactSecretFields`); a text
 * that does not parse (clipped, or not JSON) has its `"name": "string"` pairs masked instead.
 * Anything else is returned as it is.
 */
export function redactSecretFieldsInText(text: string): string {
  if (!text.includes('"')) return text;
  if (/^\s*[[{]/.test(text)) {
    try {
      const { value, fields } = redactSecretFields(JSON.parse(text) as unknown);
      if (fields.length === 0) return text;
      return JSON.stringify(value, null, text.includes('\n') ? 2 : undefined);
    } catch {
      // Not JSON after all (or clipped): the field pattern below still finds `"key": "..."`.
    }
  }
  return text.replace(JSON_STRING_FIELD, (pair, name: string, colon: string, value: string) =>
    isSecretField(name) && value !== '' && value !== REDACTED ? `"${name}"${colon}"${REDACTED}"` : pair,
  );
}

export class Redactor {
  private readonly secrets = new Set<string>();
  private readonly headerNames = new Set(SECRET_HEADERS);

  /** Registers a secret value (a token, a webhook key) to mask wherever it appears. */
  addSecret(value: string | undefined): void {
    if (value === undefined) return;
    const trimmed = value.trim();
    if (trimmed.length >= MIN_SECRET_LENGTH) this.secrets.add(trimmed);
    if (value.length >= MIN_SECRET_LENGTH) this.secrets.add(value);
  }

  /** Registers a header name whose value is always masked (a custom auth header). */
  addSecretHeader(name: string | undefined): void {
    if (name) this.headerNames.add(name.toLowerCase());
  }

  /** A header whose value is masked: a known one, the custom auth header, or one named like a secret field. */
  isSecretHeader(name: string): boolean {
    return this.headerNames.has(name.toLowerCase()) || isSecretField(name);
  }

  /**
   * A request or response body as a trace shows it: secret-named JSON fields masked at any depth
   * (in a JSON text that does not parse, the string ones), then every known secret.
   */
  redactBody(text: string): string {
    return this.redact(redactSecretFieldsInText(text));
  }

  /** Returns the text with every registered secret replaced by `[redacted]`. */
  redact(text: string): string {
    if (this.secrets.size === 0) return text;
    let out = text;
    // Longest first, so that a secret containing another is masked whole.
    for (const secret of [...this.secrets].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }

  /** Copies headers with the values of secret headers masked. */
  redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      if (this.isSecretHeader(name)) out[name] = REDACTED;
      else out[name] = Array.isArray(value) ? value.map((v) => this.redact(v)) : this.redact(value);
    }
    return out;
  }
}

/**
 * The user info of a URL with credentials (`postgres://user:password@host/db`), read as a person
 * writes one rather than as the URL parser does: everything between `://` and the last `@`, so
 * that a password holding an unencoded `@`, `:` or `/` is still the password (from the first `:`).
 */
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^:@/]*):(.*)@/is;
/** A password given as a query parameter (`?password=…`). */
const URL_PASSWORD_PARAM = /([?&][^=&#]*pass[^=&#]*=)([^&#]*)/gi;

/** The passwords a URL holds (user info and query), each as written and percent-decoded. */
export function urlPasswords(url: string): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined) => {
    if (!value) return;
    found.add(value);
    try {
      found.add(decodeURIComponent(value));
    } catch {
      // Not valid percent-encoding: only the text as written.
    }
  };
  add(URL_USERINFO.exec(url)?.[3]);
  for (const match of url.matchAll(URL_PASSWORD_PARAM)) add(match[2]);
  return [...found];
}

/** A URL as it may be shown: its passwords (see `urlPasswords`) replaced by `***`. */
export function redactUrlPassword(url: string): string {
  return url
    .replace(URL_USERINFO, (_all, scheme: string, user: string) => `${scheme}${user}:***@`)
    .replace(URL_PASSWORD_PARAM, (_all, name: string, value: string) => (value === '' ? name : `${name}***`));
}
