/**
 * `listen --forward-to` leading back to the listener itself, which would forward each event to
 * itself without end. Two guards:
 *
 * - before listening, `forwardLoopOf` resolves the target's host (every address `dns.lookup`
 *   gives, with `0.0.0.0`, `0`, `::` and IPv4-mapped IPv6 read as what they reach) and compares
 *   each address, the port and the path with what the receiver is bound to (for a wildcard
 *   `--host`, every address of this machine);
 * - at run time, each forwarded request carries `X-Ordercli-Forwarded-By` with the random id of
 *   this run (added to the ids already there), and the receiver answers one that comes back with
 *   this id 200 without recording nor forwarding it (`receiver.ts`).
 */
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { withoutTrailingSlashes } from '../core/url.js';

/** The hop header: the ids of the listen runs that forwarded the request, comma-separated. */
export const FORWARDED_BY_HEADER = 'x-ordercli-forwarded-by';

/** A random id for one listen run, carried in the hop header of what it forwards. */
export function newHopId(): string {
  return randomBytes(9).toString('base64url');
}

/** The hop header's value once `hopId` forwards a request that arrived with `previous`. */
export function withHop(previous: string | undefined, hopId: string): string {
  return previous === undefined || previous.trim() === '' ? hopId : `${previous}, ${hopId}`;
}

/** Whether a hop header's value names `hopId` (the request went through this run already). */
export function carriesHop(value: string | string[] | undefined, hopId: string): boolean {
  if (value === undefined) return false;
  const values = Array.isArray(value) ? value : [value];
  return values.some((v) => v.split(',').some((id) => id.trim() === hopId));
}

/**
 * The address through which `target` reaches the receiver listening at `listening` (its real
 * address and port, as `WebhookReceiver.url` gives them); undefined when it does not.
 */
export async function forwardLoopOf(target: URL, listening: string): Promise<string | undefined> {
  const own = new URL(listening);
  if (target.protocol !== 'http:' || portOf(target) !== portOf(own)) return undefined;
  if (withoutTrailingSlashes(target.pathname) !== withoutTrailingSlashes(own.pathname)) return undefined;
  const bound = normalizeAddress(bare(own.hostname));
  const receives = isUnspecified(bound) ? isLocalAddress() : (address: string) => address === bound;
  for (const address of await addressesOf(bare(target.hostname))) {
    if (receives(reached(address))) return address;
  }
  return undefined;
}

/** Every address a host name resolves to, normalized; none when it does not resolve. */
async function addressesOf(host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [normalizeAddress(host)];
  const found = await lookup(host, { all: true, verbatim: true }).catch(() => []);
  return found.map(({ address }) => normalizeAddress(address));
}

/** Where a connection to `address` arrives: the unspecified addresses reach this machine's loopback. */
function reached(address: string): string {
  if (address === '0.0.0.0') return '127.0.0.1';
  if (address === '::') return '::1';
  return address;
}

/** Whether an address is this machine's (an interface's, or loopback): what a wildcard bind receives on. */
function isLocalAddress(): (address: string) => boolean {
  const local = new Set(['::1']);
  for (const infos of Object.values(networkInterfaces())) {
    for (const info of infos ?? []) local.add(normalizeAddress(info.address));
  }
  return (address) => local.has(address) || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/** Lower case, without a zone, and an IPv4-mapped IPv6 address (`::ffff:7f00:1`) as its IPv4 form. */
function normalizeAddress(address: string): string {
  const plain = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (dotted) return dotted[1]!;
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(plain);
  if (!hex) return plain;
  const [high, low] = [Number.parseInt(hex[1]!, 16), Number.parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

function isUnspecified(address: string): boolean {
  return address === '0.0.0.0' || address === '::';
}

function bare(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '');
}

function portOf(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}
