/**
 * `--rejects rejects.xlsx`: the rejected orders' rows written as a workbook, with the input's
 * header on the first row, one row per row read, streamed by exceljs's WorkbookWriter. Cells are
 * text as they were read (`01000` stays `01000`), except plain whole numbers, written as numbers
 * so that Excel does not flag them as "number stored as text".
 */
import type { RejectsWriter } from './rejects.js';
import type { SourceOrder, XlsxLayout } from './types.js';

const PLAIN_WHOLE_NUMBER = /^(?:0|-?[1-9]\d{0,14})$/;

export async function openXlsxRejects(
  path: string,
  layout: XlsxLayout,
  rowsOf: (order: SourceOrder) => Record<string, string>[],
): Promise<RejectsWriter> {
  const excel = await import('exceljs');
  const ExcelJS = (excel as { default?: typeof import('exceljs') }).default ?? excel;
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useSharedStrings: false,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet(layout.sheet);
  sheet.addRow(layout.header).commit();
  let count = 0;
  return {
    async add(order) {
      for (const record of rowsOf(order)) {
        const cells: (string | number)[] = layout.header.map((name) => record[name] ?? '');
        for (const [key, value] of Object.entries(record))
          if (key.startsWith('#') && !layout.header.includes(key)) cells.push(value);
        sheet
          .addRow(
            cells.map((cell) =>
              cell === '' ? null : PLAIN_WHOLE_NUMBER.test(String(cell)) ? Number(cell) : cell,
            ),
          )
          .commit();
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
