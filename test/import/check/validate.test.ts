// Validation on records already read: where a problem is placed, which problems are kept, and what
// a pass over a whole input counts and reports (records built here, no file read).
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors.js';
import {
  InvalidInputError,
  invalidInputError,
  place,
  prepareRecord,
  validateImport,
} from '../../../src/import/check/validate.js';
import type { SourceRecord } from '../../../src/import/types.js';
import { lines, rejection } from '../../support/import-input.js';

const VALID = {
  contact: { internalReferenceId: 301 },
  items: [{ internalReferenceId: 401, orderedQuantity: 2 }],
};

function record(
  index: number,
  body: Record<string, unknown>,
  extra: Partial<SourceRecord> = {},
): SourceRecord {
  const line = index + 2;
  return {
    index,
    key: typeof body.externalId === 'string' ? body.externalId : undefined,
    body,
    location: { file: 'in.json', line, endLine: line },
    raw: body,
    problems: [],
    needsProductResolution: false,
    ...extra,
  };
}

function sourceOf(records: SourceRecord[], fail?: InputError) {
  return {
    async *records() {
      yield* records;
      if (fail) throw fail;
    },
  };
}

describe('place', () => {
  it("puts an item's problem on its row in a CSV, named by its column", () => {
    const csv = record(0, VALID, { itemLines: [2, 3, 5] });
    expect(place(csv, { field: 'items[2].orderedQuantity', message: 'm' })).toEqual({
      file: 'in.json',
      line: 5,
      field: 'item.orderedQuantity',
      message: 'm',
    });
    expect(place(csv, { field: 'contact', message: 'm' })).toMatchObject({ line: 2, field: 'contact' });
  });

  it('keeps the path and the first line elsewhere, and no field for the whole body', () => {
    const json = record(3, VALID);
    expect(place(json, { field: 'items[1].orderedQuantity', message: 'm' })).toMatchObject({
      line: 5,
      field: 'items[1].orderedQuantity',
    });
    expect(place(json, { field: '(body)', message: 'm' }).field).toBeUndefined();
  });
});

describe('prepareRecord', () => {
  it('lists the schema problems of an order, in line order', async () => {
    const { problems } = await prepareRecord(
      record(
        0,
        { contact: {}, items: [{ internalReferenceId: 401, orderedQuantity: 0 }] },
        { itemLines: [4] },
      ),
    );
    expect(problems.map((problem) => [problem.line, problem.field])).toEqual([
      [2, 'contact'],
      [4, 'item.orderedQuantity'],
    ]);
  });

  it('stops at the problems of a record that could not be read at all', async () => {
    const unreadable = { file: 'in.json', line: 2, message: 'not JSON' };
    const prepared = await prepareRecord(record(0, {}, { problems: [unreadable] }));
    expect(prepared.problems).toEqual([unreadable]);
  });

  it('does not repeat a field the reader already reported on that line', async () => {
    const read = { file: 'in.json', line: 2, field: 'contact.internalReferenceId', message: 'not a number' };
    const prepared = await prepareRecord(
      record(0, { items: VALID.items }, { problems: [read], itemLines: [2] }),
    );
    // The contact "names no identifier" because its identifier did not convert: said once.
    expect(prepared.problems).toEqual([read]);
  });

  it('requires an externalId on the rows of a CSV import, saying why', async () => {
    const csv = record(0, VALID, { itemLines: [2] });
    expect(lines((await prepareRecord(csv, undefined, { requireExternalId: true })).problems)).toEqual([
      'in.json:2: externalId: is required on every row: it is the key that makes re-runs safe, and the rows of one order are adjacent rows with the same externalId',
    ]);
    expect((await prepareRecord(csv)).problems).toEqual([]);
  });

  it('reports a value over the cell limit as too large, before the rules it also breaks', async () => {
    const body = { ...VALID, externalId: 'x'.repeat(40) };
    const { problems } = await prepareRecord(record(0, body), undefined, {
      limits: { maxOrderBytes: 10_000, maxCellBytes: 20 },
    });
    expect(lines(problems)).toEqual([
      'in.json:2: externalId: is 40 bytes long, over the 20 bytes limit for one value: shorten it, or raise the limit with --max-cell-bytes',
    ]);
  });
});

describe('validateImport', () => {
  it('counts valid and invalid records, and names a key used twice on the second', async () => {
    const validation = await validateImport(
      sourceOf([
        record(0, { ...VALID, externalId: 'A' }),
        record(1, { ...VALID, externalId: 'B', items: [] }),
        record(2, { ...VALID, externalId: 'A' }),
      ]),
    );
    expect(validation).toMatchObject({ total: 3, valid: 1, omitted: 0 });
    expect([...validation.invalidIndexes]).toEqual([1, 2]);
    expect(validation.keys?.get('A')).toBe(2);
    expect(lines(validation.problems)).toEqual([
      'in.json:3: items: must list at least one item',
      'in.json:4: externalId: "A" is also the externalId of the order on line 2: each order needs its own',
    ]);
  });

  it('keeps at most maxInvalid invalid records and counts the others', async () => {
    const records = [0, 1, 2, 3].map((index) => record(index, { externalId: `K-${index}` }));
    const validation = await validateImport(sourceOf(records), { maxInvalid: 1 });
    expect(validation.invalid.map((invalid) => invalid.key)).toEqual(['K-0']);
    expect(validation.omitted).toBe(3);
    expect(validation.invalidIndexes.size).toBe(4);
    const error = invalidInputError({ file: 'in.json' }, validation);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toBe('4 of 4 orders in in.json are invalid; nothing was sent.');
    expect(error.problems.at(-1)?.message).toBe(
      '… and 3 more invalid orders, not listed: fix the mistakes above (often the same in every row) and run it again',
    );
  });

  it('offers --skip-invalid when some records are valid', async () => {
    const validation = await validateImport(
      sourceOf([
        record(0, { ...VALID, externalId: 'A' }),
        record(1, { ...VALID, externalId: 'B' }),
        record(2, {}),
      ]),
    );
    expect(invalidInputError({ file: 'in.json' }, validation).message).toBe(
      '1 of 3 orders in in.json is invalid; nothing was sent. Fix it, or pass --skip-invalid to send the 2 valid ones.',
    );
  });

  it('reports an input that breaks off with the problems found before it', async () => {
    const broken = new InputError('in.json is not valid JSON', [
      { file: 'in.json', line: 9, message: 'cut' },
    ]);
    const error = await rejection(validateImport(sourceOf([record(0, { externalId: 'A' })], broken)));
    expect(error).toBeInstanceOf(InputError);
    expect(error.message).toBe('in.json is not valid JSON');
    expect(error.problems!.map((problem) => problem.line)).toEqual([2, 2, 9]);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    const source = { ...sourceOf([record(0, VALID)]), signal: controller.signal };
    await expect(validateImport(source)).rejects.toThrow('stopped');
  });
});
