/**
 * The NDJSON input format: one JSON object per line, blank lines skipped. A line longer than the
 * largest record is not kept (only counted to its end): a 50 MB line costs no more memory than a
 * short one. Rejects are written back one per line, a line that was not JSON exactly as it was.
 */
import { StringDecoder } from 'node:string_decoder';
import type { ImportKind } from '../kind.js';
import type { SourceRecord } from '../types.js';
import { readBytes } from './input-file.js';
import type { FormatReader, RejectsWriter } from './input-format.js';
import { recordFromText, unreadable } from './json-record.js';
import { DEFAULT_LIMITS, type InputLimits, orderTextTooLarge } from './limits.js';
import { createTextFile } from './text-file.js';

export const reader: FormatReader = {
  async open({ file, path }, { kind, limits }) {
    return {
      layout: { format: 'ndjson' },
      records: () => ndjsonRecords(path, file, kind, limits),
    };
  },

  async openRejects(path): Promise<RejectsWriter> {
    const out = await createTextFile(path);
    let count = 0;
    return {
      async add(record) {
        await out.write(`${typeof record.raw === 'string' ? record.raw : JSON.stringify(record.raw)}\n`);
        count++;
      },
      async close() {
        await out.end();
        return count;
      },
    };
  },
};

/** The records of an NDJSON file, one per line that is not blank. */
export async function* ndjsonRecords(
  path: string,
  file: string,
  kind: ImportKind,
  limits: InputLimits = DEFAULT_LIMITS,
): AsyncGenerator<SourceRecord> {
  const decoder = new StringDecoder('utf8');
  const bytes = readBytes(path, file, 'json');
  const lines = new LineReader(file, kind, limits);
  try {
    for await (const chunk of bytes) yield* lines.read(decoder.write(chunk as Buffer));
    yield* lines.end(decoder.end());
  } finally {
    bytes.destroy();
  }
}

/** Cuts the text into lines, keeping the start of a line that goes on into the next chunk. */
class LineReader {
  private line = 0;
  private index = 0;
  /** The start of the current line, read from earlier chunks (dropped past the limit), and its length. */
  private carry = '';
  private carried = 0;

  constructor(
    private readonly file: string,
    private readonly kind: ImportKind,
    private readonly limits: InputLimits,
  ) {}

  /** The records of the lines that end in `text`. */
  *read(text: string): Generator<SourceRecord> {
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const record = this.lineRecord(text, start, end);
      if (record) yield record;
      start = end + 1;
    }
    this.keepRest(text, start);
  }

  /** The record of a last line without a line break. */
  *end(rest: string): Generator<SourceRecord> {
    this.keepRest(rest, 0);
    if (this.carried === 0) return;
    const record = this.lineRecord('', 0, 0);
    if (record) yield record;
  }

  /** The record of the line that ends at `end` of `text` (undefined for a blank line). */
  private lineRecord(text: string, start: number, end: number): SourceRecord | undefined {
    const line = ++this.line;
    const { file, limits, carry } = this;
    const tooLarge = this.carried + (end - start) > limits.maxOrderBytes;
    let lineText = tooLarge ? '' : carry === '' ? text.slice(start, end) : carry + text.slice(start, end);
    this.carry = '';
    this.carried = 0;
    const where = { file, line, column: 1, endLine: line };
    if (tooLarge) {
      const message = orderTextTooLarge(limits, 'this line');
      return unreadable(this.index++, '', where, { file, line, message });
    }
    if (line === 1 && lineText.charCodeAt(0) === 0xfeff) lineText = lineText.slice(1);
    if (lineText.charCodeAt(lineText.length - 1) === 0x0d) lineText = lineText.slice(0, -1);
    if (lineText.trim() === '') return undefined;
    return recordFromText(lineText, this.index++, file, where, this.kind);
  }

  private keepRest(text: string, start: number): void {
    if (start >= text.length) return;
    this.carried += text.length - start;
    this.carry = this.carried <= this.limits.maxOrderBytes ? this.carry + text.slice(start) : '';
  }
}
