/**
 * A workbook cell as the text Excel shows, from the cell as the sheet's XML stores it (its type
 * `t`, the text of its value, whether it has a formula) and its number format, applied with
 * numfmt: `1000` formatted `00000` is `01000`, a date is an ISO date (with its time only when the
 * format shows one), a formula is its cached result, rich text is its plain text, booleans
 * `TRUE`/`FALSE`.
 */
type Numfmt = typeof import('numfmt');

/** A cell that holds an error (`#N/A`) or a formula never computed: what it holds, in words. */
export interface CellError {
  error: string;
  /** The whole problem, when "fix the cell or its formula" is not the advice. */
  message?: string;
  /**
   * The workbook is damaged here (a shared string it does not have, or not UTF-8): the whole file
   * is refused, `error` saying what the cell does (`refers to shared string 57, …`).
   */
  damaged?: true;
}

/** What a cell reads as: its text, or the error it holds. */
export type CellText = string | CellError;

/** A cell as the sheet's XML stores it. */
export interface StoredCell {
  /** Its `t` attribute: `s` (shared string), `inlineStr`, `str`, `b`, `e`, `d`, or none (a number). */
  type: string | undefined;
  /** The text of its `<v>` (or of its inline string), undefined when it has none. */
  value: string | undefined;
  /** Whether it has a formula (`<f>`), whose cached result `value` is. */
  formula: boolean;
  /** Its number format, undefined for General. */
  format: string | undefined;
}

/** The workbook's shared strings, by index. */
export interface StringsByIndex {
  /** Undefined for an index the workbook does not have. */
  get(index: number): CellText | undefined;
  readonly size: number;
}

/** A formula without a cached result: the workbook was written by a tool that does not compute. */
const NEVER_COMPUTED: CellError = {
  error: 'a formula never computed',
  message:
    'holds a formula that was never computed (the file keeps no result for it, as workbooks written by some tools do): open and save the workbook in Excel or LibreOffice, or recompute it with soffice --headless --convert-to xlsx <file>',
};
const ERROR_VALUE: CellError = { error: 'an error value (such as #N/A or #DIV/0!)' };

/** Days between Excel's day 0 (1899-12-30, the 1900 system) and 1970-01-01. */
const UNIX_EPOCH_SERIAL = 25569;
/** Days between the 1900 and the 1904 date systems' day 0. */
const DAYS_1904 = 1462;
const MS_PER_DAY = 86_400_000;
/** The largest time a JavaScript date holds, in ms from 1970. */
const MAX_DATE_MS = 8.64e15;

type FormatKind = 'general' | 'date' | 'datetime' | 'time' | 'number';

/** What a format shows, worked out once per format. */
interface FormatInfo {
  kind: FormatKind;
  /** Whether a number stored with it is a date (its letters: y, m, d, h, s, b). */
  isDate: boolean;
}

/** Turns stored cells into the text Excel shows; formats worked out once per workbook. */
export class CellFormatter {
  private readonly formats = new Map<string, FormatInfo>();

  constructor(
    private readonly numfmt: Numfmt,
    private readonly strings: StringsByIndex,
    /** Whether the workbook counts its dates from 1904 (old Mac workbooks). */
    private readonly date1904 = false,
  ) {}

  /** The text of a stored cell; undefined for an empty one. */
  text(cell: StoredCell): CellText | undefined {
    const { type, value } = cell;
    if (cell.formula) return this.formulaResult(type, value, cell.format);
    if (value === undefined) return undefined;
    switch (type) {
      case 's':
        return this.sharedString(value);
      case 'inlineStr':
      case 'str':
        return value;
      case 'e':
        return { error: value };
      case 'b':
        return Number.parseInt(value, 10) !== 0 ? 'TRUE' : 'FALSE';
      case 'd':
        return this.isoDate(value, cell.format);
      default:
        return this.storedNumber(Number.parseFloat(value), cell.format);
    }
  }

  /** A shared string; an index the workbook does not have means a damaged workbook, never an empty cell. */
  private sharedString(value: string): CellText | undefined {
    const index = /^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN;
    const text = this.strings.get(index);
    if (text !== undefined) return text || undefined;
    const which = Number.isNaN(index) ? JSON.stringify(value.slice(0, 20)) : String(index);
    const has =
      this.strings.size === 0
        ? 'the workbook has no shared strings'
        : `the workbook has ${this.strings.size} (0 to ${this.strings.size - 1})`;
    return { error: `refers to shared string ${which}, but ${has}`, damaged: true };
  }

  /** A formula's cached result: `<v>` typed by the cell's `t`. */
  private formulaResult(type: string | undefined, value: string | undefined, format?: string): CellText {
    if (value === undefined) return NEVER_COMPUTED;
    if (type === 'str') return value;
    if (type === 'e') return { error: value };
    if (type === 'b') return Number.parseInt(value, 10) !== 0 ? 'TRUE' : 'FALSE';
    const number = Number.parseFloat(value);
    return Number.isNaN(number)
      ? { error: `a formula result (${JSON.stringify(value.slice(0, 40))}) that is not a number` }
      : this.number(number, format);
  }

  /**
   * A number stored in a cell. One in a date format is a date: its serial counted from 1900,
   * to the millisecond (as a JavaScript date holds it).
   */
  private storedNumber(value: number, format: string | undefined): CellText {
    if (Number.isNaN(value)) return ERROR_VALUE;
    if (format === undefined || !this.infoOf(format).isDate) return this.number(value, format);
    const ms = Math.round((value - UNIX_EPOCH_SERIAL + (this.date1904 ? DAYS_1904 : 0)) * MS_PER_DAY);
    return this.number(
      Math.abs(ms) > MAX_DATE_MS ? Number.NaN : ms / MS_PER_DAY + UNIX_EPOCH_SERIAL,
      format,
      true,
    );
  }

  /** A cell of type `d`: an ISO 8601 date and time, read as UTC when it names no zone. */
  private isoDate(value: string, format: string | undefined): CellText {
    const zoned = !value.includes('T') || /(?:[zZ]|[+-]\d\d:?\d\d)$/.test(value);
    const ms = Date.parse(zoned ? value : `${value}Z`);
    if (Number.isNaN(ms)) return ERROR_VALUE;
    return this.number(ms / MS_PER_DAY + UNIX_EPOCH_SERIAL, format, true);
  }

  /** A number as its format shows it; dates as ISO dates. */
  private number(value: number, format: string | undefined, isDate = false): string {
    const kind = format === undefined ? 'general' : this.infoOf(format).kind;
    if (kind === 'date' || kind === 'datetime' || kind === 'time' || (kind === 'general' && isDate)) {
      return isoDate(this.numfmt.dateFromSerial(value), kind === 'general' ? 'date' : kind);
    }
    if (kind === 'number' && format !== undefined) {
      try {
        return this.numfmt.format(format, value);
      } catch {
        // A format numfmt cannot read: the number as General shows it.
      }
    }
    // General (and text, `@`): whole numbers in full (Excel's column may show 1.23457E+12, but a
    // product code or a phone number stored as a number means its digits), others as General.
    if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
    return this.numfmt.format('General', value);
  }

  private infoOf(format: string): FormatInfo {
    let info = this.formats.get(format);
    if (info === undefined) {
      const { type } = this.numfmt.getFormatInfo(format);
      const kind: FormatKind =
        type === 'date' || type === 'datetime' || type === 'time'
          ? type
          : type === 'general' || type === 'text'
            ? 'general'
            : 'number';
      // Quoted text and bracketed parts ([Red], [$€-40C]) do not make a date.
      const letters = format.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, '');
      info = { kind, isDate: /[ymdhMsb]/.test(letters) };
      this.formats.set(format, info);
    }
    return info;
  }
}

function isoDate(parts: number[], kind: 'date' | 'datetime' | 'time'): string {
  const [year = 0, month = 0, day = 0, hours = 0, minutes = 0, seconds = 0] = parts;
  const two = (n: number) => String(n).padStart(2, '0');
  const date = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`;
  const time = `${two(hours)}:${two(minutes)}:${two(seconds)}`;
  return kind === 'date' ? date : kind === 'time' ? time : `${date}T${time}`;
}
