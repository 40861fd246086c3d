// The JSON array splitter: each top-level element of an array streamed in chunks, with its lines,
// and a broken array stopped with the line and column of its mistake.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors.js';
import { splitJsonArray } from '../../../src/import/read/json-array.js';
import { rejection } from '../../support/import-input.js';

async function* chunksOf(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function split(text: string, size = text.length) {
  const elements = [];
  for await (const element of splitJsonArray(chunksOf(text, size), 'a.json')) elements.push(element);
  return elements;
}

describe('JSON array splitter', () => {
  const text = '\uFEFF[\n  {"a": "x, ] } \\" {"},\n  [1, [2]],\n  "s\\\\",\n  -12.5e3 ,\n  true,null\n]\n';

  it.each([1, 3, 7, 64, 4096])(
    'finds each top-level element with its lines, whatever the chunk size (%i)',
    async (size) => {
      const elements = await split(text, size);
      expect(elements.map((element) => element.text)).toEqual([
        '{"a": "x, ] } \\" {"}',
        '[1, [2]]',
        '"s\\\\"',
        '-12.5e3',
        'true',
        'null',
      ]);
      expect(elements.map((element) => [element.line, element.column, element.endLine])).toEqual([
        [2, 3, 2],
        [3, 3, 3],
        [4, 3, 4],
        [5, 3, 5],
        [6, 3, 6],
        [6, 8, 6],
      ]);
    },
  );

  it('gives an element spanning lines its first and last line', async () => {
    const [element] = await split('[\n\n  {\n    "a": 1\n  }\n]');
    expect(element).toMatchObject({ line: 3, endLine: 5 });
  });

  it.each([
    ['', 1, 'column 0: the file is empty: it must hold a JSON array of orders'],
    [
      '{"externalId": "A"}',
      1,
      'column 1: the file holds one JSON object, not an array of orders: wrap it in [ ] (or use ordercli orders create for one order)',
    ],
    ['[{"a":1}\n {"b":2}]', 2, 'column 2: expected , or ] after the order that ends on line 1, found "{"'],
    ['[{"a":1},\n]', 2, 'column 1: a comma before ] (remove the trailing comma)'],
    ['[{"a":1}]\n[]', 2, 'column 1: unexpected "[" after the closing ] of the array'],
    [
      '[\n{"a":1},\n{"b":\n',
      4,
      'column 0: the file ends inside the order that starts on line 3 (a } or ] is missing)',
    ],
    ['[{"a":1}', 1, 'column 8: the file ends before the array is closed (a ] is missing)'],
  ])('stops on a broken array: %j', async (input, line, message) => {
    const error = await rejection(split(input));
    expect(error).toBeInstanceOf(InputError);
    expect(error.problems).toEqual([{ file: 'a.json', line, message }]);
  });
});
