/** Reading the service's records leniently: any field may be missing or of another type than documented. */

/** A record as received. */
export type LooseRecord = Record<string, unknown>;

export function isPlainObject(value: unknown): value is LooseRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is a plain object, else an empty one. */
export function asRecord(value: unknown): LooseRecord {
  return isPlainObject(value) ? value : {};
}
