// The journal's lock and its refusals, through the built binary against the sandbox: a stale lock
// raced by four imports, an import from another PID namespace, owners provably dead, another base
// URL, journals that cannot be written. Needs `npm run build` first.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../../src/sandbox/server.js';
import { BIN, listensForSignals, runBin, tempDir, testEnv } from '../../support/cli.js';
import { createdCounts, orders, writeNdjson } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ latencyMs: 20, validationDelayMs: 10 });

const IS_ROOT = process.getuid?.() === 0;
/**
 * Each round is a real race, not a hope of one: all the contenders are waiting for their input
 * when it is sent (see the round), so they reach the lock together every time. Three rounds in
 * `npm test` (24 imports at a stale lock); LOCK_RACE_ROUNDS=50 runs a longer one.
 */
const RACE_ROUNDS = Number(process.env.LOCK_RACE_ROUNDS ?? 3);
/** Imports started together per round (the reported breakage: four; more make the race likelier). */
const CONTENDERS = 8;
/** `unshare -p -f --mount-proc` needs privileges (or user namespaces) that CI may not grant. */
const UNSHARE_PID = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']).status === 0;
/** A private mount namespace (root) for a read-only or full file system. */
const UNSHARE_MOUNT = IS_ROOT && spawnSync('unshare', ['-m', 'true']).status === 0;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

interface Running {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<Exit>;
}

function importEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return testEnv({ ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner, ...extra });
}

/** Starts `command args` (the binary unless told otherwise) and collects its stderr. */
function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { command?: string[]; stdin?: 'pipe' | 'ignore' } = {},
): Running {
  const [command, ...prefix] = options.command ?? [process.execPath];
  const child = spawn(command!, [...prefix, ...(options.command ? [process.execPath] : []), BIN, ...args], {
    env,
    stdio: [options.stdin ?? 'ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  return { child, stderr: () => stderr, exited };
}

/** The import journal's lock holds an owner record (this version) or a PID file (older ones). */
function lockHeld(journal: string): boolean {
  return existsSync(join(`${journal}.lock`, 'owner-1.json')) || existsSync(`${journal}.lock`);
}

/** Leaves the lock of `journal` as a killed import leaves it: its owner killed -9 while sending. */
async function lockOfKilledImport(input: string, journal: string): Promise<void> {
  sandbox.setFaults({ latencyMs: 200 });
  const run = start(['orders', 'import', input, '--journal', journal, '--concurrency', '1'], importEnv());
  await waitFor(() => sandbox.requests.some((r) => r.method === 'POST'), 20_000, 'the first order sent');
  run.child.kill('SIGKILL');
  await run.exited;
  sandbox.setFaults({ latencyMs: 20 });
  expect(lockHeld(journal), 'the killed import left its lock').toBe(true);
}

function posts(): number {
  return sandbox.requests.filter((r) => r.method === 'POST').length;
}

describe('the import journal lock', () => {
  it(`${CONTENDERS} imports started together after a stale lock: one imports, each order is created once (${RACE_ROUNDS} rounds)`, async () => {
    const dir = tempDir('ordercli-lock-race-');
    // Enough orders that the winner is still sending when the others reach the lock.
    const input = writeNdjson(dir, 'orders.ndjson', orders(200, 'RACE'));
    const journal = join(dir, 'journal.ndjson');
    await lockOfKilledImport(input, journal);
    // The journal and lock the killed import left, put back before each round.
    const left = join(dir, 'left');
    cpSync(journal, join(left, 'journal'));
    cpSync(`${journal}.lock`, join(left, 'lock'), { recursive: true });
    const text = readFileSync(input);

    for (let round = 1; round <= RACE_ROUNDS; round++) {
      sandbox.reset();
      rmSync(`${journal}.lock`, { recursive: true, force: true });
      cpSync(join(left, 'journal'), journal);
      cpSync(join(left, 'lock'), `${journal}.lock`, { recursive: true });

      // Reading standard input holds each import until the input arrives, so that all of them reach
      // the lock at the same moment. An import copies its standard input into a folder of its
      // TMPDIR before anything else reads it: once the round's TMPDIR holds one per import, all of
      // them are waiting for their input.
      const tmp = join(dir, `tmp-${round}`);
      mkdirSync(tmp);
      const runs = Array.from({ length: CONTENDERS }, () =>
        start(
          ['orders', 'import', '-', '--format', 'ndjson', '--journal', journal],
          importEnv({ TMPDIR: tmp }),
          {
            stdin: 'pipe',
          },
        ),
      );
      await waitFor(
        () => {
          const ended = runs.find((run) => run.child.exitCode !== null);
          if (ended) throw new Error(`an import ended before its input was sent:\n${ended.stderr()}`);
          return readdirSync(tmp).filter((name) => name.startsWith('ordercli-stdin-')).length === CONTENDERS;
        },
        60_000,
        `the ${CONTENDERS} imports reading their input`,
      );
      for (const run of runs) run.child.stdin!.end(text);
      const exits = await Promise.all(runs.map((run) => run.exited));

      const where = `round ${round}: ${exits.map((e) => `${e.code} ${e.stderr.split('\n').at(-2)}`).join(' | ')}`;
      for (const [id, count] of createdCounts(sandbox)) expect(count, `${where}: ${id}`).toBe(1);
      // One imports (exit 4: the killed run's orders in flight are in doubt); the others are refused
      // (exit 2), or find everything done if they come after it (exit 4).
      for (const exit of exits) expect([2, 4], where).toContain(exit.code);
      expect(exits.filter((e) => e.code === 4).length, where).toBeGreaterThanOrEqual(1);
      for (const exit of exits.filter((e) => e.code === 2)) {
        expect(exit.stderr).toMatch(/is in use by another ordercli \(process \d+/);
      }
      expect(existsSync(`${journal}.lock`), where).toBe(false);
    }
  }, 240_000);

  it.skipIf(!UNSHARE_PID)(
    `an import from another PID namespace waits for the lock, then gives up with exit 2${UNSHARE_PID ? '' : ' (skipped: unshare -p -f --mount-proc is not permitted here)'}`,
    async () => {
      const dir = tempDir('ordercli-lock-ns-');
      const input = writeNdjson(dir, 'orders.ndjson', orders(60, 'NS'));
      const journal = join(dir, 'journal.ndjson');
      sandbox.setFaults({ latencyMs: 200 });
      const first = start(
        ['orders', 'import', input, '--journal', journal, '--concurrency', '1'],
        importEnv(),
      );
      await waitFor(
        () => sandbox.requests.some((r) => r.method === 'POST'),
        20_000,
        'the first import sending',
      );

      const second = start(
        ['orders', 'import', input, '--journal', journal],
        importEnv({ ORDERCLI_LOCK_WAIT: '1' }),
        { command: ['unshare', '-p', '-f', '--mount-proc'] },
      );
      const exit = await second.exited;
      expect(exit.code, exit.stderr).toBe(2);
      expect(exit.stderr).toContain('Waiting for the lock');
      expect(exit.stderr).toContain('in another PID namespace');
      expect(exit.stderr).toContain('ORDERCLI_LOCK_WAIT');

      // The first import still holds its lock; SIGTERM stops it cleanly.
      expect(first.child.exitCode).toBeNull();
      first.child.kill('SIGTERM');
      const stopped = await first.exited;
      expect(stopped.code, stopped.stderr).toBe(130);
      sandbox.setFaults({ latencyMs: 20 });
      for (const [id, count] of createdCounts(sandbox)) expect(count, id).toBe(1);
      expect(existsSync(`${journal}.lock`)).toBe(false);
    },
    60_000,
  );

  it('takes over at once a lock whose owner is provably dead: killed, or its PID reused by another process', async () => {
    const dir = tempDir('ordercli-lock-dead-');
    const input = writeNdjson(dir, 'orders.ndjson', orders(20, 'DEAD'));
    const journal = join(dir, 'journal.ndjson');
    await lockOfKilledImport(input, journal);
    // No waiting allowed: only a lock whose owner is provably dead can be taken.
    const env = importEnv({ ORDERCLI_LOCK_WAIT: '0' });
    const afterKill = await runBin(['orders', 'import', input, '--journal', journal], { env });
    expect([0, 4], afterKill.stderr).toContain(afterKill.code);
    expect(afterKill.stderr).not.toContain('Waiting');

    // A live process whose start time is not the owner's: the owner's PID was reused.
    const sleeper = spawn('sleep', ['30']);
    try {
      mkdirSync(`${journal}.lock`);
      writeFileSync(
        join(`${journal}.lock`, 'owner-1.json'),
        JSON.stringify({
          ...thisHost(),
          pid: sleeper.pid,
          startTime: '1',
          token: 'reused',
          staleMs: 30_000,
          since: new Date().toISOString(),
        }),
      );
      const afterReuse = await runBin(['orders', 'import', input, '--journal', journal], { env });
      expect(afterReuse.code, afterReuse.stderr).toBe(afterKill.code);
      expect(afterReuse.stderr).toContain('already created, or being sent by another ordercli');
    } finally {
      sleeper.kill();
    }
    expect(existsSync(`${journal}.lock`)).toBe(false);
    for (const [id, count] of createdCounts(sandbox)) expect(count, id).toBe(1);
  }, 60_000);

  it('waits for an owner it cannot check until the bound, and takes over its record once stale', async () => {
    const dir = tempDir('ordercli-lock-foreign-');
    const input = writeNdjson(dir, 'orders.ndjson', orders(5, 'FOREIGN'));
    const journal = join(dir, 'journal.ndjson');
    const record = join(`${journal}.lock`, 'owner-1.json');
    mkdirSync(`${journal}.lock`);
    writeFileSync(
      record,
      JSON.stringify({
        pid: 1,
        hostname: 'build-agent-7',
        token: 'foreign',
        staleMs: 30_000,
        since: new Date().toISOString(),
      }),
    );
    const waited = await runBin(['orders', 'import', input, '--journal', journal], {
      env: importEnv({ ORDERCLI_LOCK_WAIT: '0.5' }),
    });
    expect(waited.code, waited.stderr).toBe(2);
    expect(waited.stderr).toContain('process 1 on host build-agent-7');
    expect(waited.stderr).toContain(`remove the folder ${journal}.lock`);
    expect(posts()).toBe(0);

    // Its mtime says nothing by itself (the owner's clock may be a day off): a record an hour old
    // by our clock is still waited for, until seen unchanged for its staleMs.
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(record, hourAgo, hourAgo);
    const notAtOnce = await runBin(['orders', 'import', input, '--journal', journal], {
      env: importEnv({ ORDERCLI_LOCK_WAIT: '0.5' }),
    });
    expect(notAtOnce.code, notAtOnce.stderr).toBe(2);
    expect(posts()).toBe(0);
    writeFileSync(
      record,
      JSON.stringify({
        pid: 1,
        hostname: 'build-agent-7',
        token: 'foreign',
        staleMs: 700,
        since: new Date().toISOString(),
      }),
    );
    const hourAhead = new Date(Date.now() + 3_600_000);
    utimesSync(record, hourAhead, hourAhead);
    const taken = await runBin(['orders', 'import', input, '--journal', journal], {
      env: importEnv({ ORDERCLI_LOCK_WAIT: '20' }),
    });
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stderr).toContain('Waiting for the lock');
    expect(taken.stderr).toContain('once its record has not changed for 0.7 s');
    expect(sandbox.orders()).toHaveLength(5);
  }, 30_000);

  it('refuses a second sandbox on the same --data folder', async () => {
    const data = tempDir('ordercli-lock-data-');
    const first = await startSandbox({ port: 0, quiet: true, dataDir: data });
    try {
      const second = await runBin(['sandbox', '--port', '0', '--data', data], { timeoutMs: 15_000 });
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toContain(`The sandbox data folder ${data} is in use by another ordercli`);
    } finally {
      await first.close();
    }
    expect(existsSync(join(data, 'sandbox-journal.ndjson.lock'))).toBe(false);
  }, 30_000);
});

/** This machine and PID namespace as an owner record names them. */
function thisHost(): Record<string, unknown> {
  const hostname = spawnSync('hostname').stdout.toString().trim();
  const bootId = readOptional('/proc/sys/kernel/random/boot_id');
  const pidNamespace = spawnSync('readlink', ['/proc/self/ns/pid']).stdout.toString().trim() || undefined;
  return { hostname, bootId, pidNamespace };
}

function readOptional(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

describe('the journal never silently re-targets', () => {
  it('stops before sending when the journal holds orders created at another base URL (also --dry-run)', async () => {
    const dir = tempDir('ordercli-lock-url-');
    const input = writeNdjson(dir, 'orders.ndjson', orders(10, 'URL'));
    const first = await runBin(['orders', 'import', input], { env: importEnv() });
    expect(first.code, first.stderr).toBe(0);
    const before = posts();
    const other = sandbox.url.replace('127.0.0.1', 'localhost');
    for (const extra of [[], ['--dry-run']]) {
      const again = await runBin(['--base-url', other, 'orders', 'import', input, ...extra], {
        env: importEnv(),
      });
      expect(again.code, again.stderr).toBe(2);
      expect(again.stderr).toContain(`records 10 orders created and 0 in doubt at ${sandbox.url}`);
      expect(again.stderr).toContain(`not at this run's ${other}`);
      expect(again.stderr).toContain(`run again with --base-url ${sandbox.url}`);
      expect(again.stderr).toContain('--journal');
    }
    expect(posts()).toBe(before);
    expect(sandbox.orders()).toHaveLength(10);
  }, 30_000);
});

describe('journal write failures', () => {
  it.skipIf(spawnSync('mkfifo', ['--version']).status !== 0)(
    'a pipe (mkfifo) as the journal or as its lock: exit 2 at once, naming it, nothing sent',
    async () => {
      const dir = tempDir('ordercli-lock-fifo-');
      const input = writeNdjson(dir, 'orders.ndjson', orders(5, 'FIFO'));
      const pipe = join(dir, 'pipe.ndjson');
      expect(spawnSync('mkfifo', [pipe]).status).toBe(0);
      const asJournal = await runBin(['orders', 'import', input, '--journal', pipe], {
        env: importEnv(),
        timeoutMs: 15_000,
      });
      expect(asJournal.code, asJournal.stderr).toBe(2);
      expect(asJournal.stderr).toContain(`The import journal ${pipe} is a pipe (FIFO), not a regular file`);

      const journal = join(dir, 'journal.ndjson');
      expect(spawnSync('mkfifo', [`${journal}.lock`]).status).toBe(0);
      const asLock = await runBin(['orders', 'import', input, '--journal', journal], {
        env: importEnv(),
        timeoutMs: 15_000,
      });
      expect(asLock.code, asLock.stderr).toBe(2);
      expect(asLock.stderr).toContain(
        `The lock ${journal}.lock of the import journal ${journal} is a pipe (FIFO)`,
      );
      expect(asLock.stderr).not.toContain('unexpectedly');
      expect(posts()).toBe(0);
    },
    30_000,
  );

  it('/dev/full as journal: one sentence, exit 2, nothing sent; SIGTERM ends it promptly', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(5, 'FULL'));
    const result = await runBin(['orders', 'import', input, '--journal', '/dev/full'], {
      env: importEnv(),
      timeoutMs: 20_000,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('The import journal /dev/full is a device, not a regular file');
    expect(result.stderr).not.toContain('unexpectedly');

    // SIGTERM once the binary's own signal listeners are in place, unless it ended already.
    const run = start(['orders', 'import', input, '--journal', '/dev/full'], importEnv());
    await waitFor(
      () => run.child.exitCode !== null || listensForSignals(run.child.pid!),
      20_000,
      'the signal listeners of the import',
    );
    run.child.kill('SIGTERM');
    let killed = false;
    const killer = setTimeout(() => {
      killed = true;
      run.child.kill('SIGKILL');
    }, 20_000);
    const exit = await run.exited;
    clearTimeout(killer);
    expect(killed, 'SIGTERM was ignored: it had to be killed').toBe(false);
    expect([2, 130], exit.stderr).toContain(exit.code);
    expect(posts()).toBe(0);
  }, 60_000);

  it('a read-only journal, and a journal in a read-only folder: exit 2, the file and the reason named', async (ctx) => {
    const dir = tempDir('ordercli-lock-ro-');
    const input = writeNdjson(dir, 'orders.ndjson', orders(5, 'RO'));
    const journal = join(dir, 'journal.ndjson');
    writeFileSync(journal, '');
    const folder = join(dir, 'locked');
    mkdirSync(folder);
    const readOnly = IS_ROOT ? chattr('+i', journal, folder) : chmodReadOnly(journal, folder);
    if (!readOnly) ctx.skip('chattr +i is not supported here');
    try {
      const file = await runBin(['orders', 'import', input, '--journal', journal], { env: importEnv() });
      expect(file.code, file.stderr).toBe(2);
      expect(file.stderr).toMatch(
        new RegExp(
          `Cannot open the import journal ${journal} for writing \\((EPERM|EACCES|EROFS): .*\\); nothing was sent`,
        ),
      );
      const inFolder = await runBin(['orders', 'import', input, '--journal', join(folder, 'j.ndjson')], {
        env: importEnv(),
      });
      expect(inFolder.code, inFolder.stderr).toBe(2);
      expect(inFolder.stderr).toMatch(/\((EPERM|EACCES|EROFS): [^)]*\); nothing was done/);
      expect(inFolder.stderr).not.toContain('unexpectedly');
      expect(posts()).toBe(0);
    } finally {
      if (IS_ROOT) chattr('-i', journal, folder);
    }
  }, 30_000);

  it.skipIf(!UNSHARE_MOUNT)(
    `a disk that fills up mid-run: exit 1, saying what was sent and what is in doubt${UNSHARE_MOUNT ? '' : ' (skipped: needs root and unshare -m)'}`,
    async () => {
      const dir = tempDir('ordercli-lock-enospc-');
      const input = writeNdjson(dir, 'orders.ndjson', orders(300, 'ENOSPC'));
      const small = join(dir, 'small');
      mkdirSync(small);
      // The sandbox runs in this process: the import must run beside it, not block it.
      const run = start(
        ['orders', 'import', input, '--journal', join(small, 'journal.ndjson'), '--concurrency', '4'],
        importEnv(),
        {
          command: [
            'unshare',
            '-m',
            'sh',
            '-c',
            'mount -t tmpfs -o size=24k tmpfs "$1" && shift && exec "$@"',
            'sh',
            small,
          ],
        },
      ).exited;
      const exit = await run;
      expect(exit.code, exit.stderr).toBe(1);
      const sentence =
        /Cannot write the import journal .*journal\.ndjson \(ENOSPC: [^)]*\), so the import stopped: (\d+) orders had been sent \((\d+) created, \d+ refused, \d+ with an unknown outcome\), (\d+) were not sent\./;
      const match = sentence.exec(exit.stderr);
      expect(match, exit.stderr).not.toBeNull();
      expect(Number(match![1])).toBe(posts());
      expect(Number(match![2])).toBe(sandbox.orders().length);
      expect(exit.stderr).toContain('The order ledger holds the outcome of every order sent');
    },
    90_000,
  );
});

function chattr(flag: string, ...paths: string[]): boolean {
  return spawnSync('chattr', [flag, ...paths]).status === 0;
}

function chmodReadOnly(journal: string, folder: string): boolean {
  spawnSync('chmod', ['0444', journal]);
  spawnSync('chmod', ['0555', folder]);
  return true;
}
