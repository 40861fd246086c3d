/**
 * Signals at any moment, through the binary: SIGHUP (a closed terminal) and SIGQUIT (Ctrl-\) stop
 * an import as cleanly as SIGTERM (exit 130, its summary, a ledger whose re-run sends nothing
 * twice); a signal while the CLI is still loading ends it with 130, not by the signal's default.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, listensForSignals, runBin, tempDir, testEnv } from '../support/cli.js';
import { createdCounts, orders, writeNdjson } from '../support/orders.js';
import { requireTool } from '../support/requirements.js';
import { useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

const sandbox = useSandbox();
/** Signalled as soon as it listens, which /proc tells: Linux only. */
const ON_LINUX = requireTool('Linux', {
  what: 'SIGTERM while the CLI loads (test/release/signals.test.ts)',
  missing: process.platform === 'linux' ? undefined : `it reads /proc, and this is ${process.platform}`,
  how: 'run the tests on Linux',
});

/** Runs the binary; `signalWhen` says when to send `signal` (polled, never after a fixed delay). */
async function runUntilSignalled(
  args: string[],
  env: Record<string, string>,
  signal: NodeJS.Signals,
  signalWhen: (pid: number) => boolean,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: testEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  // Looked at every 2 ms: a signal while the CLI loads must come within its first moments.
  await waitFor(
    () => child.exitCode !== null || (child.pid !== undefined && signalWhen(child.pid)),
    30_000,
    `the moment to send ${signal}`,
    2,
  );
  child.kill(signal);
  return { code: await closed, stderr };
}

describe('signals', () => {
  it.each(['SIGHUP', 'SIGQUIT'] as const)(
    '%s during an import: exit 130 with the summary; the re-run sends nothing twice',
    async (signal) => {
      const dir = tempDir();
      const input = writeNdjson(dir, 'orders.ndjson', orders(40));
      sandbox.setFaults({ latencyMs: 100 });
      const env = { ORDERCLI_CONFIG_DIR: join(dir, 'config') };
      const api = ['--base-url', sandbox.url, '--token', sandbox.tokens.full];
      const stopped = await runUntilSignalled(
        [...api, 'orders', 'import', input, '--concurrency', '2'],
        env,
        signal,
        () => sandbox.orders().length > 0,
      );
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toMatch(
        /Interrupted: \d+ orders created, \d+ not sent; the order ledger holds every outcome: run the same command again to send the rest\./,
      );
      expect(createdCounts(sandbox).size).toBeLessThan(40);
      sandbox.setFaults({ latencyMs: 0 });
      const rerun = await runBin([...api, 'orders', 'import', input], { env });
      expect(rerun.code).toBe(0);
      const created = createdCounts(sandbox);
      expect(created.size).toBe(40);
      expect([...created.values()].every((count) => count === 1)).toBe(true);
    },
  );

  it.skipIf(!ON_LINUX)(
    'SIGTERM as soon as the binary listens (while the CLI loads): exit 130, not 143',
    async () => {
      const dir = tempDir();
      const result = await runUntilSignalled(
        ['--base-url', sandbox.url, 'refs', 'packagings', 'list'],
        { ORDERCLI_CONFIG_DIR: join(dir, 'config') },
        'SIGTERM',
        listensForSignals,
      );
      expect(result.code).toBe(130);
    },
  );
});
