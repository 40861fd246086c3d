/**
 * A workbook cell as the text Excel shows, from the value exceljs's streaming reader gives and
 * the cell's number format (applied with numfmt): `1000` formatted `00000` is `01000`, a date is
 * an ISO date (with its time only when the format shows one), a formula is its cached result,
 * rich text and hyperlinks are their plain text, booleans `TRUE`/`FALSE`.
 */
type Numfmt = typeof import('numfmt');

/** What a cell reads as: its text, or the error it holds (`#N/A`, or a formula never computed). */
export type CellText = { text: string } | { error: string };

/** Days between Excel's day 0 (1899-12-30, the 1900 system) and 1970-01-01. */
const UNIX_EPOCH_SERIAL = 25569;
const MS_PER_DAY = 86_400_000;

/** Formats with what they show, worked out once per workbook. */
export class CellFormatter {
  private readonly kinds = new Map<string, 'general' | 'date' | 'datetime' | 'time' | 'number'>();

  constructor(private readonly numfmt: Numfmt) {}

  /** The text of a cell value of exceljs's streaming reader, with the cell's number format. */
  text(value: unknown, format: string | undefined): CellText {
    if (value === null || value === undefined) return { text: '' };
    if (typeof value === 'string') return { text: value };
    if (typeof value === 'number') {
      // A formula whose cached result is an error (#N/A, #DIV/0!) reaches here as NaN.
      if (Number.isNaN(value)) return { error: 'an error value (such as #N/A or #DIV/0!)' };
      return { text: this.number(value, format) };
    }
    if (typeof value === 'boolean') return { text: value ? 'TRUE' : 'FALSE' };
    if (value instanceof Date)
      return { text: this.number(value.getTime() / MS_PER_DAY + UNIX_EPOCH_SERIAL, format, true) };
    if (typeof value === 'object') {
      const cell = value as Record<string, unknown>;
      if (typeof cell.error === 'string') return { error: cell.error };
      if ('formula' in cell || 'sharedFormula' in cell) {
        // exceljs's streaming reader drops an error result (#N/A) as it drops a missing one.
        if (cell.result === undefined) {
          return {
            error:
              'a formula whose result is an error (such as #N/A) or was never computed (then open and save the workbook in Excel)',
          };
        }
        return this.text(cell.result, format);
      }
      if (Array.isArray(cell.richText)) {
        return { text: cell.richText.map((run) => String((run as { text?: unknown }).text ?? '')).join('') };
      }
      if ('text' in cell) return this.text(cell.text, format);
    }
    return { text: String(value) };
  }

  /** A number as its format shows it; dates as ISO dates. */
  private number(value: number, format: string | undefined, isDate = false): string {
    const kind = format === undefined ? 'general' : this.kindOf(format);
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

  private kindOf(format: string): 'general' | 'date' | 'datetime' | 'time' | 'number' {
    let kind = this.kinds.get(format);
    if (kind === undefined) {
      const info = this.numfmt.getFormatInfo(format);
      kind =
        info.type === 'date' || info.type === 'datetime' || info.type === 'time'
          ? info.type
          : info.type === 'general' || info.type === 'text'
            ? 'general'
            : 'number';
      this.kinds.set(format, kind);
    }
    return kind;
  }
}

function isoDate(parts: number[], kind: 'date' | 'datetime' | 'time'): string {
  const [year = 0, month = 0, day = 0, hours = 0, minutes = 0, seconds = 0] = parts;
  const two = (n: number) => String(n).padStart(2, '0');
  const date = `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}`;
  const time = `${two(hours)}:${two(minutes)}:${two(seconds)}`;
  return kind === 'date' ? date : kind === 'time' ? time : `${date}T${time}`;
}
