// CSV rows becoming orders: grouping, cell conversion, and where each problem is reported.
import { describe, expect, it } from 'vitest';
import { invalidInputError, validateImport } from '../../../src/import/check/validate.js';
import { lines, readAll, sourceOf } from '../../support/import-input.js';

const HEADER =
  'externalId,externalReference,contact.id,contact.internalReferenceId,customer.name,deliveryAddress.zipCode,item.packaging,item.internalReferenceId,item.orderedQuantity';

describe('rows to orders', () => {
  it('keeps cells as text, leading zeros included, and converts only the integer fields', async () => {
    const text = `${HEADER}\nG-1,00042,107,,Épicerie,01000,,401,0012\nG-2,,CRM-17,,,,1101,,3\n`;
    const orders = await readAll(await sourceOf('types.csv', text));
    expect(orders.map((order) => order.body)).toEqual([
      {
        externalId: 'G-1',
        externalReference: '00042',
        contact: { id: 107 },
        customer: { name: 'Épicerie' },
        deliveryAddress: { zipCode: '01000' },
        items: [{ internalReferenceId: 401, orderedQuantity: 12 }],
      },
      // contact.id is converted only where it is numeric.
      { externalId: 'G-2', contact: { id: 'CRM-17' }, items: [{ packaging: 1101, orderedQuantity: 3 }] },
    ]);
  });

  it('reports every cell that does not convert, on its row, by its column', async () => {
    const text = [
      HEADER,
      'C-1,,,3O1,,,,401,2',
      'C-1,,,,,,,401.0,"2,5"',
      'C-2,,,302,,,-4,,99999999999999999999',
    ].join('\n');
    const validation = await validateImport(await sourceOf('orders.csv', text));
    expect(lines(validation.problems)).toEqual([
      'orders.csv:2: contact.internalReferenceId: must be a whole number above zero, not "3O1"',
      'orders.csv:3: item.internalReferenceId: must be a whole number above zero, not "401.0"',
      'orders.csv:3: item.orderedQuantity: must be a whole number above zero, not "2,5"',
      'orders.csv:4: item.packaging: must be a whole number above zero, not "-4"',
      'orders.csv:4: item.orderedQuantity: must be a whole number above zero, not "99999999999999999999"',
    ]);
  });

  it('groups adjacent rows with the same externalId into one order, items in row order', async () => {
    const text = `${HEADER}\nA,R-1,,301,Café,,,401,1\nA,,,,,,,402,2\nA,R-1,,301,Café,,,403,3\nB,,,302,,,,404,4\n`;
    const orders = await readAll(await sourceOf('g.csv', text));
    expect(orders).toHaveLength(2);
    expect(orders[0]?.body.items).toEqual([
      { internalReferenceId: 401, orderedQuantity: 1 },
      { internalReferenceId: 402, orderedQuantity: 2 },
      { internalReferenceId: 403, orderedQuantity: 3 },
    ]);
    expect(orders[0]?.problems).toEqual([]);
    expect(orders.map((order) => order.index)).toEqual([0, 1]);
    expect(orders[0]?.raw).toEqual([
      expect.objectContaining({
        externalId: 'A',
        externalReference: 'R-1',
        'item.internalReferenceId': '401',
      }),
      expect.objectContaining({ externalId: 'A', externalReference: '', 'item.internalReferenceId': '402' }),
      expect.objectContaining({ externalId: 'A', 'item.internalReferenceId': '403' }),
    ]);
  });

  it('refuses an order-level cell of a later row that differs from the first row, or fills it late', async () => {
    const text = `${HEADER}\nA,R-1,,301,,,,401,1\nA,R-2,,,Café,,,402,2\n`;
    const validation = await validateImport(await sourceOf('conflict.csv', text));
    expect(lines(validation.problems)).toEqual([
      'conflict.csv:3: externalReference: "R-2" differs from "R-1" on line 2, the order\'s first row: leave it empty on the other rows of the order, or repeat it exactly',
      'conflict.csv:3: customer.name: "Café" is given here but the order\'s first row (line 2) leaves it empty: put order-level cells on the first row of the order',
    ]);
  });

  it('reports an externalId that reappears after another order, naming both lines', async () => {
    const text = `${HEADER}\nA,,,301,,,,401,1\nA,,,,,,,402,1\nB,,,302,,,,403,1\nA,,,303,,,,404,1\n`;
    const validation = await validateImport(await sourceOf('again.csv', text));
    expect(validation.total).toBe(3);
    expect(lines(validation.problems)).toEqual([
      'again.csv:5: externalId: "A" reappears here after other orders: its first rows are on line 2; the rows of one order must be adjacent',
    ]);
    expect(validation.invalid.map((order) => order.index)).toEqual([2]);
    expect([...validation.invalidIndexes]).toEqual([2]);
  });

  it('makes each row without an externalId an order of its own, and says why it needs one', async () => {
    const text = `${HEADER}\nA,,,301,,,,401,1\n,,,,,,,402,1\n`;
    const validation = await validateImport(await sourceOf('noid.csv', text));
    expect(lines(validation.problems)).toEqual([
      'noid.csv:3: externalId: is required on every row: it is the key that makes re-runs safe, and the rows of one order are adjacent rows with the same externalId',
      'noid.csv:3: contact: is required',
    ]);
  });

  it('places schema problems of an item on its row, named by column', async () => {
    const text = `${HEADER}\nS-1,,,301,,,,401,1\nS-1,,,,,,,,2\nS-1,,,,,,1101,402,0\n`;
    const validation = await validateImport(await sourceOf('items.csv', text));
    expect(lines(validation.problems)).toEqual([
      'items.csv:3: item: name the packaging with one of packaging, externalReferenceId, internalReferenceId',
      'items.csv:4: item.orderedQuantity: must be a whole number above zero, not 0',
      'items.csv:4: item: name the packaging in exactly one way, not with both packaging and internalReferenceId',
    ]);
  });

  it('says so when an order has no item at all', async () => {
    const text = `${HEADER}\nN-1,,,301,,,,,\n`;
    const validation = await validateImport(await sourceOf('none.csv', text));
    expect(lines(validation.problems)).toEqual(['none.csv:2: items: is required']);
  });

  it('keeps at most maxInvalid invalid orders, counting and indexing the rest', async () => {
    const rows = [
      'M-1,,,301,,,,401,1',
      'M-2,,,301,,,,401,0',
      'M-3,,,301,,,,401,0',
      'M-4,,,301,,,,401,1',
      'M-5,,,301,,,,401,x',
    ];
    const source = await sourceOf('many.csv', `${HEADER}\n${rows.join('\n')}\n`);
    const validation = await validateImport(source, { maxInvalid: 1 });
    expect(validation).toMatchObject({ total: 5, valid: 2, omitted: 2 });
    expect(validation.invalid.map((order) => order.key)).toEqual(['M-2']);
    expect([...validation.invalidIndexes]).toEqual([1, 2, 4]);
    const error = invalidInputError(source, validation);
    expect(error.message).toBe(
      '3 of 5 orders in many.csv are invalid; nothing was sent. Fix them, or pass --skip-invalid to send the 2 valid ones.',
    );
    expect(lines(error.problems)).toEqual([
      'many.csv:3: item.orderedQuantity: must be a whole number above zero, not 0',
      'many.csv: … and 2 more invalid orders, not listed: fix the mistakes above (often the same in every row) and run it again',
    ]);
  });
});
