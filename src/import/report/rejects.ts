/**
 * `--rejects <file>`: the orders that were invalid or failed, written back in the input's own
 * format (or, for a CSV or workbook input, as a workbook or CSV by the file's extension: see
 * `rejectsLayout`), ready to fix and import again. A CSV gets its original header, delimiter, line ending
 * and byte order mark, and each order's rows as they were read; JSON an array; NDJSON one line
 * per order. An order's `raw` that is a string is text that could not be read as an order (not
 * JSON, not an object): it is written back exactly as it was.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { UsageError } from '../core/errors.js';
import { OutputWriteError } from './output-error.js';
import type { SourceLayout, SourceOrder } from './types.js';

/** Writes rejected orders one at a time, as the import meets them. */
export interface RejectsWriter {
  add(order: SourceOrder): Promise<void>;
  /** Finishes the file; resolves to the number of orders written. */
  close(): Promise<number>;
}

/**
 * The format rejects are written in: for a CSV or workbook input, `.xlsx` or `.csv` by the rejects
 * file's extension (rows are rows either way), else the input's own; JSON and NDJSON inputs keep theirs.
 */
export function rejectsLayout(path: string, layout: SourceLayout): SourceLayout {
  const tabular = layout.format === 'csv' || layout.format === 'xlsx';
  const extension = extname(path).toLowerCase();
  const header = layout.csv?.header ?? layout.xlsx?.header ?? [];
  if (tabular && extension === '.xlsx' && layout.format === 'csv') {
    return {
      format: 'xlsx',
      xlsx: { sheet: 'Orders', sheets: ['Orders'], header, headerRow: 1, entry: '', merges: [] },
    };
  }
  if (tabular && extension === '.csv' && layout.format === 'xlsx') {
    // Excel opens a UTF-8 CSV with its accents only when it starts with a byte order mark.
    return { format: 'csv', csv: { header, delimiter: ',', lineEnding: '\r\n', bom: true } };
  }
  return layout;
}

/** Creates (or replaces) the rejects file at `path` (an absolute path, or relative to the process). */
export async function openRejects(path: string, inputLayout: SourceLayout): Promise<RejectsWriter> {
  const layout = rejectsLayout(path, inputLayout);
  if (layout.format === 'xlsx') {
    const { openXlsxRejects } = await import('./xlsx-rejects.js');
    return openXlsxRejects(path, layout.xlsx!, rowsOf);
  }
  const stream = createWriteStream(path, { encoding: 'utf8' });
  await once(stream, 'open');
  const write = async (text: string) => {
    if (!stream.write(text)) await once(stream, 'drain');
  };
  let count = 0;
  const format = layout.format;
  const csv = layout.csv;
  if (format === 'csv') {
    if (!csv) throw new Error('writing CSV rejects needs the layout of the input (source.csv)');
    await write(`${csv.bom ? '\uFEFF' : ''}${csvLine(csv.header, csv.delimiter)}${csv.lineEnding}`);
  } else if (format === 'json') {
    await write('[');
  }
  return {
    async add(order) {
      if (format === 'csv') {
        for (const record of rowsOf(order)) {
          const cells = csv!.header.map((name) => record[name] ?? '');
          // Cells past the header (a row too long) are kept, so the row reads as it was.
          for (const [key, value] of Object.entries(record))
            if (key.startsWith('#') && !csv!.header.includes(key)) cells.push(value);
          await write(`${csvLine(cells, csv!.delimiter)}${csv!.lineEnding}`);
        }
      } else if (format === 'json') {
        const text = typeof order.raw === 'string' ? order.raw : indent(JSON.stringify(order.raw, null, 2));
        await write(`${count === 0 ? '\n' : ',\n'}${text}`);
      } else {
        await write(`${typeof order.raw === 'string' ? order.raw : JSON.stringify(order.raw)}\n`);
      }
      count++;
    },
    async close() {
      if (format === 'json') await write(count === 0 ? ']\n' : '\n]\n');
      stream.end();
      await once(stream, 'finish');
      return count;
    },
  };
}

/** Writes every given order to a new rejects file; resolves to how many were written. */
export async function writeRejects(
  path: string,
  layout: SourceLayout,
  orders: Iterable<SourceOrder> | AsyncIterable<SourceOrder>,
): Promise<number> {
  try {
    const writer = await openRejects(path, layout);
    for await (const order of orders) await writer.add(order);
    return await writer.close();
  } catch (error) {
    throw new OutputWriteError('the rejects file', path, error);
  }
}

/**
 * Checks, before anything is sent, that the rejects file can be created (it is written at the
 * end of the import): a path in a missing or read-only folder is bad usage, not a late failure.
 */
export async function checkRejectsPath(path: string, shown: string): Promise<void> {
  try {
    await (await open(path, 'w')).close();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`Cannot write the rejects file ${shown}: ${code}; nothing was sent.`);
  }
}

export function rowsOf(order: SourceOrder): Record<string, string>[] {
  if (!Array.isArray(order.raw)) throw new Error(`order ${order.index} has no CSV rows to write back`);
  return order.raw as Record<string, string>[];
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** One CSV line: a cell is quoted when it holds the delimiter, a quote or a line break. */
export function csvLine(cells: string[], delimiter: string): string {
  return cells
    .map((cell) =>
      cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell,
    )
    .join(delimiter);
}
