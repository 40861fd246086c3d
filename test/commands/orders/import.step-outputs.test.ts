// `orders import` (and `refs contacts import`) for CI, through the built binary against the sandbox:
// outputs whose folders do not exist yet are created, the summary names only the files written,
// and `$GITHUB_OUTPUT` receives the counts, the exit code and the report's path at the end of every
// run past argument parsing (exit 0, 2, 4 and 130 included).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandFile } from '../../support/actions-runner.js';
import { BIN, runBin, tempDir, testEnv } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox();

const HEADER =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';

function importArgs(ledger: string, ...args: string[]): string[] {
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

/** The step outputs a file holds, parsed as GitHub reads them. */
function stepOutputs(path: string): Record<string, string> {
  return parseCommandFile(readFileSync(path, 'utf8'));
}

function workspace(rows: string[]): { dir: string; ledger: string; output: string } {
  const dir = tempDir('ordercli-step-');
  writeFileSync(join(dir, 'orders.csv'), `${[HEADER, ...rows].join('\n')}\n`);
  return { dir, ledger: join(dir, 'state', 'ledger'), output: join(dir, 'github-output') };
}

describe('orders import on a fresh CI runner', () => {
  it('creates the missing folders of --report and --rejects, and names only the files written', async () => {
    const { dir, ledger, output } = workspace(['S-1,301,Bar,401,1', 'S-2,302,Café,402,2']);
    const run = await runBin(
      importArgs(ledger, 'orders.csv', '--report', 'out/deep/report.csv', '--rejects', 'out/rejects.csv'),
      { cwd: dir, env: { GITHUB_OUTPUT: output } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(dir, 'out/deep/report.csv'), 'utf8')).toContain('S-2');
    // Nothing rejected: no rejects file, and the summary does not name one.
    expect(existsSync(join(dir, 'out/rejects.csv'))).toBe(false);
    expect(run.stderr).toContain('report   out/deep/report.csv');
    expect(run.stderr).not.toContain('rejects  out/rejects.csv');
    expect(stepOutputs(output)).toEqual({
      created: '2',
      skipped: '0',
      failed: '0',
      unknown: '0',
      invalid: '0',
      'not-sent': '0',
      total: '2',
      'exit-code': '0',
      report: 'out/deep/report.csv',
    });
  });

  it('a new folder under a private one is private', async () => {
    const { dir, ledger } = workspace(['P-1,301,Bar,401,1']);
    chmodSync(dir, 0o700);
    const run = await runBin(importArgs(ledger, 'orders.csv', '--report', 'out/report.csv'), { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(join(dir, 'out')).mode & 0o777).toBe(0o700);
  });

  it('an output folder that cannot be created is exit 2 naming it and the reason in words; nothing sent', async () => {
    const { dir, ledger } = workspace(['F-1,301,Bar,401,1']);
    writeFileSync(join(dir, 'out'), 'a file where a folder should be\n');
    const before = sandbox.orders().length;
    const run = await runBin(importArgs(ledger, 'orders.csv', '--rejects', 'out/rejects.csv'), { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /Cannot create the folder .*out for --rejects out\/rejects\.csv \(.*out is a file, not a folder\); nothing was sent\./,
    );
    expect(run.stderr).not.toContain('ENOTDIR');
    expect(sandbox.orders().length).toBe(before);
  });

  it('an invalid input (exit 2) still writes the step outputs, with the report of its orders', async () => {
    const { dir, ledger, output } = workspace([
      'I-1,301,Bar,401,1',
      'I-2,302,Café,402,0',
      'I-3,303,Tabac,403,1',
    ]);
    const run = await runBin(importArgs(ledger, 'orders.csv', '--report', 'out/report.csv'), {
      cwd: dir,
      env: { GITHUB_OUTPUT: output },
    });
    expect(run.code, run.stderr).toBe(2);
    expect(stepOutputs(output)).toMatchObject({
      created: '0',
      invalid: '1',
      'not-sent': '2',
      total: '3',
      'exit-code': '2',
      report: 'out/report.csv',
    });
  });

  it('a partial import (exit 4) and a dry run say their counts', async () => {
    const { dir, ledger, output } = workspace(['Q-1,301,Bar,401,1', 'Q-2,302,Café,9999,1']);
    const dry = await runBin(importArgs(ledger, 'orders.csv', '--dry-run'), {
      cwd: dir,
      env: { GITHUB_OUTPUT: output },
    });
    expect(dry.code, dry.stderr).toBe(0);
    expect(stepOutputs(output)).toMatchObject({
      total: '2',
      invalid: '0',
      'not-sent': '2',
      'exit-code': '0',
    });
    writeFileSync(output, '');
    const run = await runBin(importArgs(ledger, 'orders.csv'), { cwd: dir, env: { GITHUB_OUTPUT: output } });
    expect(run.code, run.stderr).toBe(4);
    const outputs = stepOutputs(output);
    expect(outputs).toMatchObject({ created: '1', failed: '1', total: '2', 'exit-code': '4' });
    expect(outputs.report).toBeUndefined();
  });

  it('a value no delimiter can end early: a report path with a newline in it', async () => {
    const { dir, ledger, output } = workspace(['N-1,301,Bar,401,1']);
    mkdirSync(join(dir, 'out'));
    const report = 'out/odd\nname=1.csv';
    const run = await runBin(importArgs(ledger, 'orders.csv', '--report', report), {
      cwd: dir,
      env: { GITHUB_OUTPUT: output },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(stepOutputs(output)).toMatchObject({ report, 'exit-code': '0', created: '1' });
  });

  it('Ctrl-C (exit 130) writes the step outputs with the exit code', async () => {
    const rows = Array.from({ length: 400 }, (_, i) => `C-${i},301,Bar,401,1`);
    const { dir, ledger, output } = workspace(rows);
    sandbox.setFaults({ latencyMs: 200 });
    const child = spawn(process.execPath, [BIN, ...importArgs(ledger, 'orders.csv', '--concurrency', '2')], {
      cwd: dir,
      env: testEnv({ GITHUB_OUTPUT: output, CI: 'true' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitFor(
      () => sandbox.requests.some((entry) => entry.method === 'POST'),
      20_000,
      'a first order sent',
    );
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    expect(stepOutputs(output)).toMatchObject({ 'exit-code': '130', total: '400' });
    const outputs = stepOutputs(output);
    expect(Number(outputs['not-sent'])).toBeGreaterThan(0);
  });
});
