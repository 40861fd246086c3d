// --jq and --arg through the built binary (npm run build first) against the sandbox, as users run
// them; and proof that a run without --jq never loads jq.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, ROOT, runBin, tempDir, testEnv } from '../support/cli.js';
import { fixture } from '../support/lists.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox();
const env = () => ({ ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.full });
const packagings = fixture<{ id: number; name: string; productCode: string; unit: string }[]>('packagings');

describe('bin/ordercli.js --jq', () => {
  it('prints the strings a list gives raw, one a line', async () => {
    const result = await runBin(['packagings', 'list', '--jq', '.[].name'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(packagings.map((p) => `${p.name}\n`).join(''));
    expect(result.stderr).toBe('');
  });

  it('implies --json: other values are compact JSON, one a line', async () => {
    const result = await runBin(['packagings', 'list', '--jq', '.[:2][] | {id, name}, .active'], {
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      JSON.stringify({ id: packagings[0]!.id, name: packagings[0]!.name }),
      'true',
      JSON.stringify({ id: packagings[1]!.id, name: packagings[1]!.name }),
      'true',
      '',
    ]);
    const whole = await runBin(['packagings', 'list', '--jq', '.'], { env: env() });
    expect(whole.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(whole.stdout)).toEqual(packagings);
  });

  it('binds each --arg <name> <value> as $name, wherever it stands on the line', async () => {
    const { productCode, unit } = packagings[0]!;
    const expected = packagings.filter((p) => p.productCode === productCode && p.unit === unit);
    const result = await runBin(
      [
        '--arg',
        'code',
        productCode,
        'packagings',
        'list',
        '--jq',
        '.[] | select(.productCode == $code and .unit == $unit) | .id',
        '--arg',
        'unit',
        unit,
      ],
      { env: env() },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(expected.map((p) => `${p.id}\n`).join(''));
  });

  it('refuses an expression that is not valid jq with exit 2 in one sentence, and an import sends nothing', async () => {
    const list = await runBin(['packagings', 'list', '--jq', '.[] | .name |'], { env: env() });
    expect(list.code).toBe(2);
    expect(list.stdout).toBe('');
    expect(list.stderr.split('\n')[0]).toBe(
      'error: The --jq expression is not valid jq: syntax error, unexpected end of file at line 1, column 13.',
    );
    expect(sandbox.requests).toHaveLength(0);

    const cwd = tempDir('ordercli-jq-');
    cpSync(join(ROOT, 'fixtures/orders/orders.csv'), join(cwd, 'orders.csv'));
    const args = ['orders', 'import', 'orders.csv', '--json', '--jq', '.counts | {created'];
    const refused = await runBin(args, { env: env(), cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error: The --jq expression is not valid jq: syntax error/);
    expect(sandbox.requests).toHaveLength(0);
    expect(sandbox.orders()).toHaveLength(0);

    // The same import with a valid expression sends, and prints what it asks for.
    const sent = await runBin([...args.slice(0, -1), '.counts | {created, skipped}'], { env: env(), cwd });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe('{"created":3,"skipped":0}\n');
  });

  it('is exit 2 for an --arg without its value or without --jq, before anything is sent', async () => {
    const short = await runBin(['packagings', 'list', '--jq', '$code', '--arg', 'code'], { env: env() });
    expect(short.code).toBe(2);
    expect(short.stderr).toBe(
      'error: --arg takes a name and a value, as two words: --arg <name> <value> (--arg code P1).\n',
    );
    const alone = await runBin(['packagings', 'list', '--arg', 'code', 'P1'], { env: env() });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/^error: --arg binds a variable of a --jq expression, and no --jq is given/);
    expect(sandbox.requests).toHaveLength(0);
  });

  it('is exit 1 when jq fails on the output: the command itself ran', async () => {
    const result = await runBin(['packagings', 'list', '--jq', '.[0].name | .first'], { env: env() });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `error: --jq: jq failed on the command's output: Cannot index string with string ("first") (the command itself ran).\n`,
    );
  });

  it('loads no jq without --jq: help and a --json command run where jq-wasm is missing', async () => {
    // A copy of the package whose node_modules has every package but jq-wasm: importing it fails.
    const copy = tempDir('ordercli-nojq-');
    for (const part of ['bin', 'dist']) cpSync(join(ROOT, part), join(copy, part), { recursive: true });
    writeFileSync(join(copy, 'package.json'), JSON.stringify({ type: 'module' }));
    mkdirSync(join(copy, 'node_modules'));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name !== 'jq-wasm') symlinkSync(join(ROOT, 'node_modules', name), join(copy, 'node_modules', name));
    }
    const run = (args: string[]) =>
      new Promise<CliResult>((resolve) => {
        const bin = join(copy, 'bin/ordercli.js');
        execFile(
          process.execPath,
          [bin, ...args],
          { cwd: copy, env: testEnv(env()) },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
        );
      });

    const help = await run(['--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('--jq <expression>');
    const json = await run(['packagings', 'list', '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(packagings);
    // The copy really lacks jq: --jq there fails on loading it.
    const jq = await run(['packagings', 'list', '--jq', '.[].name']);
    expect(jq.code).toBe(1);
    expect(jq.stderr).toMatch(/jq-wasm/);
  });
});
