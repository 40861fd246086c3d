// `orders import` in CI, through the built binary against the sandbox: the JUnit report
// (`--report report.xml`), GitHub annotations (only with GITHUB_ACTIONS=true) and the job summary.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';
import { parseXml, type XmlElement } from '../../support/xml.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

const HEADER =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';
// Lines 2-3: created by the first run, skipped by the second.
const FIRST_RUN = ['A-1,301,Épicerie Dupont,401,2', 'A-2,302,Café <du> port & fils,402,1'];
// Lines 4-8: A-3 created; A-4 refused by the service (no packaging 9999); invalid
// (A-6 on two rows, its second one wrong); A-7 created.
const SECOND_RUN = [
  'A-3,303,Bar,403,1',
  'A-4,304,Boulangerie,9999,1',
  'A-5,305,Fromagerie,404,0',
  'A-6,,Primeur,405,1',
  'A-6,,,406,abc',
  'A-7,306,Tabac,407,3',
];

/** The order ledger of this test's runs, kept in a folder as a CI job keeps its state. */
let ledger: string;
beforeEach(() => {
  ledger = tempDir('ordercli-ledger-');
});

function importArgs(...args: string[]): string[] {
  return [
    '--base-url',
    sandbox.url,
    '--token',
    sandbox.tokens.partner,
    '--ledger',
    ledger,
    'orders',
    'import',
    ...args,
  ];
}

/** A workspace with `data/orders.csv` imported once (A-1, A-2 created), then grown to eight orders. */
async function workspaceAfterFirstRun(): Promise<string> {
  const workspace = tempDir('ordercli-ci-');
  mkdirSync(join(workspace, 'data'));
  const input = join(workspace, 'data/orders.csv');
  writeFileSync(input, `${[HEADER, ...FIRST_RUN].join('\n')}\n`);
  const first = await runBin(importArgs('data/orders.csv'), { cwd: workspace, env: notInCi() });
  expect(first.code, first.stderr).toBe(0);
  appendFileSync(input, `${SECOND_RUN.join('\n')}\n`);
  return workspace;
}

function notInCi(): Record<string, undefined> {
  return { GITHUB_ACTIONS: undefined, GITHUB_STEP_SUMMARY: undefined, GITHUB_WORKSPACE: undefined };
}

function inGitHub(workspace: string): Record<string, string> {
  return {
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    GITHUB_STEP_SUMMARY: join(workspace, 'step-summary.md'),
  };
}

function testcases(root: XmlElement): XmlElement[] {
  return root.children.flatMap((suite) => suite.children);
}

function workflowCommands(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line.startsWith('::'));
}

describe('orders import --report report.xml in CI', () => {
  it('a JUnit report of created, skipped, failed and invalid orders, with annotations and a job summary', async () => {
    const workspace = await workspaceAfterFirstRun();
    const result = await runBin(importArgs('data/orders.csv', '--skip-invalid', '--report', 'report.xml'), {
      cwd: workspace,
      env: inGitHub(workspace),
    });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stdout).toBe('');

    const root = parseXml(readFileSync(join(workspace, 'report.xml'), 'utf8'));
    expect(root.attributes).toMatchObject({ tests: '7', failures: '3', errors: '0', skipped: '2' });
    expect(root.children).toHaveLength(1);
    expect(root.children[0]!.attributes).toMatchObject({
      name: 'data/orders.csv',
      tests: '7',
      failures: '3',
    });
    const cases = testcases(root);
    expect(cases.map((c) => [c.attributes.name, c.attributes.line, c.children[0]?.name])).toEqual([
      ['A-1', '2', 'skipped'],
      ['A-2', '3', 'skipped'],
      ['A-3', '4', 'system-out'],
      ['A-4', '5', 'failure'],
      ['A-5', '6', 'failure'],
      ['A-6', '7', 'failure'],
      ['A-7', '9', 'system-out'],
    ]);
    expect(cases[0]!.attributes).toMatchObject({ classname: 'data/orders.csv', file: 'data/orders.csv' });
    expect(cases[0]!.children[0]!.attributes.message).toMatch(/^already created by an earlier run \(id \d+/);
    expect(cases[2]!.children[0]!.text).toMatch(/^data\/orders\.csv:4: created: id \d+, code /);
    expect(cases[3]!.children[0]!.attributes).toMatchObject({
      type: 'failed',
      message: expect.stringContaining('422 Unprocessable Entity'),
    });
    expect(cases[3]!.children[0]!.text).toMatch(/^data\/orders\.csv:5: 422 Unprocessable Entity/);
    expect(cases[4]!.children[0]!.attributes.type).toBe('invalid');
    expect(cases[4]!.children[0]!.text).toBe(
      'data/orders.csv:6: item.orderedQuantity: must be a whole number above zero, not 0',
    );
    // Each problem of A-6 on its own row.
    expect(cases[5]!.children[0]!.text.split('\n')).toEqual([
      expect.stringMatching(/^data\/orders\.csv:7: contact: /),
      expect.stringMatching(/^data\/orders\.csv:8: item\.orderedQuantity: /),
    ]);

    const commands = workflowCommands(result.stderr);
    // The errors, the first problem of each invalid order first, then the warnings, in input order.
    expect(commands).toEqual([
      '::error file=data/orders.csv,line=6,title=item.orderedQuantity::item.orderedQuantity: must be a whole number above zero, not 0',
      '::error file=data/orders.csv,line=7,title=contact::contact: is required',
      '::error file=data/orders.csv,line=8,title=item.orderedQuantity::item.orderedQuantity: must be a whole number above zero, not "abc"',
      expect.stringMatching(
        /^::warning file=data\/orders\.csv,line=5,title=A-4 failed::A-4 failed: 422 Unprocessable Entity/,
      ),
    ]);

    const summary = readFileSync(join(workspace, 'step-summary.md'), 'utf8');
    expect(summary).toContain('### ordercli orders import data/orders.csv\n');
    expect(summary).toContain(
      '| created | already created | failed | unknown | invalid | total |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n| 2 | 2 | 1 | 0 | 2 | 7 |\n',
    );
    expect(summary).toMatch(/\| data\/orders\.csv:5 \| A-4 \| failed \| 422 Unprocessable Entity/);
    expect(summary).toContain('Report: report.xml');
  });

  it('no annotation and no summary outside GitHub Actions; the report is the same', async () => {
    const workspace = await workspaceAfterFirstRun();
    const result = await runBin(importArgs('data/orders.csv', '--skip-invalid', '--report', 'report.xml'), {
      cwd: workspace,
      env: { ...notInCi(), GITHUB_STEP_SUMMARY: undefined, GITHUB_ACTIONS: 'false' },
    });
    expect(result.code, result.stderr).toBe(4);
    expect(workflowCommands(result.stderr)).toEqual([]);
    const root = parseXml(readFileSync(join(workspace, 'report.xml'), 'utf8'));
    expect(root.attributes).toMatchObject({ tests: '7', failures: '3', skipped: '2' });
  });

  it('invalid input (exit 2): every problem annotated and summarised, nothing sent, and a report: the invalid orders failed, the rest skipped', async () => {
    const workspace = await workspaceAfterFirstRun();
    // An earlier run's report is replaced: CI must never show it for this run.
    writeFileSync(join(workspace, 'report.xml'), '<testsuites name="an earlier run"/>\n');
    const posts = sandbox.requests.length;
    const result = await runBin(importArgs('data/orders.csv', '--report', 'report.xml'), {
      cwd: workspace,
      env: inGitHub(workspace),
    });
    expect(result.code, result.stderr).toBe(2);
    expect(sandbox.requests.length).toBe(posts);
    const commands = workflowCommands(result.stderr);
    // The first problem of A-5 and of A-6, then A-6's second one.
    expect(commands).toEqual([
      '::error file=data/orders.csv,line=6,title=item.orderedQuantity::item.orderedQuantity: must be a whole number above zero, not 0',
      '::error file=data/orders.csv,line=7,title=contact::contact: is required',
      '::error file=data/orders.csv,line=8,title=item.orderedQuantity::item.orderedQuantity: must be a whole number above zero, not "abc"',
    ]);
    // The annotations come before the error, which still lists every problem.
    expect(result.stderr.indexOf('::error')).toBeLessThan(result.stderr.indexOf('error: 2 of 7 orders'));
    const summary = readFileSync(join(workspace, 'step-summary.md'), 'utf8');
    expect(summary).toContain('2 of 7 orders in data/orders.csv are invalid; nothing was sent.');
    expect(summary).toContain(
      '| data/orders.csv:6 | item.orderedQuantity | must be a whole number above zero, not 0 |',
    );
    expect(summary).toContain('Report: report.xml');

    const root = parseXml(readFileSync(join(workspace, 'report.xml'), 'utf8'));
    expect(root.attributes).toMatchObject({
      name: 'ordercli orders import',
      tests: '7',
      failures: '2',
      errors: '0',
      skipped: '5',
    });
    const cases = testcases(root);
    expect(cases.map((c) => [c.attributes.name, c.attributes.line, c.children[0]?.name])).toEqual([
      ['A-1', '2', 'skipped'],
      ['A-2', '3', 'skipped'],
      ['A-3', '4', 'skipped'],
      ['A-4', '5', 'skipped'],
      ['A-5', '6', 'failure'],
      ['A-6', '7', 'failure'],
      ['A-7', '9', 'skipped'],
    ]);
    expect(cases[0]!.children[0]!.attributes.message).toBe(
      'not sent: 2 orders of the input are invalid, so none was sent; the next run sends it once they are fixed (or with --skip-invalid)',
    );
    expect(cases[4]!.children[0]!.attributes.type).toBe('invalid');
    expect(cases[5]!.children[0]!.text.split('\n')).toEqual([
      'data/orders.csv:7: contact: is required',
      'data/orders.csv:8: item.orderedQuantity: must be a whole number above zero, not "abc"',
    ]);

    const outside = await runBin(importArgs('data/orders.csv'), { cwd: workspace, env: notInCi() });
    expect(outside.code).toBe(2);
    expect(workflowCommands(outside.stderr)).toEqual([]);
  });

  it('more invalid orders than GitHub shows: the first problem of the first ten annotated, the summary says how many more and where', async () => {
    const workspace = tempDir('ordercli-ci-');
    // 12 invalid orders, each with a problem on both of its rows, then a valid one.
    const rows = Array.from({ length: 12 }, (_, i) => [
      `B-${i + 1},,Client ${i + 1},401,1`,
      `B-${i + 1},,,402,0`,
    ]).flat();
    writeFileSync(join(workspace, 'orders.csv'), `${[HEADER, ...rows, 'B-13,301,Bar,403,1'].join('\n')}\n`);
    const result = await runBin(importArgs('orders.csv', '--report', 'report.csv'), {
      cwd: workspace,
      env: inGitHub(workspace),
    });
    expect(result.code, result.stderr).toBe(2);
    const commands = workflowCommands(result.stderr);
    expect(commands.slice(0, 10)).toEqual(
      Array.from(
        { length: 10 },
        (_, i) => `::error file=orders.csv,line=${2 + 2 * i},title=contact::contact: is required`,
      ),
    );
    expect(commands.slice(10)).toEqual([
      '::notice title=ordercli%3A annotations left out::14 more errors not annotated (GitHub shows 10 of each kind per step): every problem is listed in the log, and every order with its problems in the report report.csv.',
    ]);
    const summary = readFileSync(join(workspace, 'step-summary.md'), 'utf8');
    expect(summary).toContain('**Problems** (the first 10 of 24):');
    expect(summary).toContain(
      '14 more problems are not annotated, 2 of them the first problem of an invalid order (GitHub shows 10 annotations of each kind per step; the first problem of each invalid order comes first). Every problem is listed in the log, and every order with its problems in the report report.csv.',
    );
    // A CSV report on exit 2 too: a line per order, in input order.
    const report = readFileSync(join(workspace, 'report.csv'), 'utf8').trim().split('\r\n');
    expect(report).toHaveLength(14);
    expect(report[1]).toBe(
      'B-1,invalid,,,,"contact: is required; line 3: item.orderedQuantity: must be a whole number above zero, not 0",2',
    );
    expect(report[13]).toBe(
      'B-13,not-sent,,,,"not sent: 12 orders of the input are invalid, so none was sent; the next run sends it once they are fixed (or with --skip-invalid)",26',
    );
  });

  it('a report that cannot be written on exit 2 is said below the problems; the problems stay the error', async () => {
    const workspace = await workspaceAfterFirstRun();
    mkdirSync(join(workspace, 'taken.xml'));
    const result = await runCli(importArgs('data/orders.csv', '--report', 'taken.xml'), {
      cwd: workspace,
      env: notInCi(),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('error: 2 of 7 orders in data/orders.csv are invalid; nothing was sent.');
    expect(result.stderr).toMatch(/Cannot write the report .*taken\.xml \(EISDIR: it is a folder\)\./);
  });

  it('a skipped order created from another input names its id and code once in the report', async () => {
    const workspace = await workspaceAfterFirstRun();
    writeFileSync(join(workspace, 'other.csv'), `${HEADER}\nA-3,303,Bar,403,1\n`);
    // One config folder, so one order ledger, for both runs.
    const env = { ...notInCi(), ORDERCLI_CONFIG_DIR: join(workspace, 'config') };
    const other = await runBin(importArgs('other.csv'), { cwd: workspace, env });
    expect(other.code, other.stderr).toBe(0);
    const result = await runBin(importArgs('data/orders.csv', '--skip-invalid', '--report', 'report.xml'), {
      cwd: workspace,
      env,
    });
    expect(result.code, result.stderr).toBe(4);
    const cases = testcases(parseXml(readFileSync(join(workspace, 'report.xml'), 'utf8')));
    const skipped = cases.find((c) => c.attributes.name === 'A-3')!.children[0]!;
    expect(skipped.name).toBe('skipped');
    const message = skipped.attributes.message!;
    expect(message).toMatch(
      /^already created at .* by orders import of .*other\.csv \(id \d+, code [^)]+\)$/,
    );
    expect(message.match(/\bid \d+/g)).toHaveLength(1);
    expect(skipped.text.match(/\bid \d+/g)).toHaveLength(1);
    // An order of this input's earlier run still names them, once.
    const earlier = cases.find((c) => c.attributes.name === 'A-1')!.children[0]!.attributes.message!;
    expect(earlier).toMatch(/^already created by an earlier run \(id \d+, code [^)]+\)$/);
  });

  it('an import stopped early (credentials refused) leaves a well-formed report: the rest not sent, skipped', async () => {
    const workspace = await workspaceAfterFirstRun();
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'status', status: 401 }]);
    const result = await runBin(
      importArgs('data/orders.csv', '--skip-invalid', '--concurrency', '1', '--report', 'report.xml'),
      { cwd: workspace, env: notInCi() },
    );
    expect(result.code, result.stderr).toBe(3);
    const root = parseXml(readFileSync(join(workspace, 'report.xml'), 'utf8'));
    const cases = testcases(root);
    expect(cases).toHaveLength(7);
    const notSent = cases.filter((c) => c.children[0]?.attributes.message?.startsWith('not sent:'));
    expect(notSent.length).toBeGreaterThan(0);
    expect(notSent[0]!.children[0]!.name).toBe('skipped');
    expect(Number(root.attributes.tests)).toBe(7);
  });

  it('a dry run annotates the problems it lets through (--skip-invalid) and summarises its counts', async () => {
    const workspace = await workspaceAfterFirstRun();
    const posts = sandbox.requests.filter((entry) => entry.method === 'POST').length;
    const result = await runCli(importArgs('data/orders.csv', '--dry-run', '--skip-invalid'), {
      cwd: workspace,
      env: inGitHub(workspace),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(sandbox.requests.filter((entry) => entry.method === 'POST').length).toBe(posts);
    expect(workflowCommands(result.stderr)).toEqual([
      '::error file=data/orders.csv,line=6,title=item.orderedQuantity::item.orderedQuantity: must be a whole number above zero, not 0',
      '::error file=data/orders.csv,line=7,title=contact::contact: is required',
      '::error file=data/orders.csv,line=8,title=item.orderedQuantity::item.orderedQuantity: must be a whole number above zero, not "abc"',
    ]);
    const summary = readFileSync(join(workspace, 'step-summary.md'), 'utf8');
    expect(summary).toContain(
      '### ordercli orders import data/orders.csv --dry-run\n\nDry run: nothing was sent.\n',
    );
    expect(summary).toContain('| total | valid | invalid |\n| ---: | ---: | ---: |\n| 7 | 5 | 2 |\n');
  });

  it('a job summary that cannot be written is one warning line; the import goes on', async () => {
    const workspace = await workspaceAfterFirstRun();
    const result = await runBin(importArgs('data/orders.csv', '--skip-invalid'), {
      cwd: workspace,
      env: { ...inGitHub(workspace), GITHUB_STEP_SUMMARY: join(workspace, 'data') },
    });
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain(
      `warning: cannot append the job summary to ${join(workspace, 'data')} (EISDIR); the import itself is not affected.`,
    );
  });
});
