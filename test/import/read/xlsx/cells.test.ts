// A stored workbook cell turned into the text Excel shows: strings, booleans, numbers in their
// format, dates in both date systems, formula results and error cells.
import * as numfmt from 'numfmt';
import { describe, expect, it } from 'vitest';
import { CellFormatter, type StoredCell } from '../../../../src/import/read/xlsx/cells.js';

const STRINGS = ['zéro', '', 'deux'];
const formatter = new CellFormatter(numfmt, { get: (index) => STRINGS[index], size: STRINGS.length });

function cell(value: string | undefined, fields: Partial<StoredCell> = {}): StoredCell {
  return { type: undefined, value, formula: false, format: undefined, ...fields };
}

describe('CellFormatter', () => {
  it('makes a shared string the workbook does not have a damaged cell, never an empty one', () => {
    expect(formatter.text(cell('9', { type: 's' }))).toEqual({
      error: 'refers to shared string 9, but the workbook has 3 (0 to 2)',
      damaged: true,
    });
    expect(formatter.text(cell('x', { type: 's' }))).toEqual({
      error: 'refers to shared string "x", but the workbook has 3 (0 to 2)',
      damaged: true,
    });
    const none = new CellFormatter(numfmt, { get: () => undefined, size: 0 });
    expect(none.text(cell('0', { type: 's' }))).toMatchObject({
      error: 'refers to shared string 0, but the workbook has no shared strings',
    });
  });

  it('reads shared, inline and formula strings, an empty shared string as no value', () => {
    expect(formatter.text(cell('2', { type: 's' }))).toBe('deux');
    expect(formatter.text(cell('1', { type: 's' }))).toBeUndefined();
    expect(formatter.text(cell('texte', { type: 'inlineStr' }))).toBe('texte');
    expect(formatter.text(cell(undefined))).toBeUndefined();
  });

  it('reads booleans as TRUE and FALSE, and an error cell as the error it holds', () => {
    expect(formatter.text(cell('1', { type: 'b' }))).toBe('TRUE');
    expect(formatter.text(cell('0', { type: 'b' }))).toBe('FALSE');
    expect(formatter.text(cell('#N/A', { type: 'e' }))).toEqual({ error: '#N/A' });
  });

  it('writes whole numbers in full and applies a number format', () => {
    expect(formatter.text(cell('1234567890123'))).toBe('1234567890123');
    expect(formatter.text(cell('0.1'))).toBe('0.1');
    expect(formatter.text(cell('1000', { format: '00000' }))).toBe('01000');
    expect(formatter.text(cell('0.125', { format: '0.00%' }))).toBe('12.50%');
    // Text format and General: the digits as stored.
    expect(formatter.text(cell('42', { format: '@' }))).toBe('42');
  });

  it('reads a number in a date format as an ISO date, with its time only when the format shows it', () => {
    expect(formatter.text(cell('46083', { format: 'dd/mm/yyyy' }))).toBe('2026-03-02');
    expect(formatter.text(cell('46083.5', { format: 'dd/mm/yyyy hh:mm' }))).toBe('2026-03-02T12:00:00');
    expect(formatter.text(cell('0.75', { format: 'hh:mm' }))).toBe('18:00:00');
    // Quoted text and bracketed parts do not make a date.
    expect(formatter.text(cell('5', { format: '0 "days"' }))).toBe('5 days');
    expect(formatter.text(cell('5', { format: '[Red]0' }))).toBe('5');
  });

  it('counts dates from 1904 in a workbook of that date system', () => {
    const mac = new CellFormatter(numfmt, { get: () => undefined, size: 0 }, true);
    expect(mac.text(cell('44621', { format: 'yyyy-mm-dd' }))).toBe('2026-03-02');
  });

  it('reads a cell of type d as an ISO date, as UTC when it names no zone', () => {
    expect(formatter.text(cell('2026-03-02T10:30:00', { type: 'd', format: 'yyyy-mm-dd hh:mm' }))).toBe(
      '2026-03-02T10:30:00',
    );
    expect(formatter.text(cell('2026-03-02T10:30:00+02:00', { type: 'd', format: 'yyyy-mm-dd hh:mm' }))).toBe(
      '2026-03-02T08:30:00',
    );
    expect(formatter.text(cell('2026-03-02', { type: 'd' }))).toBe('2026-03-02');
    expect(formatter.text(cell('not a date', { type: 'd' }))).toEqual({
      error: 'an error value (such as #N/A or #DIV/0!)',
    });
  });

  it("reads a formula as its cached result, typed by the cell's type", () => {
    expect(formatter.text(cell('12', { formula: true, format: '000' }))).toBe('012');
    expect(formatter.text(cell('abc', { formula: true, type: 'str' }))).toBe('abc');
    expect(formatter.text(cell('', { formula: true, type: 'str' }))).toBe('');
    expect(formatter.text(cell('1', { formula: true, type: 'b' }))).toBe('TRUE');
    expect(formatter.text(cell('#DIV/0!', { formula: true, type: 'e' }))).toEqual({ error: '#DIV/0!' });
    expect(formatter.text(cell('abc', { formula: true }))).toEqual({
      error: 'a formula result ("abc") that is not a number',
    });
    expect(formatter.text(cell(undefined, { formula: true }))).toMatchObject({
      error: 'a formula never computed',
      message: expect.stringContaining('open and save the workbook in Excel or LibreOffice'),
    });
  });
});
