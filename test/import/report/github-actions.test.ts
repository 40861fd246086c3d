// GitHub Actions output: workflow commands escaped as GitHub reads them, capped; the job summary.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ANNOTATIONS_PER_KIND,
  Annotator,
  annotationPath,
  appendJobSummary,
  cell,
  escapeData,
  escapeProperty,
  inGitHubActions,
  renderJobSummary,
  workflowCommand,
} from '../../../src/import/report/github-actions.js';
import type { KeyedResult } from '../../../src/import/report/junit.js';
import { tempDir } from '../../support/cli.js';

/** Reads a workflow command back as GitHub's runner does (its unescaping of data and properties). */
function parseCommand(line: string): { kind: string; properties: Record<string, string>; message: string } {
  const match = /^::(\w+)(?: ([^:]*))?::(.*)\n$/s.exec(line);
  if (!match) throw new Error(`not a workflow command: ${JSON.stringify(line)}`);
  const decode = (text: string): string =>
    text
      .replace(/%0D/g, '\r')
      .replace(/%0A/g, '\n')
      .replace(/%3A/g, ':')
      .replace(/%2C/g, ',')
      .replace(/%25/g, '%');
  const properties: Record<string, string> = {};
  for (const pair of (match[2] ?? '').split(',').filter((p) => p !== '')) {
    const at = pair.indexOf('=');
    properties[pair.slice(0, at)] = decode(pair.slice(at + 1));
  }
  return { kind: match[1]!, properties, message: decode(match[3]!) };
}

describe('workflow commands', () => {
  it('escape %, CR and LF in the message, and also : and , in properties', () => {
    expect(escapeData('50% done\r\nnext: a, b')).toBe('50%25 done%0D%0Anext: a, b');
    expect(escapeProperty('50% a:b,c\n')).toBe('50%25 a%3Ab%2Cc%0A');
    expect(escapeData('%0A')).toBe('%250A');
  });

  it('print ::error file=…,line=…,title=<field>::<field>: <message> on one line, read back exactly', () => {
    const line = workflowCommand(
      'error',
      { file: 'data/a,b:c.csv', line: 12, title: 'contact.email' },
      'contact.email: "x\ny" is not 100% an e-mail',
    );
    expect(line).toBe(
      '::error file=data/a%2Cb%3Ac.csv,line=12,title=contact.email::contact.email: "x%0Ay" is not 100%25 an e-mail\n',
    );
    expect(line.split('\n')).toHaveLength(2);
    expect(parseCommand(line)).toEqual({
      kind: 'error',
      properties: { file: 'data/a,b:c.csv', line: '12', title: 'contact.email' },
      message: 'contact.email: "x\ny" is not 100% an e-mail',
    });
  });

  it('never let an input value start a command of its own or drive the terminal', () => {
    const line = workflowCommand('warning', { title: 'x\n::add-mask::y' }, 'a\n::stop-commands::t\u001b[2J');
    expect(line.split('\n')).toEqual([expect.stringMatching(/^::warning title=/), '']);
    expect(line).not.toContain('\u001b');
    expect(line).toContain('\\u001b[2J');
  });

  it('only when GITHUB_ACTIONS is exactly true', () => {
    expect(inGitHubActions({ GITHUB_ACTIONS: 'true' })).toBe(true);
    expect(inGitHubActions({ GITHUB_ACTIONS: 'false' })).toBe(false);
    expect(inGitHubActions({ CI: 'true' })).toBe(false);
  });
});

describe('annotation paths', () => {
  it('relative to GITHUB_WORKSPACE when the input is inside it, else as given; none for stdin', () => {
    const env = { GITHUB_WORKSPACE: '/home/runner/work/shop/shop' };
    expect(annotationPath('data/orders.csv', 'data/orders.csv', '/home/runner/work/shop/shop', env)).toBe(
      'data/orders.csv',
    );
    expect(annotationPath('orders.csv', 'orders.csv', '/home/runner/work/shop/shop/data', env)).toBe(
      'data/orders.csv',
    );
    expect(annotationPath('/tmp/orders.csv', '/tmp/orders.csv', '/home/runner/work/shop/shop', env)).toBe(
      '/tmp/orders.csv',
    );
    expect(annotationPath('../shopper/o.csv', '../shopper/o.csv', '/home/runner/work/shop/shop', env)).toBe(
      '../shopper/o.csv',
    );
    expect(annotationPath('orders.csv', 'orders.csv', '/w', {})).toBe('orders.csv');
    expect(annotationPath('-', 'stdin', '/w', env)).toBeUndefined();
  });
});

describe('Annotator', () => {
  function annotator(input = 'orders.csv'): { annotator: Annotator; lines: string[] } {
    const lines: string[] = [];
    const a = new Annotator({
      input,
      cwd: '/repo',
      env: { GITHUB_WORKSPACE: '/repo' },
      keyName: 'externalId',
      write: (line) => lines.push(line),
    });
    return { annotator: a, lines };
  }

  const base: KeyedResult = { key: 'A-1', status: 'created', file: 'orders.csv', line: 2 };

  it('an error per problem of an invalid record (the first of each first), a warning per failed or unknown one, nothing else', () => {
    const { annotator: a, lines } = annotator();
    a.result(base);
    a.result({ ...base, status: 'skipped', message: 'already created' });
    a.result({ ...base, status: 'not-sent', message: 'not sent' });
    a.result({
      ...base,
      key: 'A-2',
      status: 'invalid',
      line: 3,
      problems: [
        { file: 'orders.csv', line: 3, field: 'contact', message: 'is required' },
        { file: 'orders.csv', line: 4, field: 'item.orderedQuantity', message: 'must be above zero' },
      ],
    });
    a.result({ ...base, key: undefined, status: 'invalid', line: 5, message: 'externalId: is required' });
    a.result({
      ...base,
      key: 'A-3',
      status: 'failed',
      line: 6,
      endLine: 8,
      message: '422 Unprocessable Entity',
    });
    a.result({ ...base, key: 'A-4', status: 'unknown', line: 9, message: 'the connection broke' });
    a.finish('see the report');
    expect(lines).toEqual([
      '::error file=orders.csv,line=3,title=contact::contact: is required\n',
      '::error file=orders.csv,line=5::externalId: is required\n',
      '::error file=orders.csv,line=4,title=item.orderedQuantity::item.orderedQuantity: must be above zero\n',
      '::warning file=orders.csv,line=6,endLine=8,title=A-3 failed::A-3 failed: 422 Unprocessable Entity\n',
      '::warning file=orders.csv,line=9,title=A-4 unknown::A-4 unknown: the connection broke\n',
    ]);
  });

  it("names a workbook's sheet and cell in the message, since a line of a workbook shows nowhere", () => {
    const { annotator: a, lines } = annotator();
    a.problem({
      file: 'orders.xlsx',
      line: 4,
      cell: 'Commandes!G4',
      field: 'deliveryAddress.country',
      message: 'must be a two-letter upper-case country code such as FR',
    });
    a.finish('x');
    expect(lines).toEqual([
      '::error file=orders.xlsx,line=4,title=deliveryAddress.country::Commandes!G4: deliveryAddress.country: must be a two-letter upper-case country code such as FR\n',
    ]);
  });

  it('at most 10 of each kind (what GitHub shows for a step), then one notice of what was left out', () => {
    const { annotator: a, lines } = annotator();
    for (let i = 0; i < 13; i++)
      a.problem({ file: 'orders.csv', line: i + 2, field: 'contact', message: 'bad' });
    for (let i = 0; i < 11; i++) a.result({ ...base, status: 'failed', line: i + 2, message: 'no' });
    a.finish('every order is in the report report.xml');
    expect(ANNOTATIONS_PER_KIND).toBe(10);
    expect(lines.filter((line) => line.startsWith('::error '))).toHaveLength(10);
    expect(lines.filter((line) => line.startsWith('::warning '))).toHaveLength(10);
    expect(lines.at(-1)).toBe(
      '::notice title=ordercli%3A annotations left out::3 more errors and 1 more warning not annotated (GitHub shows 10 of each kind per step): every order is in the report report.xml.\n',
    );
  });

  it('within the 10, the first problem of each invalid record in input order, before any second problem', () => {
    const { annotator: a, lines } = annotator();
    // 12 invalid orders of two rows, each with a problem on both rows: 24 problems.
    for (let i = 0; i < 12; i++) {
      const line = 2 + 2 * i;
      a.result({
        ...base,
        key: `B-${i + 1}`,
        status: 'invalid',
        line,
        problems: [
          { file: 'orders.csv', line, field: 'contact', message: 'is required' },
          {
            file: 'orders.csv',
            line: line + 1,
            field: 'item.orderedQuantity',
            message: 'must be above zero',
          },
        ],
      });
    }
    expect(a.counts()).toEqual({
      shown: { errors: 10, warnings: 0 },
      left: { errors: 14, warnings: 0 },
      firstLeft: 2,
    });
    a.finish('every problem is listed in the log');
    expect(lines).toEqual([
      ...Array.from(
        { length: 10 },
        (_, i) => `::error file=orders.csv,line=${2 + 2 * i},title=contact::contact: is required\n`,
      ),
      '::notice title=ordercli%3A annotations left out::14 more errors not annotated (GitHub shows 10 of each kind per step): every problem is listed in the log.\n',
    ]);
  });

  it('second problems fill the 10 when there are fewer invalid records, in input order', () => {
    const { annotator: a, lines } = annotator();
    a.record([
      { file: 'orders.csv', line: 2, field: 'contact', message: 'is required' },
      { file: 'orders.csv', line: 3, field: 'item.orderedQuantity', message: 'must be above zero' },
    ]);
    a.record([{ file: 'orders.csv', line: 4, field: 'contact', message: 'is required' }]);
    a.finish('x');
    expect(lines.map((line) => /line=(\d+)/.exec(line)?.[1])).toEqual(['2', '4', '3']);
  });

  it('no file for standard input, and no notice when nothing was left out', () => {
    const { annotator: a, lines } = annotator('-');
    a.problem({ file: 'stdin', line: 4, field: 'contact', message: 'is required' });
    a.finish('x');
    expect(lines).toEqual(['::error line=4,title=contact::contact: is required\n']);
  });
});

describe('job summary', () => {
  it('a table of the counts, the first records not created with line and reason, the report', () => {
    const markdown = renderJobSummary({
      title: 'ordercli orders import orders.csv',
      outcome: 'Finished in 1.2 s: 3 orders sent to http://127.0.0.1:4780.',
      counts: [
        ['created', 1],
        ['failed', 2],
        ['total', 3],
      ],
      keyName: 'externalId',
      recordsName: 'orders',
      notCreated: [
        {
          key: 'A|2',
          status: 'failed',
          file: 'orders.csv',
          line: 3,
          message: '<script>alert(1)</script>\nx',
        },
      ],
      notCreatedTotal: 2,
      report: 'report.xml',
    });
    expect(markdown).toBe(
      [
        '### ordercli orders import orders.csv',
        '',
        'Finished in 1.2 s: 3 orders sent to http://127.0.0.1:4780.',
        '',
        '| created | failed | total |',
        '| ---: | ---: | ---: |',
        '| 1 | 2 | 3 |',
        '',
        '**Orders not created** (the first 1 of 2):',
        '',
        '| line | externalId | status | reason |',
        '| --- | --- | --- | --- |',
        '| orders.csv:3 | A\\|2 | failed | &lt;script&gt;alert(1)&lt;/script&gt;\\\\nx |',
        '',
        'Report: report.xml',
        // A blank line ends it, so that the next step's summary starts a block of its own.
        '',
        '',
      ].join('\n'),
    );
  });

  it('cells escape pipes, markup and control characters, and stay short', () => {
    expect(cell('a|b')).toBe('a\\|b');
    expect(cell('*x* _y_ `z` [l](u) ~s~')).toBe('\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u) \\~s\\~');
    expect(cell('a & <b>')).toBe('a &amp; &lt;b&gt;');
    expect(cell('\u001b[31m')).toBe('\\\\u001b\\[31m');
    expect(cell('x'.repeat(1000)).length).toBeLessThan(310);
  });

  it('is appended, and a write error is one warning, never a failure', async () => {
    const dir = tempDir();
    const path = join(dir, 'summary.md');
    writeFileSync(path, 'earlier step\n');
    expect(await appendJobSummary(path, '### this step\n')).toBeUndefined();
    expect(readFileSync(path, 'utf8')).toBe('earlier step\n### this step\n');
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    const warning = await appendJobSummary(folder, '### x\n');
    expect(warning).toBe(
      `warning: cannot append the job summary to ${folder} (EISDIR); the import itself is not affected.\n`,
    );
  });
});
