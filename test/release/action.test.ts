// action.yml, run the way a GitHub runner runs a composite action (test/support/actions-runner.ts):
// its inputs substituted, each step a bash script with $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY and
// $GITHUB_PATH as files, against the sandbox. The install step runs too: on this checkout, built
// already, it only puts ordercli on PATH (a fresh runner's checkout gets `npm ci`).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newStepFiles, type RunContext, runAction, runSteps } from '../support/actions-runner.js';
import { ROOT, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox();

const HEADER =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';

function context(rows: string[]): RunContext {
  const workspace = tempDir('ordercli-action-');
  writeFileSync(join(workspace, 'orders.csv'), `${[HEADER, ...rows].join('\n')}\n`);
  return {
    workspace,
    actionPath: ROOT,
    // The token from the job's environment (a secret), never an input.
    env: { ORDERCLI_TOKEN: sandbox.tokens.partner, ORDERCLI_CONFIG_DIR: join(workspace, '.config') },
    github: { event_name: 'push', run_id: '1', run_attempt: '1', action_path: ROOT, workspace },
  };
}

function posts(): number {
  return sandbox.requests.filter((entry) => entry.method === 'POST').length;
}

describe('the GitHub Action (action.yml)', () => {
  it('imports with a report and rejects in new folders, a job summary, annotations and step outputs', async () => {
    const ctx = context(['G-1,301,Bar,401,1', 'G-2,302,Café,402,0', 'G-3,303,Tabac,403,2']);
    const files = newStepFiles();
    const result = await runAction(
      ctx,
      {
        file: 'orders.csv',
        'base-url': sandbox.url,
        ledger: 'state/ledger',
        concurrency: '4',
        report: 'out/report.xml',
        rejects: 'out/rejects.csv',
        args: '--skip-invalid',
      },
      files,
    );
    const importStep = result.steps[1]!;
    // One invalid order: exit 4 fails the step, as the docs say it does.
    expect(importStep.exitCode, importStep.stderr).toBe(4);
    expect(result.ok).toBe(false);
    expect(result.outputs).toEqual({
      created: '2',
      skipped: '0',
      failed: '0',
      unknown: '0',
      invalid: '1',
      'not-sent': '0',
      total: '3',
      'exit-code': '4',
      report: 'out/report.xml',
    });
    expect(readFileSync(join(ctx.workspace, 'out/report.xml'), 'utf8')).toContain('<testsuites');
    expect(existsSync(join(ctx.workspace, 'out/rejects.csv'))).toBe(true);
    expect(importStep.stderr).toMatch(/^::error file=orders\.csv,line=3/m);
    expect(result.summary).toContain('ordercli orders import orders.csv');
    expect(readFileSync(files.path, 'utf8').trim()).toBe(join(files.dir, 'ordercli-bin'));
    // The token was used and never shown.
    expect(posts()).toBe(2);
    for (const step of result.steps) expect(step.stdout + step.stderr).not.toContain(sandbox.tokens.partner);
  });

  it('a dry run sends nothing and says the counts', async () => {
    const ctx = context(['D-1,301,Bar,401,1', 'D-2,302,Café,402,1']);
    const result = await runAction(
      ctx,
      { file: 'orders.csv', 'base-url': sandbox.url, 'dry-run': 'true' },
      newStepFiles(),
    );
    expect(result.ok, result.steps[1]!.stderr).toBe(true);
    expect(result.outputs).toMatchObject({
      total: '2',
      invalid: '0',
      'not-sent': '2',
      'exit-code': '0',
      report: '',
    });
    expect(posts()).toBe(0);
  });

  it('without a file it only installs: ordercli is on PATH for the next steps', async () => {
    const ctx = context([]);
    const files = newStepFiles();
    const job = await runSteps(
      [{ uses: 'acme/ordercli@v1' }, { run: 'ordercli --version > version.txt' }],
      ctx,
      { files },
    );
    expect(job.ok, job.steps.map((step) => step.stderr).join('')).toBe(true);
    expect(readFileSync(join(ctx.workspace, 'version.txt'), 'utf8').trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(posts()).toBe(0);
  });

  it('args are split as a shell splits words, and never run', async () => {
    const ctx = context(['W-1,301,Bar,401,1']);
    const result = await runAction(
      ctx,
      {
        file: 'orders.csv',
        'base-url': sandbox.url,
        args: `--journal "week 12" --dry-run $(touch pwned) \`touch pwned2\``,
      },
      newStepFiles(),
    );
    // `$(touch` and `pwned)` reach ordercli as words (an unknown argument: exit 2); nothing ran.
    expect(result.outputs['exit-code'] ?? '').not.toBe('0');
    expect(existsSync(join(ctx.workspace, 'pwned'))).toBe(false);
    expect(existsSync(join(ctx.workspace, 'pwned2'))).toBe(false);
    const quoted = await runAction(
      ctx,
      { file: 'orders.csv', 'base-url': sandbox.url, args: `--journal "week 12" --dry-run` },
      newStepFiles(),
    );
    expect(quoted.ok, quoted.steps[1]!.stderr).toBe(true);
    const unclosed = await runAction(ctx, { file: 'orders.csv', args: `--journal "week` }, newStepFiles());
    expect(unclosed.steps[1]!.exitCode).toBe(2);
    expect(unclosed.steps[1]!.stdout).toContain('::error::args: cannot split into words');
  });

  it('refuses a dry-run input that is neither true nor false', async () => {
    const ctx = context(['B-1,301,Bar,401,1']);
    const result = await runAction(ctx, { file: 'orders.csv', 'dry-run': 'yes' }, newStepFiles());
    expect(result.steps[1]!.exitCode).toBe(2);
    expect(posts()).toBe(0);
  });
});
