/**
 * The JSON input format: one array of records, split element by element as the file streams in
 * (json-array.ts), each parsed on its own. Rejects are written back as an array, each record
 * indented as it was read, or as its text when it was not JSON.
 */
import { StringDecoder } from 'node:string_decoder';
import type { ImportKind } from '../kind.js';
import type { SourceRecord } from '../types.js';
import { readBytes } from './input-file.js';
import type { FormatReader, RejectsWriter } from './input-format.js';
import { splitJsonArray } from './json-array.js';
import { recordFromText, unreadable } from './json-record.js';
import { DEFAULT_LIMITS, type InputLimits, orderTextTooLarge } from './limits.js';
import { createTextFile } from './text-file.js';

export const reader: FormatReader = {
  async open({ file, path }, { kind, limits }) {
    return {
      layout: { format: 'json' },
      records: () => jsonArrayRecords(path, file, kind, limits),
    };
  },

  openRejects: openJsonRejects,
};

/** The records of a file holding a JSON array. */
export async function* jsonArrayRecords(
  path: string,
  file: string,
  kind: ImportKind,
  limits: InputLimits = DEFAULT_LIMITS,
): AsyncGenerator<SourceRecord> {
  let index = 0;
  const elements = splitJsonArray(textChunks(path, file), file, limits.maxOrderBytes, kind);
  for await (const element of elements) {
    if (element.tooLarge) {
      const location = { file, line: element.line, endLine: element.endLine };
      const message = orderTextTooLarge(limits, 'this order');
      yield unreadable(index++, '', location, { file, line: element.line, message });
      continue;
    }
    yield recordFromText(element.text, index++, file, element, kind);
  }
}

async function* textChunks(path: string, file: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const bytes = readBytes(path, file, 'json');
  try {
    for await (const chunk of bytes) yield decoder.write(chunk as Buffer);
    const rest = decoder.end();
    if (rest !== '') yield rest;
  } finally {
    bytes.destroy();
  }
}

/** A JSON array of rejects; a record that was not JSON is written back exactly as it was. */
async function openJsonRejects(path: string): Promise<RejectsWriter> {
  const out = await createTextFile(path);
  await out.write('[');
  let count = 0;
  return {
    async add(record) {
      const text = typeof record.raw === 'string' ? record.raw : indent(JSON.stringify(record.raw, null, 2));
      await out.write(`${count === 0 ? '\n' : ',\n'}${text}`);
      count++;
    },
    async close() {
      await out.write(count === 0 ? ']\n' : '\n]\n');
      await out.end();
      return count;
    },
  };
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
