// Where a JSON text is broken, said as a person fixes it: the line, the column and the mistake.
import { describe, expect, it } from 'vitest';
import { locateSyntaxError, parseJson } from '../../../src/import/read/json-syntax.js';

describe('JSON syntax positions', () => {
  it.each([
    ['{"a": 1,}', 'a comma before } (remove the trailing comma)', 1, 9],
    ['{\n  "a": 1\n  "b": 2\n}', 'expected , or } after a property value, found "\\""', 3, 3],
    ["{'a': 1}", 'expected a property name in double quotes, found "\'"', 1, 2],
    [
      '{"a": tru}',
      'expected a value (text in double quotes, a number, true, false, null, an object or a list), found "t"',
      1,
      7,
    ],
    ['{"a": 012}', 'not a valid number (no leading zeros, digits after the point)', 1, 8],
    ['{"a": "x\ny"}', 'a line break inside a string (write it as \\n)', 1, 9],
    ['{"a": "x', 'a string is never closed (a " is missing)', 1, 7],
    ['{"a": [1, 2}', 'expected , or ] after a list element, found "}"', 1, 12],
    ['{"a": 1} x', 'unexpected "x" after the end of the JSON value', 1, 10],
    ['{"a": "\\q"}', '"\\\\q" is not a JSON escape', 1, 8],
  ])('%j: %s at %i:%i', (text, message, line, column) => {
    const result = parseJson(text);
    expect(result).toEqual({ ok: false, error: { line, column, message } });
  });

  it('finds nothing wrong in valid JSON', () => {
    expect(
      locateSyntaxError('{"a": [1, -2.5e-3, true, false, null, "\\u00e9\\n"], "b": {}}'),
    ).toBeUndefined();
    expect(parseJson(' [1] ')).toEqual({ ok: true, value: [1] });
  });

  it('counts positions from where an element starts in its file', () => {
    expect(parseJson('{"a":,}', { line: 7, column: 5 })).toMatchObject({
      ok: false,
      error: { line: 7, column: 10 },
    });
    expect(parseJson('{\n"a":,}', { line: 7, column: 5 })).toMatchObject({
      ok: false,
      error: { line: 8, column: 5 },
    });
  });
});
