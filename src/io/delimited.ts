/** Rows as delimited text: CSV per RFC 4180 (`--csv`, reject files) and the tab-separated rows of a pipe. */
import { escapeControl } from './quote.js';

/** CSV field quoting per RFC 4180. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A cell that a spreadsheet shows as text, never runs: one that starts as a formula would (`=`,
 * `+`, `-`, `@`, tab, carriage return) gets a leading `'` (OWASP's rule against CSV injection).
 */
export function formulaSafe(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** One CSV line, ended with CRLF. */
export function csvLine(values: readonly string[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** One tab-separated line: control characters (tabs, escapes) escaped, so a row stays one line. */
export function tsvLine(values: readonly string[]): string {
  return `${values.map(escapeControl).join('\t')}\n`;
}
