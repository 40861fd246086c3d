// `orders import` of a big input through the built binary: progress while the input is read and
// validated (before anything is sent), Ctrl-C in that phase and while sending, and the same
// progress redrawn in place on a terminal. The progress lines come every 100 ms here
// (ORDERCLI_PROGRESS_INTERVAL, for tests only) instead of every 5 s.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli, tempDir, testEnv } from '../../support/cli.js';
import { csvOf, ledgerHistory, postsTo } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { screenLines } from '../../support/terminal.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

/** Orders (one row each) in the big input: a few seconds of reading, written in well under one. */
const ROWS = 200_000;
/** The input's folder, the working directory of every run: the input is named `big.csv`. */
let dir: string;
const input = 'big.csv';
beforeAll(() => {
  dir = tempDir();
  writeFileSync(join(dir, input), csvOf(ROWS));
});

const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

const READING_LINE = /^import: reading and validating: ([\d,]+) orders so far, 0 invalid · [\d,]+\/s$/;

interface Running {
  child: ChildProcess;
  stderr(): string;
  /** The exit code (or 128 for a signal), once the process has ended. */
  closed: Promise<number>;
}

/** Starts the binary with stderr a pipe (not a terminal), its progress lines every 100 ms. */
function start(args: string[], config: string): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: dir,
    env: testEnv({ ORDERCLI_CONFIG_DIR: config, ORDERCLI_PROGRESS_INTERVAL: '100ms' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
  return { child, stderr: () => stderr, closed };
}

/** Resolves with the exit code, or fails after `ms` (a hang guard, not a measurement). */
function exitWithin(run: Running, ms: number): Promise<number> {
  return Promise.race([
    run.closed,
    new Promise<number>((_, reject) => {
      const timer = setTimeout(() => {
        run.child.kill('SIGKILL');
        reject(new Error(`still running ${ms} ms after Ctrl-C:\n${run.stderr().slice(-2000)}`));
      }, ms);
      void run.closed.then(() => clearTimeout(timer));
    }),
  ]);
}

/** Ctrl-C once `ready` holds (`what`, for a hang): the run ends with 130 within 10 s. */
async function interruptWhen(run: Running, ready: () => boolean, what: string): Promise<void> {
  await waitFor(
    () => {
      if (run.child.exitCode !== null) throw new Error(`ended before ${what}:\n${run.stderr()}`);
      return ready();
    },
    30_000,
    what,
  );
  run.child.kill('SIGINT');
  expect(await exitWithin(run, 10_000), run.stderr()).toBe(130);
}

/** Some orders sent, most of the input still to go. */
const someSent = (): boolean => postsTo(sandbox) >= 20;

function cli(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'import', ...args];
}

describe('orders import of a big input: progress while reading and validating', () => {
  it('prints reading lines, growing, before the dry run says what it read', async () => {
    const run = start(cli(input, '--dry-run'), tempDir('ordercli-config-'));
    expect(await run.closed, run.stderr()).toBe(0);
    const lines = run.stderr().split('\n');
    const end = lines.findIndex((line) => line.startsWith('Dry run of '));
    expect(lines[end]).toContain(`${ROWS.toLocaleString('en-US')} orders read`);
    const reading = lines.slice(0, end);
    expect(reading.length, run.stderr()).toBeGreaterThan(0);
    // Plain lines only (no terminal codes), each a count that never goes back.
    const counts = reading.map((line) => {
      const match = READING_LINE.exec(line);
      expect(match, line).not.toBeNull();
      return Number(match![1]!.replace(/,/g, ''));
    });
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBeLessThanOrEqual(ROWS);
    expect(run.stderr()).not.toContain('\x1b');
  }, 60_000);

  it('Ctrl-C while reading ends the import with 130 and nothing sent', async () => {
    const config = tempDir('ordercli-config-');
    const run = start(cli(input), config);
    const reading = () =>
      run
        .stderr()
        .split('\n')
        .some((line) => READING_LINE.test(line));
    await interruptWhen(run, reading, 'the first reading line');
    expect(run.stderr()).toMatch(/error: Interrupted\.\n$/);
    expect(postsTo(sandbox)).toBe(0);
    expect((await ledgerHistory(join(config, 'ledger'), sandbox.url)).size).toBe(0);
  }, 60_000);

  it('Ctrl-C while sending stops at once: the progress never counts the orders left unsent', async () => {
    const run = start(cli(input, '--concurrency', '2'), tempDir('ordercli-config-'));
    await interruptWhen(run, someSent, 'the first orders sent');
    const sent = postsTo(sandbox);
    expect(sent).toBeLessThan(ROWS);
    const summaryRow = (row: RegExp): number => {
      const match = row.exec(run.stderr());
      expect(match, run.stderr()).not.toBeNull();
      return Number(match![1]!.replace(/,/g, ''));
    };
    const created = summaryRow(/^ {2}created +([\d,]+)$/m);
    expect(created).toBe(sent);
    expect(created + summaryRow(/^ {2}not sent +([\d,]+) /m)).toBe(ROWS);
    // Every sending line counts orders with an outcome, never those the interrupt left unsent.
    const done = [...run.stderr().matchAll(/^import: ([\d,]+)\/[\d,]+ orders/gm)].map((m) =>
      Number(m[1]!.replace(/,/g, '')),
    );
    for (const count of done) expect(count).toBeLessThanOrEqual(sent);
  }, 60_000);

  it('Ctrl-C with --report: the report lists each order read, then the rest in one line, and the run ends within its 2 s', async () => {
    const report = join(tempDir('ordercli-report-'), 'report.csv');
    const run = start(cli(input, '--concurrency', '2', '--report', report), tempDir('ordercli-config-'));
    await interruptWhen(run, someSent, 'the first orders sent');
    const rows = readFileSync(report, 'utf8').trimEnd().split('\r\n').slice(1);
    const last =
      /^,not-sent,,,,"and ([\d,]+) more orders from line (\d+) on: not read after the interrupt/.exec(
        rows.at(-1)!,
      );
    // Each order is in the report: one row each, or counted in the last row (a big input: its rest is
    // not read, so that Ctrl-C ends within 2 s).
    const listed = last ? rows.length - 1 : rows.length;
    expect(listed + (last ? Number(last[1]!.replace(/,/g, '')) : 0)).toBe(ROWS);
    if (last) expect(Number(last[2])).toBe(listed + 2);
  }, 60_000);
});

describe('orders import of a big input on a terminal', () => {
  it('redraws one reading line in place, and erases it before the result', async () => {
    const result = await runCli(cli(input, '--dry-run'), {
      tty: true,
      columns: 100,
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/\r\x1b\[2KReading and validating: [\d,]+ orders · [\d,]+\/s/);
    expect(screenLines(result.stderr, 100)).toEqual([
      `Dry run of ${input}: 200,000 orders read, 200,000 valid, 0 invalid; nothing was sent.`,
    ]);
  }, 60_000);
});
