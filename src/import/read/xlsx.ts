/**
 * The Excel workbook input format (.xlsx): its sheet and header found (xlsx/layout.ts), its
 * columns planned as a CSV file's (a column without a header is left out, as long as its cells
 * are empty), its rows grouped into records. Problems name their cell (`Commandes!D4`). Rejects
 * are written as a workbook with the input's header.
 */
import { InputError } from '../../core/errors.js';
import { excerpt } from '../../io/quote.js';
import type { InputLayout } from '../types.js';
import { type CsvColumn, planColumns } from './columns.js';
import type { FormatReader, OpenOptions, RejectsWriter } from './input-format.js';
import { columnNamer, recordsOfRows } from './tabular.js';
import { problemLocator, readXlsxLayout, readXlsxRows, type XlsxLayout } from './xlsx/layout.js';
import { openXlsxRejects } from './xlsx/rejects.js';
import { cellReference, rowReference } from './xlsx/sheet.js';

export const reader: FormatReader = {
  async open({ file, path }, options) {
    const { kind, map } = options;
    const known = new Set(kind.columns.map((column) => column.toLowerCase()));
    const xlsx = await readXlsxLayout(path, file, {
      sheet: options.sheet,
      isKnownColumn: (header) => known.has((map?.[header] ?? header).toLowerCase()),
      describeColumns: kind.columns.join(', '),
      records: kind.many,
      limits: options.limits,
    });
    const columns = planWorkbookColumns(xlsx, options, file);
    const byPath = new Map(columns.map((column) => [column.path, column.index]));
    const cellOf = (index: number, row: number) => cellReference(xlsx.sheet, index, row);
    const rows = () =>
      readXlsxRows(path, file, xlsx, { columnName: columnNamer(columns), limits: options.limits });
    return {
      layout: { format: 'xlsx', header: xlsx.header, details: xlsx },
      records: () => recordsOfRows(rows(), { header: xlsx.header, columns, file, kind }, cellOf),
      locateCell: problemLocator(xlsx, (field) => byPath.get(field)),
    };
  },

  async openRejects(path: string, layout: InputLayout): Promise<RejectsWriter> {
    const header = layout.header;
    if (header === undefined) throw new Error('writing workbook rejects needs the header of a tabular input');
    // From a CSV input, the rows go on a sheet of their own.
    const sheet = layout.format === 'xlsx' ? (layout.details as XlsxLayout).sheet : 'Orders';
    return openXlsxRejects(path, sheet, header);
  },
};

/** `planColumns` over the named header cells; its problems placed on the header row's cells. */
function planWorkbookColumns(
  xlsx: XlsxLayout,
  { map, ignored, kind }: OpenOptions,
  file: string,
): CsvColumn[] {
  const named = xlsx.header.flatMap((header, index) => (header.trim() === '' ? [] : [index]));
  try {
    return planColumns(
      named.map((index) => xlsx.header[index]!),
      map,
      file,
      kind.columns,
      ignored,
    ).map((column) => ({ ...column, index: named[column.index]! }));
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const problems = error.problems.map((problem) => {
      if (problem.line !== 1) return problem;
      // A note on the whole header (the list of known columns) names no cell.
      if (problem.field === undefined) return { file: problem.file, message: problem.message };
      const index = named.find(
        (i) => problem.field !== undefined && excerpt(xlsx.header[i]!.trim()) === problem.field,
      );
      return {
        ...problem,
        line: xlsx.headerRow,
        cell:
          index === undefined
            ? rowReference(xlsx.sheet, xlsx.headerRow)
            : cellReference(xlsx.sheet, index, xlsx.headerRow),
      };
    });
    const placed = new InputError(error.message, problems);
    placed.hint = error.hint;
    throw placed;
  }
}
