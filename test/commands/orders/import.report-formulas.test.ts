// A --report CSV opened in Excel or LibreOffice runs no formula: a value starting with =, +, -, @,
// tab or carriage return gets a leading ' (OWASP), and no escape sequence from the service stays
// raw. The report of an import through the binary, and the writer with a hostile message.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReportWriter } from '../../../src/import/report/report.js';
import { runBin, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();

describe('--report CSV in a spreadsheet', () => {
  it('neutralizes values that would start a formula', async () => {
    const dir = tempDir();
    const input = join(dir, 'orders.csv');
    writeFileSync(
      input,
      'externalId,externalReference,contact.internalReferenceId,item.internalReferenceId,item.orderedQuantity\n' +
        '=1+1,PO-1,301,401,1\n-5,PO-2,301,401,1\n@SUM(A1),PO-3,301,401,1\nplain,PO-4,301,401,1\n',
    );
    const report = join(dir, 'report.csv');
    const result = await runBin(
      [
        '--base-url',
        sandbox.url,
        '--token',
        sandbox.tokens.full,
        'orders',
        'import',
        input,
        '--report',
        report,
      ],
      { env: { ORDERCLI_CONFIG_DIR: join(dir, 'config') } },
    );
    expect(result.code).toBe(0);
    const lines = readFileSync(report, 'utf8').trim().split('\r\n');
    expect(lines.slice(1).map((line) => line.split(',')[0])).toEqual(["'=1+1", "'-5", "'@SUM(A1)", 'plain']);
    // The service received the values as they are: only the report's cells are neutralized.
    expect(sandbox.orders().map((order) => order.externalId)).toEqual(['=1+1', '-5', '@SUM(A1)', 'plain']);
  });

  it("writes a service's message with a formula and an escape sequence as inert text", async () => {
    const path = join(tempDir(), 'report.csv');
    const writer = await ReportWriter.open(path);
    writer.write({
      index: 0,
      key: 'A-1',
      status: 'failed',
      httpStatus: 422,
      message: '=HYPERLINK("http://evil.example","x")\u001b[2J',
      location: { file: 'orders.csv', line: 2, endLine: 2 },
    });
    await writer.close();
    const row = readFileSync(path, 'utf8').split('\r\n')[1]!;
    expect(row).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")\\u001b[2J"`);
    expect(row).not.toContain('\u001b');
  });
});
