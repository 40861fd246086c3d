/**
 * The one rule for "this base URL is that service", used by both stores: a base URL with no
 * records of its own may name a service a ledger already holds under another name (`localhost`
 * after `127.0.0.1`, a DNS name after its address), and then uses that service's records, so that
 * another name of a service never sends an order twice. Two base URLs name the same service when
 * their scheme, port and path are equal (`serviceKey`) and their host names are equal or resolve
 * to a common address.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { serviceKey } from '../core/url.js';

/**
 * Of the normalized base URLs a ledger holds (`known`), the one naming the same service as
 * `baseUrl`; undefined when `known` holds `baseUrl` itself, or none names it. Known base URLs are
 * tried in sorted order, so every process picks the same one.
 */
export async function findSameService(
  baseUrl: string,
  known: readonly string[],
): Promise<string | undefined> {
  const wanted = serviceKey(baseUrl);
  if (!wanted || known.includes(baseUrl)) return undefined;
  let wantedAddresses: Set<string> | undefined;
  for (const other of [...known].sort()) {
    const key = serviceKey(other);
    if (!key || key.rest !== wanted.rest) continue;
    if (key.host.toLowerCase() === wanted.host.toLowerCase()) return other;
    wantedAddresses ??= await addressesOf(wanted.host);
    // A name that resolves to nothing shares no address with anything.
    if (wantedAddresses.size === 0) return undefined;
    const otherAddresses = await addressesOf(key.host);
    if ([...otherAddresses].some((address) => wantedAddresses!.has(address))) return other;
  }
  return undefined;
}

/** The addresses a host name resolves to (none when it does not resolve); an address is itself. */
async function addressesOf(host: string): Promise<Set<string>> {
  if (isIP(host) !== 0) return new Set([host]);
  try {
    return new Set((await lookup(host, { all: true })).map((entry) => entry.address));
  } catch {
    return new Set();
  }
}
