// `--arg <name> <value>`: the pairs taken out of argv before commander parses it.
import { describe, expect, it } from 'vitest';
import { checkJqArgsNeedJq, takeJqArgs } from '../../src/command-support/jq-args.js';
import type { JqVariable } from '../../src/io/jq.js';
import { runCli } from '../support/cli.js';

describe('takeJqArgs', () => {
  it('takes each --arg and its two words out, wherever they stand before --', () => {
    const variables: JqVariable[] = [];
    const rest = takeJqArgs(
      ['--arg', 'a', '--json', 'orders', 'get', '--arg', 'b_2', '', '42', '--', '--arg', 'x', 'y'],
      variables,
    );
    expect(rest).toEqual(['orders', 'get', '42', '--', '--arg', 'x', 'y']);
    expect(variables).toEqual([
      { name: 'a', value: '--json' },
      { name: 'b_2', value: '' },
    ]);
  });

  it('refuses an --arg short of its value, written with =, or with a name jq cannot use', () => {
    expect(() => takeJqArgs(['list', '--arg', 'code'], [])).toThrow(
      '--arg takes a name and a value, as two words: --arg <name> <value> (--arg code P1).',
    );
    expect(() => takeJqArgs(['--arg=code', 'P1'], [])).toThrow(/as two words/);
    expect(() => takeJqArgs(['--arg', 'my-code', 'P1'], [])).toThrow(
      '--arg "my-code" is not a jq variable name: use letters, digits and _, not starting with a digit (--arg code P1 binds $code).',
    );
  });

  it('needs --jq', () => {
    expect(() => checkJqArgsNeedJq(undefined, [{ name: 'code', value: 'P1' }])).toThrow(
      "--arg binds a variable of a --jq expression, and no --jq is given: add one, such as --jq '.[] | select(.code == $code)'.",
    );
    expect(() => checkJqArgsNeedJq('.', [{ name: 'code', value: 'P1' }])).not.toThrow();
    expect(() => checkJqArgsNeedJq(undefined, [])).not.toThrow();
  });

  it('leaves the help command reading the words after the pair', async () => {
    const result = await runCli(['--arg', 'x', 'y', 'help', 'orders', 'import']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: ordercli orders import /);
  });
});
