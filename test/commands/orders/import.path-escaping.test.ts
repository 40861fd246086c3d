// An input path holding a line break or an escape sequence is named escaped in every message and
// summary of an import (dry run, real run, invalid input, missing file): never raw on the
// terminal. Through the binary, against the sandbox.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runBin, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
const NAME = 'a\nb\u001b[31mred.csv';
const SHOWN = 'a\\nb\\u001b[31mred.csv';

function api(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.full, ...args];
}

function expectEscaped(stderr: string): void {
  expect(stderr).not.toContain('\u001b');
  expect(stderr).not.toContain('a\nb');
  expect(stderr).toContain(SHOWN);
}

describe('an input path with control characters', () => {
  it('is escaped in the dry run, the import summary and its history line', async () => {
    const dir = tempDir();
    copyFileSync(join(ROOT, 'fixtures/orders/orders.csv'), join(dir, NAME));
    const env = { ORDERCLI_CONFIG_DIR: join(dir, 'config') };
    const dry = await runBin(api('orders', 'import', NAME, '--dry-run'), { cwd: dir, env });
    expect(dry.code).toBe(0);
    expectEscaped(dry.stderr);
    const real = await runBin(api('orders', 'import', NAME), { cwd: dir, env });
    expect(real.code).toBe(0);
    expectEscaped(real.stderr);
    expect(real.stderr).toContain(`Import of ${SHOWN} → `);
    expect(real.stderr).toContain(`history  ordercli orders journal ${SHOWN}\n`);
  });

  it('is escaped in the invalid-input error and when the file is missing', async () => {
    const dir = tempDir();
    copyFileSync(join(ROOT, 'fixtures/orders/orders-with-errors.csv'), join(dir, NAME));
    const env = { ORDERCLI_CONFIG_DIR: join(dir, 'config') };
    const invalid = await runBin(api('orders', 'import', NAME), { cwd: dir, env });
    expect(invalid.code).toBe(2);
    expectEscaped(invalid.stderr);
    const missing = await runBin(api('orders', 'import', `${NAME}.missing`), { cwd: dir, env });
    expect(missing.code).toBe(2);
    expectEscaped(missing.stderr);
    expect(sandbox.orders()).toHaveLength(0);
  });
});
