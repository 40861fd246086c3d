// A token, webhook key or base URL holding a character no HTTP request can carry (U+200B pasted
// from a chat) is exit 2 at once, naming the setting, its source and the position, with nothing
// sent: before, an import stalled 30 s, exited 13 with no summary and reported orders that never
// left as unknown. Through the binary, against the sandbox.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runBin, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
const ZWSP = '\u200b';

describe('a credential with a character that cannot be sent', () => {
  it('orders import with such a token in ORDERCLI_TOKEN: exit 2 at once, nothing sent, the token not shown', async () => {
    const dir = tempDir();
    const token = `${sandbox.tokens.full.slice(0, 7)}${ZWSP}${sandbox.tokens.full.slice(7)}`;
    const result = await runBin(
      [
        '--base-url',
        sandbox.url,
        'orders',
        'import',
        join(ROOT, 'fixtures/orders/orders.csv'),
        '--journal',
        join(dir, 'j.ndjson'),
      ],
      { env: { ORDERCLI_TOKEN: token, ORDERCLI_CONFIG_DIR: join(dir, 'config') }, timeoutMs: 20_000 },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'error: The token from ORDERCLI_TOKEN holds a character that cannot be sent in an HTTP request: character 8 is U+200B',
    );
    expect(result.stderr).not.toContain(sandbox.tokens.full.slice(8));
    expect(sandbox.orders()).toHaveLength(0);
  });

  it('a base URL with an invisible character, and listen with such a --key: exit 2 naming them', async () => {
    const dir = tempDir();
    const env = { ORDERCLI_CONFIG_DIR: join(dir, 'config') };
    const got = await runBin(
      [
        '--base-url',
        `${sandbox.url}${ZWSP}`,
        '--token',
        sandbox.tokens.full,
        'get',
        'packaging_references',
        '401',
      ],
      { env, timeoutMs: 20_000 },
    );
    expect(got.code).toBe(2);
    expect(got.stderr).toContain('The base URL from --base-url holds a character');
    expect(got.stderr).toContain('U+200B, an invisible one');
    const listen = await runBin(['listen', '--port', '0', '--key', `whk_abc\u00a0def`], {
      env,
      timeoutMs: 20_000,
    });
    expect(listen.code).toBe(2);
    expect(listen.stderr).toContain('The webhook key from --key holds a character');
    expect(listen.stderr).toContain('character 8 is U+00A0');
    expect(listen.stderr).not.toContain('Ready:');
  });
});
