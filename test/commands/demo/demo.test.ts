import { request } from 'node:http';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { runBin, runCli } from '../../support/cli.js';

function refused(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET' }, (res) => {
      res.resume();
      resolve(false);
    });
    req.on('error', () => resolve(true));
    req.end();
  });
}

describe('ordercli demo', () => {
  it('runs the whole first run on an embedded sandbox and leaves nothing running', async () => {
    const result = await runCli(['demo']);
    // The receiver's own lines ([listen] …) are on stdout: both say why a run failed.
    expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    expect(result.stdout).toContain('ordercli orders import');
    expect(result.stdout).toMatch(/✓ (\d+) of \1 orders validated; every notification carried the right key/);
    expect(result.stdout).toContain('Crème fraîche épaisse 30 % MG');
    expect(result.stderr).toContain('created  3');
    const url = /Sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(result.stdout)?.[1];
    const listenUrl = /Ready: listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(result.stdout)?.[1];
    expect(url).toBeDefined();
    expect(await refused(`${url}/api/v1/shipping_modes`)).toBe(true);
    expect(await refused(`${listenUrl}/`)).toBe(true);
    // The webhook key is never shown, not even a sandbox one.
    expect(result.stdout + result.stderr).not.toMatch(/whk_demo_[0-9a-f]{32}/);
  });

  it('its import summary names no report, which would be in the folder removed when it ends', async () => {
    const result = await runCli(['demo']);
    expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    // The summary used to name report.csv in the demo's temporary folder, already deleted when read.
    expect(result.stdout + result.stderr).not.toMatch(/ordercli-demo-\w+[\\/]report/);
    expect(result.stdout + result.stderr).not.toMatch(/^ *report +\S/m);
  });

  it('on an 80-column terminal, wraps every line at word boundaries: no line wider, no word cut', async () => {
    const result = await runCli(['demo'], { tty: true, columns: 80 });
    // The receiver's own lines ([listen] …) are on stdout: both say why a run failed.
    expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    const lines = `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
    const wide = lines.filter((line) => stringWidth(line) > 80);
    expect(wide).toEqual([]);
    // Phrases that used to be cut inside a word by the terminal, read back whole once the
    // wrapping (a line end, then the indentation of the continuation line) is undone.
    const text = lines.join('\n').replace(/( \\)?\n( {2}\[listen\])? +/g, ' ');
    for (const phrase of [
      'nothing leaves this machine',
      'seeded with contacts, packagings and reference lists',
      'notifies the receiver, which checks X-WEBHOOK-KEY',
      'ORDERCLI_TOKEN=sandbox-partner-token',
      'http://localhost:3000/webhooks',
    ])
      expect(text).toContain(phrase);
    // A command too long for one line continues with \, so that it still runs when pasted.
    expect(result.stdout).toMatch(
      /\$ ordercli listen --key "\$ORDERCLI_WEBHOOK_KEY" --forward-to \\\n +http:/,
    );
  });

  it('works as the installed binary in a pipe and exits by itself', async () => {
    const result = await runBin(['demo'], { timeoutMs: 60_000 });
    // The receiver's own lines ([listen] …) are on stdout: both say why a run failed.
    expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    expect(result.stdout).toContain('Now against your instance');
  });

  it('started through npx, shows every command as npx ordercli, as it can be typed in a clone', async () => {
    const result = await runCli(['demo'], { env: { npm_command: 'exec' } });
    // The receiver's own lines ([listen] …) are on stdout: both say why a run failed.
    expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    const shown = result.stdout
      .split('\n')
      .filter((line) => line.trimStart().startsWith('$ '))
      .map((line) => line.trimStart().slice(2));
    expect(shown.length).toBeGreaterThan(8);
    for (const line of shown) expect(line, line).toMatch(/^(npx ordercli |export )/);
    expect(result.stdout).toContain('(npx ordercli refs browse');
  });

  it('refuses a missing orders file with exit 2 before starting anything', async () => {
    const result = await runCli(['demo', '--file', 'no-such-orders.csv']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no-such-orders.csv does not exist');
  });
});
