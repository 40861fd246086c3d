// JSON arrays (streamed element by element) and NDJSON: orders, their lines, and their problems.
import { describe, expect, it } from 'vitest';
import { validateImport } from '../../../src/import/check/validate.js';
import { lines, readAll, sourceOf } from '../../support/import-input.js';

const ORDER = {
  contact: { internalReferenceId: 301 },
  items: [{ internalReferenceId: 401, orderedQuantity: 1 }],
};

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
