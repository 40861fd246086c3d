/**
 * An exact map from strings to numbers for a million keys and more: what an import keeps of
 * every `externalId` of its input (the line it first appeared on, then what the ledger knows of
 * it). Its keys are UTF-8 bytes in one growing buffer and its slots are typed arrays, so it
 * lives outside the JavaScript heap: a million keys take about 35 MB there instead of 60 MB of
 * small heap objects, and the garbage collector, which lets the heap grow to a multiple of what
 * it holds, has nothing of it to multiply.
 *
 * Keys are compared byte for byte (never by hash alone). Entries are never removed; a value can
 * be any number but NaN, which the table uses for "no value" (`delete` sets it).
 */

const EMPTY = 0;
const MAX_LOAD = 0.75;
const NO_VALUE = Number.NaN;
/** Offsets into the keys' bytes are 32-bit. */
const MAX_BYTES = 2 ** 32 - 1;
/** Above this many bytes a key is compared with Buffer.compare rather than byte by byte. */
const SHORT_KEY = 48;

export class KeyTable implements Iterable<string> {
  /** The keys' bytes, one after another; entry i is `bytes[starts[i], starts[i + 1])`. */
  private bytes = Buffer.allocUnsafe(1 << 16);
  private starts = new Uint32Array(1 << 10);
  private values = new Float64Array(1 << 10);
  /** Open addressing (linear probing): entry index + 1, or EMPTY. */
  private slots = new Uint32Array(1 << 11);
  private shift = 32 - 11;
  private entries = 0;
  private present = 0;
  private scratch = Buffer.allocUnsafe(256);

  /** Keys with a value (a key whose value was deleted is not counted). */
  get size(): number {
    return this.present;
  }

  /** Entries ever added (indexes 0 to count - 1), deleted values included. */
  get count(): number {
    return this.entries;
  }

  get(key: string): number | undefined {
    const index = this.find(key);
    if (index < 0) return undefined;
    const value = this.values[index]!;
    return Number.isNaN(value) ? undefined : value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Sets the value of a key (NaN is refused: it means "no value"); returns the key's index. */
  set(key: string, value: number): number {
    if (Number.isNaN(value)) throw new RangeError('KeyTable: a value cannot be NaN');
    const length = this.encode(key);
    const hash = hashBytes(this.scratch, 0, length);
    let slot = this.slotOf(hash);
    for (;;) {
      const held = this.slots[slot]!;
      if (held === EMPTY) break;
      const index = held - 1;
      if (this.sameBytes(index, length)) {
        if (Number.isNaN(this.values[index]!)) this.present++;
        this.values[index] = value;
        return index;
      }
      slot = (slot + 1) & (this.slots.length - 1);
    }
    const index = this.append(length, value);
    this.slots[slot] = index + 1;
    if (this.entries > this.slots.length * MAX_LOAD) this.rehash(this.slots.length * 2);
    return index;
  }

  /** Removes a key's value (the key stays known to `indexOf`). */
  delete(key: string): boolean {
    const index = this.find(key);
    if (index < 0 || Number.isNaN(this.values[index]!)) return false;
    this.values[index] = NO_VALUE;
    this.present--;
    return true;
  }

  /** The index of a key ever set, or -1. */
  indexOf(key: string): number {
    return this.find(key);
  }

  /** The value at an index (undefined when deleted). */
  valueAt(index: number): number | undefined {
    const value = this.values[index]!;
    return Number.isNaN(value) ? undefined : value;
  }

  setAt(index: number, value: number): void {
    if (Number.isNaN(value)) throw new RangeError('KeyTable: a value cannot be NaN');
    if (Number.isNaN(this.values[index]!)) this.present++;
    this.values[index] = value;
  }

  /** The key at an index, as a new string. */
  keyAt(index: number): string {
    return this.bytes.toString('utf8', this.starts[index]!, this.starts[index + 1]!);
  }

  /** The FNV-1a hash of the key at an index (`hashBytes` of its UTF-8 bytes). */
  hashAt(index: number): number {
    return hashBytes(this.bytes, this.starts[index]!, this.starts[index + 1]!);
  }

  /** The UTF-8 bytes of the key at an index: valid until the next `set`. */
  bytesAt(index: number): Buffer {
    return this.bytes.subarray(this.starts[index]!, this.starts[index + 1]!);
  }

  /** The keys with a value, in the order they were first set. */
  *[Symbol.iterator](): IterableIterator<string> {
    for (let index = 0; index < this.entries; index++) {
      if (!Number.isNaN(this.values[index]!)) yield this.keyAt(index);
    }
  }

  keys(): IterableIterator<string> {
    return this[Symbol.iterator]();
  }

  private find(key: string): number {
    const length = this.encode(key);
    const hash = hashBytes(this.scratch, 0, length);
    let slot = this.slotOf(hash);
    for (;;) {
      const held = this.slots[slot]!;
      if (held === EMPTY) return -1;
      const index = held - 1;
      if (this.sameBytes(index, length)) return index;
      slot = (slot + 1) & (this.slots.length - 1);
    }
  }

  /** Writes the key's UTF-8 bytes into `scratch`; returns their length. */
  private encode(key: string): number {
    // A UTF-16 code unit never takes more than 3 bytes in UTF-8.
    if (key.length * 3 > this.scratch.length) {
      this.scratch = Buffer.allocUnsafe(Math.max(key.length * 3, this.scratch.length * 2));
    }
    return this.scratch.write(key, 0, 'utf8');
  }

  private sameBytes(index: number, length: number): boolean {
    const start = this.starts[index]!;
    if (this.starts[index + 1]! - start !== length) return false;
    if (length > SHORT_KEY) return this.bytes.compare(this.scratch, 0, length, start, start + length) === 0;
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== this.scratch[i]) return false;
    return true;
  }

  private slotOf(hash: number): number {
    // Fibonacci hashing: the high bits of the product spread keys that differ in a few bytes.
    return Math.imul(hash, 0x9e3779b1) >>> this.shift;
  }

  private append(length: number, value: number): number {
    const index = this.entries;
    if (index + 2 > this.starts.length) {
      const capacity = this.starts.length * 2;
      this.starts = grown(this.starts, new Uint32Array(capacity));
      this.values = grown(this.values, new Float64Array(capacity));
    }
    const start = this.starts[index]!;
    if (start + length > MAX_BYTES) throw new RangeError('KeyTable: more than 4 GiB of keys');
    if (start + length > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, start + length));
      this.bytes.copy(bigger, 0, 0, start);
      this.bytes = bigger;
    }
    this.scratch.copy(this.bytes, start, 0, length);
    this.starts[index + 1] = start + length;
    this.values[index] = value;
    this.entries++;
    this.present++;
    return index;
  }

  private rehash(capacity: number): void {
    this.slots = new Uint32Array(capacity);
    this.shift = 32 - Math.log2(capacity);
    const mask = capacity - 1;
    for (let index = 0; index < this.entries; index++) {
      let slot = this.slotOf(this.hashAt(index));
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.slots[slot] = index + 1;
    }
  }
}

/** FNV-1a (32 bits) of bytes. */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

function grown<T extends Float64Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
