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
]);

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

  isSecretHeader(name: string): boolean {
    return this.headerNames.has(name.toLowerCase());
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
