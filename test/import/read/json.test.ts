// JSON arrays (streamed element by element) and NDJSON: orders, their lines, and their problems.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors.js';
import { validateImport } from '../../../src/import/check/validate.js';
import { splitJsonArray } from '../../../src/import/read/json-array.js';
import { locateSyntaxError, parseJson } from '../../../src/import/read/json-syntax.js';
import { lines, readAll, rejection, sourceOf } from '../../support/import-input.js';

const ORDER = {
  contact: { internalReferenceId: 301 },
  items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
};

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

describe('JSON and NDJSON orders', () => {
  it('reads a JSON array of orders, each placed at its first line', async () => {
    const text = JSON.stringify(
      [
        { externalId: 'J-1', ...ORDER },
        { externalId: 'J-2', ...ORDER },
      ],
      null,
      2,
    );
    const source = await sourceOf('orders.json', text);
    expect(source.format).toBe('json');
    const orders = await readAll(source);
    expect(orders.map((order) => [order.key, order.location.line, order.location.endLine])).toEqual([
      ['J-1', 2, 13],
      ['J-2', 14, 25],
    ]);
    expect(orders[0]?.body).toEqual({ externalId: 'J-1', ...ORDER });
    expect(orders[0]?.raw).toBe(orders[0]?.body);
  });

  it('reports broken elements as problems of their order and keeps reading', async () => {
    const text = [
      '[',
      `  ${JSON.stringify({ externalId: 'J-1', ...ORDER })},`,
      '  {"externalId": "J-2", "contact": {"internalReferenceId": 301}, "items": [],},',
      '  42,',
      `  ${JSON.stringify({ externalId: 'J-1', contact: {}, items: [{ productCode: 7, orderedQuantity: '2' }] })}`,
      ']',
    ].join('\n');
    const validation = await validateImport(await sourceOf('orders.json', text));
    expect(validation).toMatchObject({ total: 4, valid: 1 });
    expect(lines(validation.problems)).toEqual([
      'orders.json:3: not valid JSON at column 78: a comma before } (remove the trailing comma)',
      'orders.json:4: must be an order (a JSON object), not number 42',
      'orders.json:5: externalId: "J-1" is also the externalId of the order on line 2: each order needs its own',
      'orders.json:5: items[0].productCode: must be a product code such as "CRF-30", not 7',
      'orders.json:5: contact: name the contact with one of id, externalReferenceId, internalReferenceId, externalReference',
      'orders.json:5: items[0].orderedQuantity: must be a whole number, not the text "2"',
    ]);
    // The text that could not be read is kept to be written back as it was.
    expect(validation.invalid[0]?.raw).toBe(
      '{"externalId": "J-2", "contact": {"internalReferenceId": 301}, "items": [],}',
    );
  });

  it('passes unknown fields through unchanged', async () => {
    const [order] = await readAll(
      await sourceOf('x.json', JSON.stringify([{ ...ORDER, shippingMode: { id: 4 } }])),
    );
    expect(order?.body.shippingMode).toEqual({ id: 4 });
  });

  it('reads NDJSON line by line, skipping blank lines, with a BOM and CRLF', async () => {
    const text = `\uFEFF${JSON.stringify({ externalId: 'N-1', ...ORDER })}\r\n\r\n   \r\n${JSON.stringify({ externalId: 'N-2', ...ORDER })}\r\n{"externalId": "N-3",\r\n`;
    for (const name of ['orders.ndjson', 'orders.jsonl']) {
      const source = await sourceOf(name, text);
      expect(source.format).toBe('ndjson');
      const validation = await validateImport(source);
      expect(validation.total).toBe(3);
      expect(lines(validation.problems)).toEqual([
        `${name}:5: not valid JSON at column 22: the text ends inside an object`,
      ]);
      const orders = await readAll(source);
      expect(orders.map((order) => [order.index, order.key, order.location.line])).toEqual([
        [0, 'N-1', 1],
        [1, 'N-2', 4],
        [2, undefined, 5],
      ]);
    }
  });

  it('notes which orders name a product code', async () => {
    const text = `${JSON.stringify(ORDER)}\n${JSON.stringify({ ...ORDER, items: [{ productCode: 'CRF-30', orderedQuantity: 1 }] })}\n`;
    const orders = await readAll(await sourceOf('p.ndjson', text));
    expect(orders.map((order) => order.needsProductResolution)).toEqual([false, true]);
  });
});
