/**
 * Who may use the inspector: the person at the terminal where `listen` printed its address.
 *
 * The gate is Jupyter's. A random secret is printed on the terminal in the page's address
 * (`http://127.0.0.1:4781/?token=…`); `GET /` with it answers the page and an HttpOnly,
 * SameSite=Strict session cookie; every other request needs that cookie, else 403, whatever its path
 * (nothing tells a caller without it which paths exist). Another local user or process can connect
 * to 127.0.0.1 but knows neither value: the secret is only on this terminal, the cookie only in the
 * browser that opened it, out of reach of scripts (HttpOnly) and not sent by other sites' pages
 * (SameSite=Strict). Both values are made per run and compared in constant time.
 *
 * Cookies are shared by every port of a host, so the cookie is named after the inspector's port:
 * two `listen --inspect` runs do not overwrite each other's.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export class InspectorAccess {
  /** Printed on the terminal in the page's address. */
  readonly secret = randomBytes(32).toString('base64url');
  /** What the browser holds once the secret was shown. */
  private readonly session = randomBytes(32).toString('base64url');

  constructor(private readonly port: number) {}

  /** The address to open: the page's, with the secret. */
  openUrl(base: string): string {
    return `${base}?token=${this.secret}`;
  }

  private get cookieName(): string {
    return `ordercli-inspector-${this.port}`;
  }

  /** `Set-Cookie` for a browser that showed the secret: for this run only (no expiry). */
  sessionCookie(): string {
    return `${this.cookieName}=${this.session}; Path=/; HttpOnly; SameSite=Strict`;
  }

  /** Whether the request carries this run's session cookie. */
  hasSession(req: IncomingMessage): boolean {
    const header = req.headers.cookie;
    if (header === undefined) return false;
    const prefix = `${this.cookieName}=`;
    return header
      .split(';')
      .map((part) => part.trim())
      .some((part) => part.startsWith(prefix) && sameText(part.slice(prefix.length), this.session));
  }

  /** Whether the address's `?token=` is the secret. */
  showsSecret(query: URLSearchParams): boolean {
    const given = query.get('token');
    return given !== null && sameText(given, this.secret);
  }
}

/** Compares a secret in constant time (for equal lengths; the length itself is public). */
export function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
