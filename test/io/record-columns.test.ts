// How a record becomes the cells of a row: columns chosen by --columns, the fields --json keeps,
// records of unknown shape flattened into dotted columns with readable headers.
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import {
  type Column,
  cellText,
  deriveColumns,
  flattenRecord,
  pickFields,
  readableHeader,
  selectColumns,
} from '../../src/io/record-columns.js';

const COLUMNS: Column<Record<string, unknown>>[] = [
  { key: 'id', header: 'ID', value: (r) => String(r.id) },
  { key: 'code', header: 'PRODUCT CODE', value: () => '', paths: ['packaging.product.code'] },
  { key: 'taxes', header: 'TAXES', value: () => '', optional: true },
];

describe('selectColumns', () => {
  it('takes the columns that are not optional by default, and those named by key or header in any case', () => {
    expect(selectColumns(COLUMNS, undefined).map((c) => c.key)).toEqual(['id', 'code']);
    expect(selectColumns(COLUMNS, []).map((c) => c.key)).toEqual(['id', 'code']);
    expect(selectColumns(COLUMNS, ['TAXES', 'product code', 'id']).map((c) => c.key)).toEqual([
      'taxes',
      'code',
      'id',
    ]);
  });

  it('refuses an unknown column, listing the keys', () => {
    expect(() => selectColumns(COLUMNS, ['price'])).toThrow(UsageError);
    expect(() => selectColumns(COLUMNS, ['price'])).toThrow(
      'Unknown column "price" in --columns: choose among id, code, taxes.',
    );
  });
});

describe('pickFields', () => {
  it('keeps the fields of the columns, nested as in the record, and leaves out the missing ones', () => {
    const record = { id: 1, label: 'x', packaging: { name: 'Pack', product: { code: 'P-1', label: 'y' } } };
    expect(pickFields(record, [COLUMNS[0]!, COLUMNS[1]!] as Column<never>[])).toEqual({
      id: 1,
      packaging: { product: { code: 'P-1' } },
    });
    expect(pickFields({ packaging: 'flat' }, [COLUMNS[1]!] as Column<never>[])).toEqual({});
    expect(pickFields([1, 2], [COLUMNS[0]!] as Column<never>[])).toEqual([1, 2]);
  });
});

describe('flattenRecord and cellText', () => {
  it('flattens nested objects into dotted paths, arrays into one cell', () => {
    expect(
      flattenRecord({
        id: 7,
        active: false,
        contact: { name: { first: 'Ana' }, phone: null },
        tags: ['a', 'b'],
        taxes: [{ name: 'TVA 20 %', rate: 20 }, { rate: 3 }],
        empty: {},
      }),
    ).toEqual({
      id: '7',
      active: 'no',
      'contact.name.first': 'Ana',
      'contact.phone': '',
      tags: 'a, b',
      taxes: 'TVA 20 %, {"rate":3}',
      empty: '{}',
    });
  });

  it('gives each element of an array of objects its own fields when asked', () => {
    expect(flattenRecord({ taxes: [{ rate: 20 }, { rate: 3 }] }, { expandArrays: true })).toEqual({
      'taxes[0].rate': '20',
      'taxes[1].rate': '3',
    });
  });

  it('stops flattening at a depth, writing what is below as JSON', () => {
    expect(flattenRecord({ a: { b: { c: { d: { e: { f: 1 } } } } } })).toEqual({ 'a.b.c.d.e.f': '1' });
    expect(flattenRecord({ a: { b: { c: { d: { e: { f: { g: 1 } } } } } } })).toEqual({
      'a.b.c.d.e.f': '{"g":1}',
    });
  });

  it('writes a value as a cell: yes and no, names or labels of objects in a list, nothing for null', () => {
    expect([true, false, null, undefined, 12, 10n, 'x'].map(cellText)).toEqual([
      'yes',
      'no',
      '',
      '',
      '12',
      '10',
      'x',
    ]);
    expect(cellText([{ label: 'Carton' }, 3, null])).toBe('Carton, 3, ');
  });
});

describe('deriveColumns', () => {
  it('makes a column per flattened key, id and the preferred keys first, identifiers marked', () => {
    const records = [
      { name: 'A', customerId: 4, id: 1 },
      { id: 2, address: { city: 'Lyon' }, product_code: 'P' },
    ];
    const columns = deriveColumns(records, ['address.city', 'missing']);
    expect(columns.map((c) => [c.key, c.header, c.align, c.identifier])).toEqual([
      ['id', 'ID', 'right', true],
      ['address.city', 'ADDRESS CITY', 'left', false],
      ['name', 'NAME', 'left', false],
      ['customerId', 'CUSTOMER ID', 'left', true],
      ['product_code', 'PRODUCT CODE', 'left', true],
    ]);
    expect(records.map((record) => columns[1]!.value(record))).toEqual(['', 'Lyon']);
  });

  it('writes headers as the reference tables do', () => {
    expect(['unit_factor', 'customer.firstName', 'HTMLBody', 'vat-rate'].map(readableHeader)).toEqual([
      'UNIT FACTOR',
      'CUSTOMER FIRST NAME',
      'HTML BODY',
      'VAT RATE',
    ]);
  });
});
