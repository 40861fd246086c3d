/**
 * Order inputs are UTF-8. A file in another encoding is refused before anything is read from
 * it, saying what it is and how to save it as UTF-8: UTF-16 (Excel's "Unicode Text"), found by
 * its byte order mark or its NUL bytes, and bytes that UTF-8 does not allow (Windows-1252 from an
 * older Excel's "CSV (Comma delimited)"), found wherever they are, with their line.
 */
import { isUtf8 } from 'node:buffer';
import { InputError } from '../../core/errors.js';

/** What is wrong with the encoding of an input, and where (a byte offset in the file). */
export type EncodingProblem =
  | { kind: 'utf16'; endian: 'little' | 'big'; bom: boolean; offset: 0 }
  | { kind: 'invalid-utf8'; offset: number; bytes: Buffer };

/** Bytes of the start of a file looked at to recognise UTF-16 without a byte order mark. */
const SNIFF_BYTES = 1024;

/**
 * Checks a stream of bytes, chunk by chunk, to be UTF-8. A character cut between two chunks is
 * carried to the next one; `end()` reports one cut at the end of the input.
 */
export class Utf8Check {
  private offset = 0;
  private carry: Buffer | undefined;
  private first = true;

  /** The first problem in this chunk, or undefined when it is UTF-8 so far. */
  push(chunk: Buffer): EncodingProblem | undefined {
    if (this.first) {
      this.first = false;
      const utf16 = detectUtf16(chunk);
      if (utf16) return utf16;
    }
    const start = this.offset - (this.carry?.length ?? 0);
    const bytes = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.offset += chunk.length;
    const complete = bytes.length - incompleteTail(bytes);
    this.carry = complete < bytes.length ? Buffer.from(bytes.subarray(complete)) : undefined;
    const body = complete < bytes.length ? bytes.subarray(0, complete) : bytes;
    if (isUtf8(body)) return undefined;
    const at = firstInvalidUtf8(body);
    return { kind: 'invalid-utf8', offset: start + at, bytes: Buffer.from(body.subarray(at, at + 4)) };
  }

  /** A character cut off by the end of the input. */
  end(): EncodingProblem | undefined {
    if (this.carry === undefined) return undefined;
    return { kind: 'invalid-utf8', offset: this.offset - this.carry.length, bytes: this.carry };
  }
}

/** UTF-16 by its byte order mark, or by the NUL bytes that ASCII text has every other byte in it. */
export function detectUtf16(head: Buffer): EncodingProblem | undefined {
  if (head[0] === 0xff && head[1] === 0xfe) return { kind: 'utf16', endian: 'little', bom: true, offset: 0 };
  if (head[0] === 0xfe && head[1] === 0xff) return { kind: 'utf16', endian: 'big', bom: true, offset: 0 };
  const pairs = Math.floor(Math.min(head.length, SNIFF_BYTES) / 2);
  if (pairs === 0) return undefined;
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < pairs; i++) {
    if (head[2 * i] === 0) evenZeros++;
    if (head[2 * i + 1] === 0) oddZeros++;
  }
  if (oddZeros >= pairs * 0.4 && evenZeros <= pairs * 0.05)
    return { kind: 'utf16', endian: 'little', bom: false, offset: 0 };
  if (evenZeros >= pairs * 0.4 && oddZeros <= pairs * 0.05)
    return { kind: 'utf16', endian: 'big', bom: false, offset: 0 };
  return undefined;
}

/** Bytes at the end of a buffer that start a character the buffer does not finish. */
function incompleteTail(bytes: Buffer): number {
  const end = bytes.length;
  for (let back = 1; back <= 3 && back <= end; back++) {
    const byte = bytes[end - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needs > back ? back : 0;
  }
  return 0;
}

/** Offset of the first byte that does not start a valid UTF-8 character (the buffer is known to have one). */
export function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? low : 0x80) || c > (k === 1 ? high : 0xbf)) return i;
    }
    i += length;
  }
  return bytes.length;
}

/** What the input is for, to say how to save it as UTF-8. */
export type InputKind = 'csv' | 'json';

/** The error that refuses an input for its encoding: what it is, where, how to save it as UTF-8. */
export function encodingError(
  problem: EncodingProblem,
  file: string,
  line: number,
  kind: InputKind,
): InputError {
  if (problem.kind === 'utf16') {
    const what = `UTF-16 text (${problem.endian}-endian, ${problem.bom ? 'with' : 'without'} a byte order mark)`;
    const from = problem.bom ? 'UTF-16' : problem.endian === 'little' ? 'UTF-16LE' : 'UTF-16BE';
    const save =
      kind === 'csv'
        ? `save it from Excel as "CSV UTF-8 (Comma delimited)" (not "Unicode Text"), or convert it with iconv -f ${from} -t UTF-8`
        : `save it as UTF-8, or convert it with iconv -f ${from} -t UTF-8`;
    return new InputError(`${file} is ${what}, but ordercli reads UTF-8: ${save}; nothing was sent.`, [
      { file, line, message: `the file is ${what}, not UTF-8` },
    ]);
  }
  const hex = problem.bytes.subarray(0, 1).toString('hex').toUpperCase();
  const legacy = windows1252(problem.bytes.subarray(0, 1));
  const save =
    kind === 'csv'
      ? 'save it from Excel as "CSV UTF-8 (Comma delimited)", or convert it with iconv -f WINDOWS-1252 -t UTF-8 (if it came from an older Excel, it is most likely Windows-1252)'
      : 'save it as UTF-8, or convert it with iconv -f WINDOWS-1252 -t UTF-8 (if it is Windows-1252)';
  return new InputError(
    `${file} is not UTF-8 text (line ${line} has a byte UTF-8 does not allow): ${save}; nothing was sent.`,
    [
      {
        file,
        line,
        message: `byte 0x${hex}${legacy ? ` ("${legacy}" in Windows-1252)` : ''} is not UTF-8: the file is in another encoding`,
      },
    ],
  );
}

/** A byte as Windows-1252 shows it, when it is a printable character there. */
function windows1252(byte: Buffer): string | undefined {
  try {
    const text = new TextDecoder('windows-1252').decode(byte);
    return /^[\u00a0-\uffff]$/.test(text) && text !== '\ufffd' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The 1-based line of a byte offset in a buffer. */
export function lineOfOffset(bytes: Buffer, offset: number): number {
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) line++;
  return line;
}

/** The text of a whole input held in memory (`orders create`), refused when it is not UTF-8. */
export function decodeUtf8(bytes: Buffer, file: string, kind: InputKind): string {
  const check = new Utf8Check();
  const problem = check.push(bytes) ?? check.end();
  if (problem) throw encodingError(problem, file, lineOfOffset(bytes, problem.offset), kind);
  return bytes.toString('utf8');
}
