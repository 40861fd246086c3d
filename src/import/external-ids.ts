/**
 * The externalIds seen in an input, with the line where each first appeared: the one thing the
 * validation pass must remember about every order. A `Map<string, number>` of a million ids
 * makes V8's heap grow by some 200 MB (the strings, the table, its rehashes and the garbage
 * around them); here the ids' UTF-8 bytes, lines and an open-addressing hash table live in
 * typed arrays outside the heap, about 30 bytes per id.
 */
export class ExternalIdIndex {
  /** The UTF-8 bytes of every id, back to back; id `n` is `bytes[starts[n], starts[n + 1])`. */
  private bytes: Buffer = Buffer.alloc(64 * 1024);
  private starts: Int32Array = new Int32Array(1024);
  private lines: Int32Array = new Int32Array(1024);
  private count = 0;
  /** Open addressing, linear probing: `slots[h]` is an id's number + 1, or 0 when free. */
  private slots: Int32Array = new Int32Array(2048);
  private scratch: Buffer = Buffer.alloc(256);

  /** Records `id` at `line`, or returns the line where it was recorded before. */
  addOrGet(id: string, line: number): number | undefined {
    const length = Buffer.byteLength(id, 'utf8');
    if (length > this.scratch.length) this.scratch = Buffer.alloc(Math.max(length, this.scratch.length * 2));
    this.scratch.write(id, 0, 'utf8');
    const mask = this.slots.length - 1;
    for (let slot = hash(this.scratch, 0, length) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry === -1) {
        this.insert(slot, length, line);
        return undefined;
      }
      if (this.equals(entry, length)) return this.lines[entry];
    }
  }

  get size(): number {
    return this.count;
  }

  /** The number of the id whose UTF-8 bytes are `bytes[start, end)` (0, 1, … in order recorded), or -1. */
  entryOf(bytes: Buffer, start: number, end: number): number {
    const length = end - start;
    const mask = this.slots.length - 1;
    for (let slot = hash(bytes, start, end) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry === -1) return -1;
      const from = this.starts[entry]!;
      const to = this.starts[entry + 1]!;
      if (to - from === length && bytes.compare(this.bytes, from, to, start, end) === 0) return entry;
    }
  }

  /** Calls `visit` with the UTF-8 bytes of each id recorded. */
  forEachId(visit: (bytes: Buffer, start: number, end: number) => void): void {
    for (let entry = 0; entry < this.count; entry++)
      visit(this.bytes, this.starts[entry]!, this.starts[entry + 1]!);
  }

  private equals(entry: number, length: number): boolean {
    const start = this.starts[entry]!;
    const end = this.starts[entry + 1]!;
    return end - start === length && this.scratch.compare(this.bytes, start, end, 0, length) === 0;
  }

  private insert(slot: number, length: number, line: number): void {
    const start = this.starts[this.count]!;
    if (start + length > this.bytes.length) this.bytes = grow(this.bytes, start + length);
    this.scratch.copy(this.bytes, start, 0, length);
    if (this.count + 2 > this.starts.length) {
      this.starts = growInts(this.starts);
      this.lines = growInts(this.lines);
    }
    this.starts[this.count + 1] = start + length;
    this.lines[this.count] = line;
    this.slots[slot] = this.count + 1;
    this.count++;
    // At most half full, so that probes stay short.
    if (this.count * 2 > this.slots.length) this.rehash();
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let slot = hash(this.bytes, this.starts[entry]!, this.starts[entry + 1]!) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.slots = slots;
  }
}

/** FNV-1a over bytes `[start, end)`. */
function hash(bytes: Buffer, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

function grow(buffer: Buffer, needed: number): Buffer {
  const grown = Buffer.alloc(Math.max(needed, buffer.length * 2));
  buffer.copy(grown);
  return grown;
}

function growInts(array: Int32Array): Int32Array {
  const grown = new Int32Array(array.length * 2);
  grown.set(array);
  return grown;
}
