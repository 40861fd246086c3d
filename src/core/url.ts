/**
 * The URL rules of ordercli: which hosts are loopback, what a base URL or an http(s) URL given
 * in a flag must look like, and when two spellings name the same service.
 */
import { UsageError } from './errors.js';
import { redactUrlPassword } from './redact.js';

/** Hosts that never leave this machine, where plain http:// is harmless. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

/** A plain http:// URL to another machine: what travels over it can be read on the way. */
export function isInsecureHttp(url: URL): boolean {
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}

/** A path without its trailing slashes (`/hooks/` → `/hooks`, `/` → ``), for comparing paths. */
export function withoutTrailingSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

/**
 * Parses an http:// or https:// URL given in `flag` (`--forward-to`); a UsageError naming the
 * flag and showing `example` otherwise.
 */
export function parseHttpUrl(value: string, flag: string, example: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${flag} must be a URL such as ${example}, not ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an http:// or https:// URL, not ${url.protocol}//.`);
  }
  return url;
}

/** Checks a base URL: http(s) only, no credentials, and plain http only for loopback unless allowed. */
export function checkBaseUrl(value: string, allowInsecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `The base URL ${JSON.stringify(value)} is not a URL: use the form https://orders.example.com.`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(
      `The base URL must start with https:// (or http:// for a local service), not ${url.protocol}//.`,
    );
  }
  if (url.username || url.password) {
    throw new UsageError(
      'The base URL must not contain credentials: pass the token with --token or ORDERCLI_TOKEN.',
    );
  }
  if (isInsecureHttp(url) && !allowInsecureHttp) {
    throw new UsageError(
      `Refusing plain http:// to ${url.hostname}: the token would travel unencrypted. Use https://, or pass --allow-insecure-http if you really mean it.`,
    );
  }
  return url;
}

/** A base URL as journals and ledgers store it: host in lower case, no trailing slash. */
export function normalizeBaseUrl(baseUrl: string): string {
  try {
    return withoutTrailingSlashes(new URL(baseUrl).href);
  } catch {
    return withoutTrailingSlashes(baseUrl);
  }
}

/**
 * The host of a base URL, and what else must be equal (scheme, port, path) for two base URLs
 * to reach one service; undefined when it is not a URL.
 */
export function serviceKey(baseUrl: string): { host: string; rest: string } | undefined {
  try {
    const url = new URL(baseUrl);
    const port = url.port || (url.protocol === 'https:' ? '443' : '80');
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      rest: `${url.protocol}${port}${withoutTrailingSlashes(url.pathname)}`,
    };
  } catch {
    return undefined;
  }
}

/** A URL as it may be shown: its password replaced by `***` (a PostgreSQL ledger's URL). */
export function withoutPassword(value: string): string {
  return redactUrlPassword(value);
}
