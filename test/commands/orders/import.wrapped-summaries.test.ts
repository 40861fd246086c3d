// Summaries and notes on stderr wrap at word boundaries to a narrow terminal; piped, each message
// stays on one line (for logs and grep).
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

function cli(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'import', ...args];
}

/** The lines of stderr as a terminal shows them: the progress bar's redraws and colours removed. */
function shownLines(stderr: string): string[] {
  return stderr
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r') + 1).replace(/\x1b\[[0-9;]*[A-Za-z]/g, ''))
    .filter((line) => line !== '');
}

describe('import summaries on a narrow terminal', () => {
  it('wraps the summary of an import within the width', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(5));
    const result = await runCli(cli(input), { tty: true, columns: 50 });
    expect(result.code, result.stderr).toBe(0);
    const lines = shownLines(result.stderr);
    const start = lines.findIndex((line) => line.startsWith('Import of'));
    expect(start).toBeGreaterThanOrEqual(0);
    for (const line of lines.slice(start)) {
      // A path or a URL longer than the line stays whole, alone on its line.
      if (!/^\s*\S+$/.test(line)) expect(line.length, line).toBeLessThanOrEqual(50);
    }
    expect(lines.slice(start).join(' ').replace(/\s+/g, ' ')).toMatch(/finished in [\d.]+ s, 5 orders sent/);
  });

  it('wraps the summary of a dry run, and keeps it on one line when piped', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(5));
    const tty = await runCli(cli(input, '--dry-run'), { tty: true, columns: 40 });
    expect(tty.code, tty.stderr).toBe(0);
    const lines = shownLines(tty.stderr).filter((line) => !/^\s*\S+$/.test(line));
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(40);
    const piped = await runCli(cli(input, '--dry-run'));
    expect(piped.stderr).toMatch(/^Dry run of \S+: 5 orders read, 5 valid, 0 invalid; nothing was sent\.\n$/);
  });
});
