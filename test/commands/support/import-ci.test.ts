// What an import shows a CI: its problems ordered so that ten lines say most, annotated in a GitHub
// Actions job only, and the job summary appended to $GITHUB_STEP_SUMMARY when that names a file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Context } from '../../../src/command-support/context.js';
import { ImportCiOutput, mostUsefulFirst } from '../../../src/commands/support/import-ci.js';
import { InputError, type InputProblem } from '../../../src/core/errors.js';
import { InvalidInputError } from '../../../src/import/check/validate.js';
import { createTestIO } from '../../../src/io/memory.js';
import { tempDir } from '../../support/cli.js';

function problem(line: number, field: string, message = 'is wrong'): InputProblem {
  return { file: 'orders.csv', line, field, message };
}

/** Two invalid orders of two problems each, and the note of one more not listed. */
function invalidInput(): InvalidInputError {
  const a = [problem(2, 'contact'), problem(3, 'item.orderedQuantity')];
  const b = [problem(5, 'externalId'), problem(5, 'items')];
  const more = { file: 'orders.csv', message: '… and 1 more invalid order, not listed' };
  return new InvalidInputError(
    '3 of 4 orders in orders.csv are invalid; nothing was sent.',
    [...a, ...b, more],
    [
      { key: 'A', location: { file: 'orders.csv', line: 2, endLine: 3 }, problems: a },
      { key: 'B', location: { file: 'orders.csv', line: 5, endLine: 5 }, problems: b },
    ],
  );
}

function ciContext(env: NodeJS.ProcessEnv) {
  const io = createTestIO();
  const cwd = tempDir('ordercli-ci-');
  return { io, ctx: new Context({ io, env, signal: new AbortController().signal, cwd }) };
}

describe('mostUsefulFirst', () => {
  it('puts the first problem of each invalid order first, then the others, then those of no order', () => {
    expect(
      mostUsefulFirst(invalidInput()).map(({ problem, rank }) => `${rank} ${problem.line ?? '-'}`),
    ).toEqual(['first 2', 'first 5', 'other 3', 'other 5', 'other -']);
  });

  it('keeps the order of the problems of a header or a syntax error', () => {
    const error = new InputError('orders.csv is not valid CSV', [problem(9, 'b'), problem(1, 'a')]);
    expect(mostUsefulFirst(error).map(({ problem, rank }) => `${rank} ${problem.line}`)).toEqual([
      'first 9',
      'first 1',
    ]);
  });
});

describe('ImportCiOutput', () => {
  it('annotates nothing outside GitHub Actions, and writes the summary only where one is asked for', async () => {
    const summary = join(tempDir('ordercli-ci-'), 'summary.md');
    const { io, ctx } = ciContext({ GITHUB_STEP_SUMMARY: summary });
    const ci = new ImportCiOutput(ctx, { input: 'orders.csv' });
    expect(ci.onResult).toBeUndefined();
    await ci.failed(invalidInput());
    expect(io.stderrText()).toBe('');
    expect(readFileSync(summary, 'utf8')).toContain('ordercli orders import orders.csv');

    const plain = ciContext({});
    await new ImportCiOutput(plain.ctx, { input: 'orders.csv' }).failed(invalidInput());
    expect(plain.io.stderrText()).toBe('');
  });

  it('annotates the problems of an invalid input, most useful first, and sums them up', async () => {
    const summary = join(tempDir('ordercli-ci-'), 'summary.md');
    const { io, ctx } = ciContext({ GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary });
    const ci = new ImportCiOutput(ctx, { input: 'orders.csv', dryRun: true });
    expect(ci.onResult).toBeTypeOf('function');
    await ci.failed(invalidInput());
    const annotations = io
      .stderrText()
      .split('\n')
      .filter((line) => line.startsWith('::'));
    expect(annotations.map((line) => /line=(\d+)/.exec(line)?.[1])).toEqual(['2', '5', '3', '5', undefined]);
    expect(annotations[0]).toMatch(/^::error file=orders\.csv,line=2,title=contact::contact: is wrong$/);
    const markdown = readFileSync(summary, 'utf8');
    expect(markdown).toContain('ordercli orders import orders.csv --dry-run');
    expect(markdown).toContain('3 of 4 orders in orders.csv are invalid; nothing was sent.');
  });

  it('ignores an error that is not about the input', async () => {
    const summary = join(tempDir('ordercli-ci-'), 'summary.md');
    const { io, ctx } = ciContext({ GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summary });
    await new ImportCiOutput(ctx, { input: '-' }).failed(new Error('connection refused'));
    expect(io.stderrText()).toBe('');
    expect(existsSync(summary)).toBe(false);
  });
});
