// Inputs are UTF-8: UTF-16 recognised by its byte order mark or its NUL bytes, a byte UTF-8 does not
// allow found wherever it is (a character cut between two chunks is not one), and the refusal worded.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors.js';
import {
  decodeUtf8,
  detectUtf16,
  encodingError,
  firstInvalidUtf8,
  lineOfOffset,
  Utf8Check,
} from '../../../src/import/read/encoding.js';
import { lines } from '../../support/import-input.js';

describe('Utf8Check', () => {
  it('accepts a character cut between two chunks, and reports one cut by the end of the input', () => {
    const text = Buffer.from('a€b😀');
    const check = new Utf8Check();
    // Split inside the euro sign (3 bytes) and inside the emoji (4 bytes).
    expect(check.push(text.subarray(0, 2))).toBeUndefined();
    expect(check.push(text.subarray(2, 6))).toBeUndefined();
    expect(check.push(text.subarray(6))).toBeUndefined();
    expect(check.end()).toBeUndefined();

    const cut = new Utf8Check();
    expect(cut.push(Buffer.from('ab\xe2\x82', 'latin1'))).toBeUndefined();
    expect(cut.end()).toEqual({ kind: 'invalid-utf8', offset: 2, bytes: Buffer.from([0xe2, 0x82]) });
  });

  it('gives the offset in the whole input of a byte that is not UTF-8', () => {
    const check = new Utf8Check();
    expect(check.push(Buffer.from('line one\n'))).toBeUndefined();
    expect(check.push(Buffer.from([0x42, 0xe9, 0x74, 0x0a]))).toEqual({
      kind: 'invalid-utf8',
      offset: 10,
      bytes: Buffer.from([0xe9, 0x74, 0x0a]),
    });
  });

  it('recognises UTF-16 in the first chunk only', () => {
    const check = new Utf8Check();
    expect(check.push(Buffer.from([0xff, 0xfe, 0x61, 0x00]))).toMatchObject({
      kind: 'utf16',
      endian: 'little',
    });
    const later = new Utf8Check();
    expect(later.push(Buffer.from('a'))).toBeUndefined();
    // NUL bytes are valid UTF-8 once the start was read as text.
    expect(later.push(Buffer.from('a\0b\0c\0', 'latin1'))).toBeUndefined();
  });
});

describe('detectUtf16', () => {
  it('finds UTF-16 by its byte order mark, or by NUL bytes every other byte', () => {
    expect(detectUtf16(Buffer.from([0xfe, 0xff]))).toEqual({
      kind: 'utf16',
      endian: 'big',
      bom: true,
      offset: 0,
    });
    expect(detectUtf16(Buffer.from('externalId,item', 'utf16le'))).toEqual({
      kind: 'utf16',
      endian: 'little',
      bom: false,
      offset: 0,
    });
    expect(detectUtf16(Buffer.from('externalId,item', 'utf16le').swap16())).toMatchObject({ endian: 'big' });
    expect(detectUtf16(Buffer.from('externalId,item'))).toBeUndefined();
    expect(detectUtf16(Buffer.from('a'))).toBeUndefined();
  });
});

describe('firstInvalidUtf8', () => {
  it('finds stray continuation bytes, overlong forms, surrogates and code points past U+10FFFF', () => {
    expect(firstInvalidUtf8(Buffer.from([0x61, 0x80]))).toBe(1);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0xaf]))).toBe(1);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0x62, 0xe0, 0x80, 0x80]))).toBe(2);
    expect(firstInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xf4, 0x90, 0x80, 0x80]))).toBe(1);
    expect(firstInvalidUtf8(Buffer.from('é€😀'))).toBe(Buffer.from('é€😀').length);
  });
});

describe('the refusal', () => {
  it('names the Windows-1252 character a byte would be, and how to convert a CSV', () => {
    const error = encodingError(
      { kind: 'invalid-utf8', offset: 3, bytes: Buffer.from([0xe9]) },
      'in.csv',
      2,
      'csv',
    );
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe(
      'in.csv is not UTF-8 text (line 2 has a byte UTF-8 does not allow): save it from Excel as "CSV UTF-8 (Comma delimited)", or convert it with iconv -f WINDOWS-1252 -t UTF-8 (if it came from an older Excel, it is most likely Windows-1252); nothing was sent.',
    );
    expect(lines(error.problems)).toEqual([
      'in.csv:2: byte 0xE9 ("é" in Windows-1252) is not UTF-8: the file is in another encoding',
    ]);
    const unprintable = encodingError(
      { kind: 'invalid-utf8', offset: 0, bytes: Buffer.from([0x81]) },
      'a',
      1,
      'csv',
    );
    expect(unprintable.problems[0]?.message).toBe('byte 0x81 is not UTF-8: the file is in another encoding');
  });

  it('words UTF-16 by its byte order and mark, for JSON as for CSV', () => {
    const error = encodingError({ kind: 'utf16', endian: 'big', bom: false, offset: 0 }, 'o.json', 1, 'json');
    expect(error.message).toBe(
      'o.json is UTF-16 text (big-endian, without a byte order mark), but ordercli reads UTF-8: save it as UTF-8, or convert it with iconv -f UTF-16BE -t UTF-8; nothing was sent.',
    );
  });

  it('decodes a whole input, or refuses it naming the line of the byte', () => {
    expect(decodeUtf8(Buffer.from('{"a": "é"}'), 'o.json', 'json')).toBe('{"a": "é"}');
    const bytes = Buffer.concat([Buffer.from('{\n"a":\n"'), Buffer.from([0xe9]), Buffer.from('"}')]);
    expect(() => decodeUtf8(bytes, 'o.json', 'json')).toThrow('o.json is not UTF-8 text (line 3 has');
    expect(lineOfOffset(bytes, 0)).toBe(1);
    expect(lineOfOffset(bytes, 2)).toBe(2);
  });
});
