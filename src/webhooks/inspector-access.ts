/**
 * Who may use the inspector: the person at the terminal where `listen` printed its address.
 *
 * A random secret is printed on the terminal in the page's address
 * (`http://127.0.0.1:4781/?token=…`). The page keeps it in its tab's `sessionStorage` and sends it
 * in the `X-Ordercli-Token` header with each of its requests (the event stream, Copy as command,
 * Download body, Replay); a request without it is refused, whatever its path (nothing tells a caller
 * without it which paths exist). The page itself holds no secret and no data, so it is served to
 * anyone: that is what lets a reload work once the secret has left the address bar.
 *
 * No cookie, on purpose: cookies ignore ports, so a cookie of 127.0.0.1:4781 is sent to every other
 * server on 127.0.0.1 the browser visits, and `SameSite` does not help (same site). A header is only
 * ever sent by the page's own script, and `sessionStorage` belongs to one origin (port included)
 * and one tab. Another local user or process can connect to 127.0.0.1 but does not know the secret.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header the page sends the secret in. */
export const TOKEN_HEADER = 'x-ordercli-token';

export class InspectorAccess {
  /** Printed on the terminal in the page's address; the page sends it back in `TOKEN_HEADER`. */
  readonly secret = randomBytes(32).toString('base64url');

  /** The address to open: the page's, with the secret. */
  openUrl(base: string): string {
    return `${base}?token=${this.secret}`;
  }

  /** Whether the request carries the secret in `X-Ordercli-Token` (only the page's script sends it). */
  carriesSecret(req: IncomingMessage): boolean {
    const given = req.headers[TOKEN_HEADER];
    return typeof given === 'string' && sameText(given, this.secret);
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
