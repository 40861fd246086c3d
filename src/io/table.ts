/** Terminal tables (cli-table3), fitted to the terminal width by truncating the widest columns. */
import Table from 'cli-table3';

const MIN_COLUMN = 6;
/** Border and padding cost per column: `│ ` + ` ` */
const COLUMN_OVERHEAD = 3;

/** Display width of a cell; accented letters in NFC count one. */
function width(text: string): number {
  let n = 0;
  for (const ch of text.normalize('NFC')) {
    const code = ch.codePointAt(0) ?? 0;
    // Combining marks take no cell; East Asian wide ranges take two.
    if (code >= 0x300 && code <= 0x36f) continue;
    n += code >= 0x1100 && (code <= 0x115f || (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xff00 && code <= 0xff60)) ? 2 : 1;
  }
  return n;
}

/** Column widths that fit `maxWidth`, shrinking the widest column first. */
export function fitWidths(natural: number[], maxWidth: number): number[] {
  const widths = [...natural];
  const total = () => widths.reduce((sum, w) => sum + w + COLUMN_OVERHEAD, 1);
  while (total() > maxWidth) {
    let widest = 0;
    for (let i = 1; i < widths.length; i++) if ((widths[i] ?? 0) > (widths[widest] ?? 0)) widest = i;
    if ((widths[widest] ?? 0) <= MIN_COLUMN) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
  return widths;
}

/** Renders rows as a bordered table no wider than `terminalWidth`. */
export function renderTable(headers: string[], rows: string[][], terminalWidth: number, color: boolean): string {
  const natural = headers.map((header, i) => Math.max(width(header), ...rows.map((row) => width(row[i] ?? ''))));
  const fitted = fitWidths(natural, Math.max(terminalWidth, 40));
  const table = new Table({
    head: headers,
    // cli-table3 counts padding inside colWidths.
    colWidths: fitted.map((w) => w + 2),
    wordWrap: false,
    truncate: '…',
    style: { head: color ? ['bold'] : [], border: color ? ['grey'] : [] },
  });
  for (const row of rows) table.push(row.map((cell) => cell.normalize('NFC')));
  return `${table.toString()}\n`;
}
