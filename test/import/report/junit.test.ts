// The JUnit XML report: well-formed whatever the text, counts written in place at the end.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JUnitWriter, type KeyedResult, xmlAttribute, xmlText } from '../../../src/import/report/junit.js';
import { ReportWriter } from '../../../src/import/report/report.js';
import { tempDir } from '../../support/cli.js';
import { parseXml, type XmlElement } from '../../support/xml.js';

function result(overrides: Partial<KeyedResult>): KeyedResult {
  return { key: 'EXT-1', status: 'created', file: 'orders.csv', line: 2, ...overrides };
}

async function reportOf(results: KeyedResult[]): Promise<{ xml: string; root: XmlElement }> {
  const path = join(tempDir(), 'report.xml');
  const writer = await JUnitWriter.open(path, { name: 'ordercli orders import', keyName: 'externalId' });
  for (const each of results) writer.write(each);
  await writer.close();
  const xml = readFileSync(path, 'utf8');
  return { xml, root: parseXml(xml) };
}

describe('JUnit report', () => {
  it('one testsuite per input, one testcase per record, with the counts of each', async () => {
    const { root } = await reportOf([
      result({ key: 'A-1', status: 'created', line: 2, output: 'id 10001, code SO-1' }),
      result({ key: 'A-2', status: 'failed', line: 3, message: '422 Unprocessable Entity: bad item' }),
      result({
        key: 'A-3',
        status: 'invalid',
        line: 4,
        message: 'contact: is required',
        problems: [
          { file: 'orders.csv', line: 4, field: 'contact', message: 'is required' },
          { file: 'orders.csv', line: 5, field: 'item.orderedQuantity', message: 'must be above zero' },
        ],
      }),
      result({ key: 'A-4', status: 'skipped', line: 6, message: 'already created by an earlier run' }),
      result({ key: 'A-5', status: 'unknown', line: 7, message: 'the connection broke' }),
      result({ key: 'A-6', status: 'not-sent', line: 8, message: 'not sent: the import was interrupted' }),
      result({ key: undefined, status: 'invalid', line: 9, message: 'externalId: is required' }),
    ]);
    expect(root.name).toBe('testsuites');
    expect(root.attributes).toMatchObject({
      name: 'ordercli orders import',
      tests: '7',
      failures: '4',
      errors: '0',
      skipped: '2',
    });
    expect(root.children).toHaveLength(1);
    const suite = root.children[0]!;
    expect(suite.name).toBe('testsuite');
    expect(suite.attributes).toMatchObject({ name: 'orders.csv', tests: '7', failures: '4', skipped: '2' });
    expect(suite.attributes.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(Number(suite.attributes.time)).toBeGreaterThanOrEqual(0);
    const cases = suite.children;
    expect(cases.map((c) => c.attributes.name)).toEqual([
      'A-1',
      'A-2',
      'A-3',
      'A-4',
      'A-5',
      'A-6',
      '(no externalId) line 9',
    ]);
    expect(cases[0]!.attributes).toEqual({
      name: 'A-1',
      classname: 'orders.csv',
      file: 'orders.csv',
      line: '2',
    });
    expect(cases[0]!.children[0]).toMatchObject({
      name: 'system-out',
      text: 'orders.csv:2: created: id 10001, code SO-1',
    });
    expect(cases[1]!.children[0]).toMatchObject({
      name: 'failure',
      attributes: { type: 'failed', message: '422 Unprocessable Entity: bad item' },
      text: 'orders.csv:3: 422 Unprocessable Entity: bad item',
    });
    // Each problem of an invalid order on its own line.
    expect(cases[2]!.children[0]).toMatchObject({
      name: 'failure',
      attributes: { type: 'invalid' },
      text: 'orders.csv:4: contact: is required\norders.csv:5: item.orderedQuantity: must be above zero',
    });
    expect(cases[3]!.children[0]).toMatchObject({
      name: 'skipped',
      attributes: { message: 'already created by an earlier run' },
    });
    expect(cases[4]!.children[0]).toMatchObject({ name: 'failure', attributes: { type: 'unknown' } });
    expect(cases[5]!.children[0]).toMatchObject({
      name: 'skipped',
      attributes: { message: 'not sent: the import was interrupted; the next run sends it' },
    });
  });

  it('a skipped record names its id and code once, whether or not its message already does', async () => {
    const ids = 'id 10001, code SO-1';
    const { root } = await reportOf([
      result({ key: 'A-1', status: 'skipped', message: 'already created by an earlier run', output: ids }),
      result({
        key: 'A-2',
        status: 'skipped',
        message: `already created at 2026-11-23T11:00:00.000Z by orders import of /data/other.csv (${ids})`,
        output: ids,
      }),
    ]);
    const skipped = root.children[0]!.children.map((c) => c.children[0]!);
    expect(skipped.map((s) => s.attributes.message)).toEqual([
      `already created by an earlier run (${ids})`,
      `already created at 2026-11-23T11:00:00.000Z by orders import of /data/other.csv (${ids})`,
    ]);
    for (const s of skipped) expect(s.text.split(ids)).toHaveLength(2);
  });

  it('a record not sent says what the next run does once: its own words when it has them', async () => {
    const { root } = await reportOf([
      result({ key: 'A-1', status: 'not-sent', message: 'not sent: the service could not be reached' }),
      result({
        key: 'A-2',
        status: 'not-sent',
        message:
          'not sent: 1 order of the input is invalid, so none was sent; the next run sends it once that one is fixed (or with --skip-invalid)',
      }),
    ]);
    expect(root.children[0]!.children.map((c) => c.children[0]!.attributes.message)).toEqual([
      'not sent: the service could not be reached; the next run sends it',
      'not sent: 1 order of the input is invalid, so none was sent; the next run sends it once that one is fixed (or with --skip-invalid)',
    ]);
  });

  it('escapes markup, quotes, line breaks, `]]>` and characters XML cannot hold', async () => {
    const hostile = 'a <b> & "c" \']]>\' \t tab\nline\r\u0001\u001b[31m\u0085\ufffe é 😀';
    const { xml, root } = await reportOf([
      result({ key: hostile, status: 'failed', file: 'dir/ord"ers&.csv', message: hostile }),
    ]);
    expect(xml).not.toContain(']]>');
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe]/);
    const testcase = root.children[0]!.children[0]!;
    const shown = 'a <b> & "c" \']]>\' \t tab\nline\r\\u0001\\u001b[31m\\u0085\\ufffe é 😀';
    // Attributes keep tabs and line breaks (as references); text keeps them as they are.
    expect(testcase.attributes.name).toBe(shown);
    expect(testcase.attributes.file).toBe('dir/ord"ers&.csv');
    expect(testcase.children[0]!.attributes.message).toBe(shown);
    expect(testcase.children[0]!.text).toBe(`dir/ord"ers&.csv:2: ${shown}`);
  });

  it('xmlText and xmlAttribute escape exactly what they must', () => {
    expect(xmlText('x ]]> y & <z>')).toBe('x ]]&gt; y &amp; &lt;z&gt;');
    expect(xmlText('a\tb\nc\rd"')).toBe('a\tb\nc&#13;d"');
    expect(xmlAttribute('a\tb\nc\rd"')).toBe('a&#9;b&#10;c&#13;d&quot;');
    expect(xmlAttribute('\u0000\u007f')).toBe('\\u0000\\u007f');
  });

  it('a testsuite per input file, each with its own counts', async () => {
    const { root } = await reportOf([
      result({ key: 'A-1', file: 'a.csv' }),
      result({ key: 'A-2', file: 'a.csv', status: 'failed', message: 'no' }),
      result({ key: 'B-1', file: 'b.ndjson', status: 'skipped', message: 'already created' }),
    ]);
    expect(root.attributes).toMatchObject({ tests: '3', failures: '1', skipped: '1' });
    expect(root.children.map((suite) => suite.attributes)).toMatchObject([
      { name: 'a.csv', tests: '2', failures: '1', skipped: '0' },
      { name: 'b.ndjson', tests: '1', failures: '0', skipped: '1' },
    ]);
  });

  it('is well-formed with no record at all, and when closed twice', async () => {
    const path = join(tempDir(), 'report.xml');
    const writer = await JUnitWriter.open(path, { name: 'ordercli orders import', keyName: 'externalId' });
    await writer.close();
    await writer.close();
    const root = parseXml(readFileSync(path, 'utf8'));
    expect(root.attributes).toMatchObject({ tests: '0', failures: '0' });
    expect(root.children).toEqual([]);
  });

  it('counts of many records are written in place at the end (streamed, not held)', async () => {
    const many = Array.from({ length: 20_000 }, (_, i) =>
      result({ key: `EXT-${i}`, line: i + 2, status: i % 10 === 0 ? 'failed' : 'created', message: 'x' }),
    );
    const { root } = await reportOf(many);
    expect(root.attributes).toMatchObject({ tests: '20000', failures: '2000', skipped: '0' });
    expect(root.children[0]!.children).toHaveLength(20_000);
  });

  it('refuses a report that is not a regular file, before anything is sent', async () => {
    await expect(JUnitWriter.open('/dev/null', { name: 'x', keyName: 'externalId' })).rejects.toThrow(
      /must be a regular file/,
    );
  });

  it('ReportWriter picks JUnit for .xml, and names the three formats otherwise', async () => {
    const path = join(tempDir(), 'report.XML');
    const writer = await ReportWriter.open(path);
    expect(writer.format).toBe('junit');
    writer.write({
      index: 0,
      key: 'A-1',
      status: 'created',
      id: 7,
      code: 'SO-7',
      location: { file: 'orders.csv', line: 2, endLine: 2 },
    });
    await writer.close();
    const root = parseXml(readFileSync(path, 'utf8'));
    expect(root.children[0]!.children[0]!.children[0]!.text).toBe('orders.csv:2: created: id 7, code SO-7');
    await expect(ReportWriter.open(join(tempDir(), 'report.txt'))).rejects.toThrow(
      'name the file .csv, .ndjson or .xml (JUnit)',
    );
  });
});
