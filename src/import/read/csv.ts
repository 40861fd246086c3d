/**
 * The CSV input format: a header naming the columns, then rows (csv-rows.ts reads the dialect and
 * the rows), grouped into records by their key. Rejects are written back with the input's own
 * header, delimiter, line ending and byte order mark, each record's rows as they were read.
 */
import type { InputLayout } from '../types.js';
import { planColumns } from './columns.js';
import { type CsvLayout, delimiterOption, readCsvLayout, readCsvRows } from './csv-rows.js';
import type { FormatReader, RejectsWriter } from './input-format.js';
import { cellsUnder, columnNamer, recordsOfRows, rowsOf } from './tabular.js';
import { createTextFile } from './text-file.js';

export const reader: FormatReader = {
  async open({ file, path }, { kind, limits, map, ignored, delimiter }) {
    const csv = await readCsvLayout(
      path,
      file,
      delimiter === undefined ? undefined : delimiterOption(delimiter),
    );
    const columns = planColumns(csv.header, map, file, kind.columns, ignored);
    const columnName = columnNamer(columns);
    return {
      layout: { format: 'csv', header: csv.header, details: csv },
      records: () =>
        recordsOfRows(readCsvRows(path, file, csv, { limits, columnName }), {
          header: csv.header,
          columns,
          file,
          kind,
        }),
    };
  },

  openRejects: openCsvRejects,
};

/**
 * A CSV file of rejects. From a CSV input it has the input's dialect; from a workbook, commas,
 * CRLF and a byte order mark, without which Excel does not open a UTF-8 CSV with its accents.
 */
async function openCsvRejects(path: string, layout: InputLayout): Promise<RejectsWriter> {
  const header = layout.header;
  if (header === undefined) throw new Error('writing CSV rejects needs the header of a tabular input');
  const dialect: CsvLayout =
    layout.format === 'csv'
      ? (layout.details as CsvLayout)
      : { header, delimiter: ',', lineEnding: '\r\n', bom: true };
  const out = await createTextFile(path);
  await out.write(`${dialect.bom ? '\uFEFF' : ''}${csvLine(header, dialect.delimiter)}${dialect.lineEnding}`);
  let count = 0;
  return {
    async add(record) {
      for (const row of rowsOf(record)) {
        await out.write(`${csvLine(cellsUnder(header, row), dialect.delimiter)}${dialect.lineEnding}`);
      }
      count++;
    },
    async close() {
      await out.end();
      return count;
    },
  };
}

/** One CSV line: a cell is quoted when it holds the delimiter, a quote or a line break. */
export function csvLine(cells: string[], delimiter: string): string {
  return cells
    .map((cell) =>
      cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell,
    )
    .join(delimiter);
}
