/**
 * `--rejects rejects.xlsx`: the rejected records' rows written as a workbook, with the input's
 * header on the first row, one row per row read, streamed by exceljs's WorkbookWriter. Cells are
 * text as they were read (`01000` stays `01000`), except plain whole numbers, written as numbers
 * so that Excel does not flag them as "number stored as text".
 */
import type { RejectsWriter } from '../input-format.js';
import { cellsUnder, rowsOf } from '../tabular.js';

const PLAIN_WHOLE_NUMBER = /^(?:0|-?[1-9]\d{0,14})$/;

/** A workbook of rejects at `path`: one sheet named `sheet`, the input's `header` on its first row. */
export async function openXlsxRejects(
  path: string,
  sheetName: string,
  header: string[],
): Promise<RejectsWriter> {
  const excel = await import('exceljs');
  const ExcelJS = (excel as { default?: typeof import('exceljs') }).default ?? excel;
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useSharedStrings: false,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet(sheetName);
  sheet.addRow(header).commit();
  let count = 0;
  return {
    async add(record) {
      for (const row of rowsOf(record)) {
        const cells = cellsUnder(header, row).map((cell) =>
          cell === '' ? null : PLAIN_WHOLE_NUMBER.test(cell) ? Number(cell) : cell,
        );
        sheet.addRow(cells).commit();
      }
      count++;
    },
    async close() {
      sheet.commit();
      await workbook.commit();
      return count;
    },
  };
}
