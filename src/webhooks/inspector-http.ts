/**
 * The HTTP answers of `listen --inspect`: every one carries the same security headers (no sniffing,
 * no referrer, no caching, no framing, same-origin only) and a Content-Security-Policy — the page's
 * allows its own scripts and styles by nonce, every other answer allows nothing.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The page, its `__NONCE__`s filled in (it holds no secret: the page's script reads it from its tab). */
export function sendPage(res: ServerResponse, page: string): void {
  const nonce = randomBytes(16).toString('base64');
  const html = page.replaceAll('__NONCE__', nonce);
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-security-policy': contentSecurityPolicy(nonce),
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
  });
  res.end(res.req.method === 'HEAD' ? undefined : html);
}

/** A refusal in one line of text; the connection is closed after it. */
export function refuse(
  res: ServerResponse,
  status: number,
  text: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...extra,
    'content-security-policy': "default-src 'none'",
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text) + 1,
    connection: 'close',
  });
  res.end(`${text}\n`);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-security-policy': "default-src 'none'",
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** A request's body as text, refused past `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`body over ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
