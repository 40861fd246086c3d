import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { sandboxOptions } from '../../../src/commands/sandbox/sandbox.js';
import { createTestIO } from '../../../src/io/memory.js';
import { runCli, testEnv } from '../../support/cli.js';
import { waitFor } from '../../support/wait.js';

/** Starts `ordercli sandbox` in-process and resolves with its announced URL and tokens. */
async function startCommand(args: string[]) {
  const io = createTestIO();
  const controller = new AbortController();
  const done = main(['sandbox', '--port', '0', '--quiet', ...args], {
    io,
    env: testEnv(),
    signal: controller.signal,
  });
  await waitFor(() => io.stdoutText().includes('\n'), 10_000, 'the first line of the sandbox');
  return { io, controller, done };
}

describe('ordercli sandbox', () => {
  it('prints its base URL and both tokens, serves the interface, and stops on Ctrl-C with exit 130', async () => {
    const { io, controller, done } = await startCommand(['--json']);
    const info = JSON.parse(io.stdoutText().split('\n')[0] ?? '') as {
      url: string;
      tokens: { full: string; partner: string };
    };
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const partner = await runCli([
      '--base-url',
      info.url,
      '--token',
      info.tokens.partner,
      'get',
      'packaging_references',
      '401',
    ]);
    expect(partner.code, partner.stderr).toBe(0);
    const full = await runCli([
      '--base-url',
      info.url,
      '--token',
      info.tokens.full,
      'get',
      'contacts',
      '101',
    ]);
    expect(full.code, full.stderr).toBe(0);
    controller.abort();
    expect(await done).toBe(130);
    const after = await runCli([
      '--base-url',
      info.url,
      '--retries',
      '0',
      'get',
      'packaging_references',
      '401',
    ]);
    expect(after.code).toBe(1);
  });

  it('says how to pick another port when its port is taken (exit 2)', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = String((blocker.address() as AddressInfo).port);
    try {
      const result = await runCli(['sandbox', '--port', port, '--quiet']);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('rejects fault rates out of range before starting', async () => {
    const result = await runCli(['sandbox', '--fail-rate', '2']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--fail-rate must be a number from 0 to 1');
  });
});

describe('ordercli sandbox banner', () => {
  it('wraps to a narrow terminal, its commands continued with \\ so that they still run when copied', async () => {
    const io = createTestIO({ tty: true, columns: 60 });
    const controller = new AbortController();
    const done = main(['sandbox', '--port', '0', '--quiet'], {
      io,
      env: testEnv(),
      signal: controller.signal,
    });
    await waitFor(() => io.stdoutText().includes('Press Ctrl-C'), 10_000, 'the banner of the sandbox');
    controller.abort();
    expect(await done).toBe(130);
    const text = io.stdoutText();
    const lines = text.trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
    const url = /Sandbox listening on (\S+)/.exec(text)?.[1];
    expect(text.replace(/ \\\n\s+/g, ' ')).toContain(
      `  ordercli --base-url ${url} --token sandbox-partner-token refs packagings list\n`,
    );
    expect(text.replace(/\s+/g, ' ')).toContain('sandbox-full-token (CRM and catalog access)');
  });
});

describe('ordercli sandbox validation and delivery flags', () => {
  it('rejects a validation fail rate outside 0..1 and a retry count that is not a whole number', async () => {
    const rate = await runCli(['sandbox', '--validation-fail-rate', '1.5']);
    expect(rate.code).toBe(2);
    expect(rate.stderr).toContain('--validation-fail-rate must be a number from 0 to 1');
    for (const value of ['-1', '2.5', 'many']) {
      const retries = await runCli(['sandbox', '--delivery-retries', value]);
      expect(retries.code, value).toBe(2);
      expect(retries.stderr, value).toMatch(/--delivery-retries must be a (whole )?number/);
    }
  });

  it('passes them on to the sandbox', () => {
    expect(
      sandboxOptions(
        { port: '0', host: '127.0.0.1', validationFailRate: '0.25', deliveryRetries: '0', quiet: true },
        {},
      ),
    ).toMatchObject({ validationFailRate: 0.25, deliveryRetries: 0, quiet: true });
    expect(sandboxOptions({ port: '0', host: '127.0.0.1' }, {})).toMatchObject({
      validationFailRate: undefined,
      deliveryRetries: undefined,
      quiet: false,
    });
  });
});
