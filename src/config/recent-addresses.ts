/**
 * The addresses last used in `orders new`, kept in the profile (`recent-addresses`, most recent
 * first, at most RECENT_ADDRESSES) so that the next order offers them again.
 */
import { ProfileStore, readConfigFile } from './profiles.js';

/** An address of an order, every field as typed. */
export interface Address {
  recipient: string;
  street: string;
  zipCode: string;
  city: string;
  country: string;
}

export const RECENT_ADDRESSES = 5;
const FIELD = 'recent-addresses';
const KEYS = ['recipient', 'street', 'zipCode', 'city', 'country'] as const;

function isAddress(value: unknown): value is Address {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return KEYS.every((key) => typeof record[key] === 'string');
}

/** Whether two addresses are the same, field by field. */
export function sameAddress(a: Address, b: Address): boolean {
  return KEYS.every((key) => a[key] === b[key]);
}

/** The profile's recent addresses, most recent first; anything malformed in the file is skipped. */
export async function readRecentAddresses(env: NodeJS.ProcessEnv, profileName: string): Promise<Address[]> {
  const config = await readConfigFile(env);
  const kept = (config.profiles?.[profileName] as Record<string, unknown> | undefined)?.[FIELD];
  if (!Array.isArray(kept)) return [];
  return kept
    .filter(isAddress)
    .slice(0, RECENT_ADDRESSES)
    .map((address) => Object.fromEntries(KEYS.map((key) => [key, address[key]])) as unknown as Address);
}

/** Puts `used` first (the first of them most recent), without duplicates, and keeps the newest few. */
export function withRecent(recent: Address[], used: Address[]): Address[] {
  const list: Address[] = [];
  for (const address of [...used, ...recent]) {
    if (!list.some((kept) => sameAddress(kept, address))) list.push(address);
  }
  return list.slice(0, RECENT_ADDRESSES);
}

/** Records the addresses an order used in the profile. */
export async function rememberAddresses(
  env: NodeJS.ProcessEnv,
  profileName: string,
  used: Address[],
): Promise<void> {
  const recent = await readRecentAddresses(env, profileName);
  const store = await ProfileStore.open(env);
  await store.setKept(profileName, FIELD, withRecent(recent, used));
}
