// THE kill -9 test: the built binary imports 300 orders and is killed at a random moment, once or
// more; then a full run, then --retry-unknown. At the sandbox, no order may exist twice before
// --retry-unknown, and every order missing there must have been reported `unknown`.
// `node bench/kill9.mjs 20` runs it 20 rounds in a row (KILL9_ITERATIONS), a line per round.
// Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, tempDir, testEnv } from '../../support/cli.js';
import { createdCounts, orders, readLines, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';

const ITERATIONS = Number(process.env.KILL9_ITERATIONS ?? 3);
const ORDERS = 300;

const sandbox = useSandbox({ latencyMs: 20, validationDelayMs: 10 }, { resetEach: false });

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs the built binary with the order ledger of `config` (each run of a round shares it, as one
 * machine's runs do); with `killAfterMs`, SIGKILLs it then (if it is still running).
 */
function importRun(config: string, args: string[], killAfterMs?: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'orders', 'import', ...args], {
      env: testEnv({
        ORDERCLI_CONFIG_DIR: config,
        ORDERCLI_BASE_URL: sandbox.url,
        ORDERCLI_TOKEN: sandbox.tokens.partner,
      }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer =
      killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

describe('kill -9 during an import', () => {
  it(
    `never creates an order twice and never loses one unreported (${ITERATIONS} rounds)`,
    async () => {
      for (let round = 1; round <= ITERATIONS; round++) {
        sandbox.reset();
        const dir = tempDir('ordercli-kill9-');
        const input = writeNdjson(dir, 'orders.ndjson', orders(ORDERS, `K${round}`));
        const config = tempDir('ordercli-kill9-config-');
        const kills = 1 + Math.floor(Math.random() * 3);
        const moments: number[] = [];
        let killedMidway = 0;
        for (let k = 0; k < kills; k++) {
          const moment = 100 + Math.floor(Math.random() * 1100);
          moments.push(moment);
          if ((await importRun(config, [input, '--concurrency', '8'], moment)).signal === 'SIGKILL')
            killedMidway++;
        }
        const createdByKilled = sandbox.orders().length;
        const where = `round ${round}, killed at ${moments.join(', ')} ms`;

        const report = `${dir}/report.ndjson`;
        const full = await importRun(config, [input, '--concurrency', '8', '--report', report]);
        expect([0, 4], `${where}: ${full.stderr}`).toContain(full.code);
        const status = new Map(
          readLines(report).map((line) => [String(line.externalId), String(line.status)]),
        );
        const created = createdCounts(sandbox);
        for (const [id, count] of created) expect(count, `${where}: ${id} created ${count} times`).toBe(1);
        for (const [id, s] of status) {
          if (!created.has(id)) expect(s, `${where}: ${id} missing at the service`).toBe('unknown');
          if (s === 'created' || s === 'skipped') expect(created.get(id), `${where}: ${id}`).toBe(1);
        }
        expect(status.size).toBe(ORDERS);

        const retried = await importRun(config, [input, '--concurrency', '8', '--retry-unknown']);
        expect(retried.code, `${where}: ${retried.stderr}`).toBe(0);
        const after = createdCounts(sandbox);
        expect(after.size, where).toBe(ORDERS);
        let doubled = 0;
        for (const [id, count] of after) {
          // Only an order whose outcome was unknown can have been created by both runs.
          if (count > 1) expect(status.get(id), `${where}: ${id} created ${count} times`).toBe('unknown');
          if (count > 1) doubled++;
        }
        if (process.env.KILL9_ITERATIONS) {
          const unknown = [...status.values()].filter((s) => s === 'unknown').length;
          console.log(
            `ok ${where} (${killedMidway} mid-run): ${createdByKilled} created before the full run, ${unknown} unknown, ${doubled} of them had been created (re-sent by --retry-unknown)`,
          );
        }
      }
    },
    60_000 + ITERATIONS * 15_000,
  );
});
