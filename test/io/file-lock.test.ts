// The lock on its own, in this process: the owner record, its refresh, a lock removed under its
// holder, a lock path that is not a folder, a wait ended by its signal. The races between processes
// are tested through the binary (test/import/send/journal.lock.test.ts); owners that cannot be
// checked (another PID namespace, clocks a day apart) in file-lock.namespace.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CancelledError, UsageError } from '../../src/core/errors.js';
import { ExitCode } from '../../src/core/exit-codes.js';
import { thisProcess } from '../../src/core/liveness.js';
import { AppendLog, NotRegularFileError } from '../../src/io/append-log.js';
import { acquireFileLock, lockWaitFromEnv } from '../../src/io/file-lock.js';
import { tempDir } from '../support/cli.js';
import { probe, requireTool } from '../support/requirements.js';
import { waitFor } from '../support/wait.js';

const OPTIONS = { what: 'the test file', busyAdvice: 'wait.' };

describe('acquireFileLock', () => {
  it('records its owner, refreshes the record while held, and removes the lock on release', async () => {
    const path = join(tempDir(), 'file.lock');
    const lock = await acquireFileLock(path, { ...OPTIONS, staleMs: 200, command: 'test' });
    const record = join(path, 'owner-1.json');
    const owner = JSON.parse(readFileSync(record, 'utf8')) as Record<string, unknown>;
    expect(owner).toMatchObject({ pid: process.pid, staleMs: 200, command: 'test' });
    expect(typeof owner.hostname).toBe('string');
    expect(typeof owner.token).toBe('string');
    if (process.platform === 'linux') {
      expect(owner.pidNamespace).toMatch(/^pid:\[\d+\]$/);
      expect(owner.startTime).toMatch(/^\d+$/);
      expect(owner.bootId).toMatch(/^[0-9a-f-]{36}$/);
    }
    await expect(acquireFileLock(path, OPTIONS)).rejects.toThrow(
      'The test file is already in use by this ordercli process.',
    );
    const first = statSync(record).mtimeMs;
    await waitFor(() => statSync(record).mtimeMs > first, 10_000, 'the record refreshed');
    await lock.release();
    expect(() => statSync(path)).toThrow();
  });

  it('notices a lock removed under its holder', async () => {
    const path = join(tempDir(), 'file.lock');
    const lock = await acquireFileLock(path, { ...OPTIONS, staleMs: 200 });
    expect(lock.lost).toBeUndefined();
    rmSync(path, { recursive: true });
    await waitFor(() => lock.lost !== undefined, 10_000, 'the loss noticed');
    expect(lock.lost?.message).toContain(
      `The lock ${path} of the test file was removed while this ordercli held it`,
    );
    await lock.release();
  });

  it('refreshes its record with an mtime that changes at each touch', async () => {
    const path = join(tempDir(), 'file.lock');
    const lock = await acquireFileLock(path, { ...OPTIONS, staleMs: 200 });
    const record = join(path, 'owner-1.json');
    // Our clock as seen in the mtime does not matter, only that each touch writes another value.
    const ahead = new Date(Date.now() + 86_400_000);
    utimesSync(record, ahead, ahead);
    const seen = new Set<number>([statSync(record).mtimeMs]);
    await waitFor(
      () => {
        seen.add(statSync(record).mtimeMs);
        return seen.size >= 3;
      },
      10_000,
      'two touches',
    );
    await lock.release();
  });

  it('reads ORDERCLI_LOCK_WAIT as a duration, a bare number in seconds as it always was', () => {
    expect(lockWaitFromEnv({})).toBe(60_000);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '2.5' })).toBe(2500);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '0' })).toBe(0);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '2m' })).toBe(120_000);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '500ms' })).toBe(500);
    expect(() => lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '-1' })).toThrow(
      'ORDERCLI_LOCK_WAIT must be a duration such as 500ms, 30s, 2m or 1h (a bare number is seconds), not "-1".',
    );
  });
});

/** Which of a few milliseconds `work` took to settle, and how it settled. */
async function timed<T>(work: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await work;
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

const MKFIFO = requireTool('mkfifo', {
  what: 'a pipe as the lock or the locked file (test/io/file-lock.test.ts)',
  missing: probe('mkfifo', '--version'),
  how: 'apt-get install -y coreutils',
});

describe('a lock path or locked file that is not what it should be', () => {
  it.skipIf(!MKFIFO)(
    'a pipe (mkfifo) as the lock: exit 2 at once, naming it; the pipe is left alone',
    async () => {
      const dir = tempDir();
      const path = join(dir, 'file.ndjson.lock');
      expect(spawnSync('mkfifo', [path]).status).toBe(0);
      const { ms, error } = await timed(acquireFileLock(path, { ...OPTIONS, waitMs: 60_000 }));
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(ExitCode.Usage);
      expect((error as Error).message).toBe(
        `The lock ${path} of the test file is a pipe (FIFO), not a folder, so the lock cannot be taken; nothing was done.`,
      );
      expect(ms).toBeLessThan(2000);
      expect(statSync(path).isFIFO()).toBe(true);

      // Through the log that takes it (the log's own file is fine).
      const log = join(dir, 'file.ndjson');
      const viaLog = await timed(
        AppendLog.open(log, { what: `the test log ${log}`, lock: { busyAdvice: 'wait.' } }),
      );
      expect(viaLog.error).toBeInstanceOf(UsageError);
      expect((viaLog.error as Error).message).toContain(
        `The lock ${path} of the test log ${log} is a pipe (FIFO)`,
      );
      expect(viaLog.ms).toBeLessThan(2000);
    },
  );

  it.skipIf(!MKFIFO)(
    'a pipe (mkfifo) as the locked file: exit 2 at once, naming it, and no lock left',
    async () => {
      const path = join(tempDir(), 'file.ndjson');
      expect(spawnSync('mkfifo', [path]).status).toBe(0);
      const { ms, error } = await timed(
        AppendLog.open(path, { what: `the test log ${path}`, lock: { busyAdvice: 'wait.' } }),
      );
      expect(error).toBeInstanceOf(NotRegularFileError);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(ExitCode.Usage);
      expect((error as Error).message).toBe(`The test log ${path} is a pipe (FIFO), not a regular file.`);
      expect(ms).toBeLessThan(2000);
      expect(existsSync(`${path}.lock`)).toBe(false);
    },
  );

  it('a device as the lock (a link to /dev/null): exit 2, and the device is not removed', async () => {
    const path = join(tempDir(), 'file.lock');
    symlinkSync('/dev/null', path);
    const error = await acquireFileLock(path, OPTIONS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain(`The lock ${path} of the test file is a device, not a folder`);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });

  it("a file as the lock: an older ordercli's lock (its PID) is taken once that PID is gone; any other file is refused", async () => {
    const dir = tempDir();
    const other = join(dir, 'notes.lock');
    writeFileSync(other, 'my notes, not a lock\n');
    const refused = await acquireFileLock(other, OPTIONS).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toContain(
      `The lock ${other} of the test file is a file that is not a lock, not a folder`,
    );
    expect(readFileSync(other, 'utf8')).toBe('my notes, not a lock\n');

    // An older ordercli's lock: its PID while it runs, then gone.
    const legacy = join(dir, 'legacy.lock');
    const sleeper = spawn('sleep', ['30']);
    try {
      writeFileSync(legacy, `${sleeper.pid}\n`);
      const busy = await acquireFileLock(legacy, OPTIONS).catch((e: unknown) => e);
      expect((busy as Error).message).toBe(
        `The test file is in use by another ordercli (process ${sleeper.pid}); wait.`,
      );
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((resolve) => sleeper.once('close', resolve));
    }
    const lock = await acquireFileLock(legacy, OPTIONS);
    expect(statSync(legacy).isDirectory()).toBe(true);
    await lock.release();
  });
});

describe('waiting for the lock', () => {
  it('ends within 2 s of its signal, with CancelledError', async () => {
    const path = join(tempDir(), 'file.lock');
    const record = join(path, 'owner-1.json');
    mkdirSync(path);
    // An owner in another PID namespace, touching its record: waited for.
    writeFileSync(
      record,
      JSON.stringify({
        pid: 1,
        hostname: thisProcess().host,
        bootId: thisProcess().boot,
        pidNamespace: 'pid:[1]',
        token: 'elsewhere',
        staleMs: 1000,
        since: new Date().toISOString(),
      }),
    );
    let tick = 0;
    const toucher = setInterval(() => {
      const when = new Date(Date.now() + ++tick);
      utimesSync(record, when, when);
    }, 100);
    try {
      const controller = new AbortController();
      let waiting!: () => void;
      const announced = new Promise<void>((resolve) => (waiting = resolve));
      const wait = timed(
        acquireFileLock(path, {
          ...OPTIONS,
          waitMs: 60_000,
          signal: controller.signal,
          onWait: () => waiting(),
        }),
      );
      await announced;
      const aborted = performance.now();
      controller.abort();
      const { error } = await wait;
      expect(error).toBeInstanceOf(CancelledError);
      expect(performance.now() - aborted).toBeLessThan(2000);
      // The owner's record is untouched by the interrupted wait.
      expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({ token: 'elsewhere' });
    } finally {
      clearInterval(toucher);
    }
  });

  it('a signal already fired: CancelledError before anything is done', async () => {
    const path = join(tempDir(), 'file.lock');
    const error = await acquireFileLock(path, { ...OPTIONS, signal: AbortSignal.abort() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect(existsSync(path)).toBe(false);
  });
});
