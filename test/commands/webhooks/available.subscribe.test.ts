/** `webhooks available` and `webhooks subscribe` against the sandbox; the key is never printed. */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { eventRows } from '../../../src/commands/webhooks/available.js';
import { runCli, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
let env: Record<string, string>;
beforeEach(() => {
  env = {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.full,
    ORDERCLI_CONFIG_DIR: tempDir(),
  };
});

describe('webhooks available', () => {
  it('a table on a terminal, tab-separated rows when piped, the records with --json', async () => {
    const tty = await runCli(['webhooks', 'available'], { env, tty: true, columns: 100 });
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(/EVENT.*DESCRIPTION/);
    expect(tty.stdout).toContain('sales_order_validated');
    const piped = await runCli(['webhooks', 'available'], { env });
    expect(piped.stdout.split('\n')).toContain('sales_order_validated\tAn order has been validated.');
    const json = await runCli(['--json', 'webhooks', 'available'], { env });
    expect(JSON.parse(json.stdout)).toContainEqual({
      event: 'sales_order_validated',
      description: 'An order has been validated.',
    });
  });

  it('takes the list flags of every list: --columns, --csv, and refuses --json with --csv', async () => {
    const names = await runCli(['webhooks', 'available', '--columns', 'event'], {
      env: { ...env, ORDERCLI_TOKEN: sandbox.tokens.partner },
    });
    expect(names).toMatchObject({ code: 0, stdout: 'sales_order_validated\n' });
    const csv = await runCli(['webhooks', 'available', '--csv'], { env });
    expect(csv.stdout.split('\r\n')[0]).toBe('EVENT,DESCRIPTION');
    const both = await runCli(['--json', 'webhooks', 'available', '--csv'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Choose one of --json and --csv.');
    expect(sandbox.requests.filter((r) => r.path.endsWith('/webhooks/available'))).toHaveLength(2);
  });

  it('lists only what the partner token may subscribe to', async () => {
    const partner = await runCli(['webhooks', 'available'], {
      env: { ...env, ORDERCLI_TOKEN: sandbox.tokens.partner },
    });
    expect(partner.stdout.trim()).toBe('sales_order_validated\tAn order has been validated.');
  });

  it('renders any reasonable shape and gives up (JSON) on others', () => {
    expect(eventRows(['a_b', 'c_d'])).toEqual([
      { event: 'a_b', description: '' },
      { event: 'c_d', description: '' },
    ]);
    expect(eventRows({ events: [{ name: 'a_b', label: 'A' }] })).toEqual([
      { event: 'a_b', description: 'A' },
    ]);
    expect(eventRows({ data: { items: [] }, list: [{ event: 'x' }] })).toEqual([
      { event: 'x', description: '' },
    ]);
    expect(eventRows({ 'hydra:member': ['a_b'], totalItems: 1 })).toEqual([
      { event: 'a_b', description: '' },
    ]);
    expect(eventRows({ a_b: 'A b', c_d: 'C d' })).toEqual([
      { event: 'a_b', description: 'A b' },
      { event: 'c_d', description: 'C d' },
    ]);
    expect(eventRows([{ nothing: 1 }])).toBeUndefined();
    expect(eventRows(42)).toBeUndefined();
  });
});

describe('webhooks subscribe', () => {
  const url = 'http://127.0.0.1:8787/hooks';

  it('prints the answer without the key and says how to use it', async () => {
    const result = await runCli(['webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', url], {
      env,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^Subscribed http:\/\/127\.0\.0\.1:8787\/hooks to sales_order_validated\.\n {2}id +\d+\n/,
    );
    expect(result.stderr).toContain('run this command again with --save-key');
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });

  it('--json shows the answer with the key redacted', async () => {
    const result = await runCli(
      ['--json', 'webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', url],
      { env },
    );
    expect(JSON.parse(result.stdout)).toMatchObject({
      event: 'sales_order_validated',
      url,
      key: '[redacted]',
    });
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });

  it('--key-file writes the key (mode 0600) for the application; --save-key puts it in the profile', async () => {
    const dir = tempDir();
    const result = await runCli(
      [
        'webhooks',
        'subscribe',
        '--event',
        'sales_order_validated',
        '--url',
        url,
        '--key-file',
        'key.txt',
        '--save-key',
      ],
      { env, cwd: dir },
    );
    expect(result.code).toBe(0);
    expect(readFileSync(join(dir, 'key.txt'), 'utf8')).toBe(sandbox.webhookKey);
    expect(statSync(join(dir, 'key.txt')).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(join(env.ORDERCLI_CONFIG_DIR!, 'config.json'), 'utf8'));
    expect(config.profiles.default['webhook-key']).toBe(sandbox.webhookKey);
    const shown = await runCli(['config', 'get', 'webhook-key'], { env });
    expect(shown.stdout).toBe('******** (set)\n');
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });

  it('refuses an invalid subscription before sending (exit 2)', async () => {
    const before = sandbox.requests.length;
    const result = await runCli(
      ['webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', 'ftp://x'],
      { env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('The webhook subscription is invalid; nothing was sent.');
    expect(result.stderr).toContain('subscription: --url: must be an http:// or https:// URL');
    expect(sandbox.requests.length).toBe(before);
  });

  it("an event the user may not subscribe to is the service's refusal (exit 1) with its details", async () => {
    const result = await runCli(['webhooks', 'subscribe', '--event', 'contact_updated', '--url', url], {
      env: { ...env, ORDERCLI_TOKEN: sandbox.tokens.partner },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not available to this user');
  });
});
