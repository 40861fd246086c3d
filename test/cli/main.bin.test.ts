// The package as installed: the built bin/ordercli.js in a child process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runBin } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

const sandbox = useSandbox({}, { resetEach: false });

describe('bin/ordercli.js', () => {
  it('prints the version of package.json', async () => {
    const result = await runBin(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it('prints help listing the command groups, with examples and exit codes', async () => {
    const result = await runBin(['--help']);
    expect(result.code).toBe(0);
    for (const word of ['orders', 'get', 'api', 'sandbox', 'config', 'Exit codes', 'Examples']) {
      expect(result.stdout).toContain(word);
    }
  });

  it('fetches an entity from the sandbox and exits by itself', async () => {
    const result = await runBin(['get', 'packaging_references', '401'], {
      env: { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 401 });
  });

  it('reports a user error in one sentence, without a stack trace, exit 2', async () => {
    const result = await runBin(['api', 'FETCH', '/api/v1/orders'], {
      env: { ORDERCLI_BASE_URL: sandbox.url },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: Unknown method "FETCH": use one of GET, POST, PUT, PATCH, DELETE, HEAD.\n',
    );
  });

  it('exits 2 with usage help for a missing argument', async () => {
    const result = await runBin(['get', 'orders']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("missing required argument 'id'");
  });
});
