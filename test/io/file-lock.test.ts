// The lock on its own, in this process: the owner record and its heartbeat, a lock removed under its
// holder, owners judged at once (alive: exit 2; dead: taken over), a lock path that is not a folder,
// a wait ended by its signal; and, in child processes, contenders racing at an owner gone (exactly
// one wins). Owners that cannot be checked (another PID namespace, clocks a day apart) are in
// file-lock.namespace.test.ts.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CancelledError, UsageError } from '../../src/core/errors.js';
import { ExitCode } from '../../src/core/exit-codes.js';
import { HEARTBEAT_MS, thisProcess } from '../../src/core/liveness.js';
import { AppendLog, NotRegularFileError } from '../../src/io/append-log.js';
import { acquireFileLock, lockWaitFromEnv } from '../../src/io/file-lock.js';
import { ROOT, tempDir } from '../support/cli.js';
import { probe, requireTool } from '../support/requirements.js';
import { waitFor } from '../support/wait.js';

const OPTIONS = { what: 'the test file', busyAdvice: 'wait.' };
const me = thisProcess();

/** A record (one line of JSON): its owner, and its beat (none in a record of ordercli 0.1.0). */
function readRecord(file: string): { owner: Record<string, unknown>; beat: unknown } {
  const { beat, ...owner } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return { owner, beat };
}

/** A lock whose record `owner-1.json` names `owner` (with a beat, unless `legacy`). */
function lockOf(owner: Record<string, unknown>, legacy = false): { path: string; record: string } {
  const path = join(tempDir(), 'file.lock');
  const record = join(path, 'owner-1.json');
  mkdirSync(path);
  writeFileSync(record, `${JSON.stringify(legacy ? owner : { ...owner, beat: 0 })}\n`);
  return { path, record };
}

/** A process that has exited, and whose PID no process had a moment later. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

describe('acquireFileLock', () => {
  it("records its owner (the liveness module's), beats in it while held, and removes the lock on release", async () => {
    const path = join(tempDir(), 'file.lock');
    const lock = await acquireFileLock(path, { ...OPTIONS, command: 'test' });
    const record = join(path, 'owner-1.json');
    const { owner, beat } = readRecord(record);
    expect(owner).toMatchObject({ ...me, command: 'test' });
    expect(owner.id).toMatch(/^[0-9a-f]{16}$/);
    expect(Date.parse(owner.since as string)).not.toBeNaN();
    expect(beat).toBe(0);
    expect(readFileSync(record, 'utf8')).toMatch(/^\{.*,"beat":0\}\n$/);
    if (process.platform === 'linux') {
      expect(owner.pidns).toMatch(/^pid:\[\d+\]$/);
      expect(owner.start).toMatch(/^\d+$/);
      expect(owner.boot).toMatch(/^[0-9a-f-]{36}$/);
    }
    await expect(acquireFileLock(path, OPTIONS)).rejects.toThrow(
      'The test file is already in use by this ordercli process.',
    );
    // Rewritten in place every HEARTBEAT_MS: the same file, the same owner, a counter that grows.
    const inode = statSync(record).ino;
    await waitFor(() => readRecord(record).beat === 2, 4 * HEARTBEAT_MS, 'two beats');
    expect(readRecord(record).owner).toEqual(owner);
    expect(statSync(record).ino).toBe(inode);
    await lock.release();
    expect(existsSync(path)).toBe(false);
  });

  it('notices a lock removed under its holder, and does not create its record again', async () => {
    const path = join(tempDir(), 'file.lock');
    const lock = await acquireFileLock(path, OPTIONS);
    expect(lock.lost).toBeUndefined();
    rmSync(path, { recursive: true });
    mkdirSync(path);
    await waitFor(() => lock.lost !== undefined, 4 * HEARTBEAT_MS, 'the loss noticed');
    expect(lock.lost?.message).toContain(
      `The lock ${path} of the test file was removed while this ordercli held it`,
    );
    expect(readdirSync(path)).toEqual([]);
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

describe('an owner on this host and in this PID namespace is judged at once', () => {
  it('alive: exit 2 at once, naming it, however long the wait allowed; its record is left alone', async () => {
    const sleeper = spawn('sleep', ['30']);
    try {
      const start = readFileSync(`/proc/${sleeper.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19];
      const since = '2026-01-02T03:04:05.000Z';
      const { path, record } = lockOf({ ...me, pid: sleeper.pid, start, id: 'theirs', since });
      const { ms, error } = await timed(acquireFileLock(path, { ...OPTIONS, waitMs: 60_000 }));
      expect((error as UsageError).exitCode).toBe(ExitCode.Usage);
      expect((error as Error).message).toBe(
        `The test file is in use by another ordercli (process ${sleeper.pid}, since ${since}); wait.`,
      );
      expect(ms).toBeLessThan(2000);
      expect(readRecord(record).owner.id).toBe('theirs');

      // The same, as ordercli 0.1.0 wrote it.
      const old = { pid: sleeper.pid, startTime: start, hostname: me.host, bootId: me.boot };
      const legacy = lockOf({ ...old, pidNamespace: me.pidns, token: 'old', staleMs: 30_000, since }, true);
      const oldError = await acquireFileLock(legacy.path, OPTIONS).catch((e: unknown) => e);
      expect((oldError as Error).message).toContain(`in use by another ordercli (process ${sleeper.pid}`);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });

  it('dead (its PID gone, or reused by another process): taken over at once, its record removed', async () => {
    for (const owner of [
      { ...me, pid: deadPid() },
      // This PID, with another start time: a process that had our PID before us.
      { ...me, start: `${me.start}0` },
      { pid: deadPid(), hostname: me.host, bootId: me.boot, pidNamespace: me.pidns, token: 'old' },
    ]) {
      const { path, record } = lockOf({ id: 'theirs', since: 'then', ...owner }, 'token' in owner);
      const { ms, value: lock } = await timed(acquireFileLock(path, { ...OPTIONS, waitMs: 60_000 }));
      expect(ms).toBeLessThan(2000);
      expect(existsSync(record)).toBe(false);
      expect(readRecord(join(path, 'owner-2.json')).owner).toMatchObject(me);
      await lock!.release();
    }
  });
});

/** Bundles a contender for the lock (this source) into a script that node runs without TypeScript. */
async function contenderScript(): Promise<string> {
  const dir = tempDir('ordercli-lock-contender-');
  const entry = join(dir, 'contender.ts');
  // argv: the lock, the stale time. Takes the lock when its stdin says so; the winner holds it
  // until its stdin ends. Prints `waiting` (owner being watched), then `won` or `lost: <message>`.
  writeFileSync(
    entry,
    `import { acquireFileLock } from ${JSON.stringify(resolve(ROOT, 'src/io/file-lock.ts'))};
const [path, staleMs] = process.argv.slice(2);
const say = (line: string) => process.stdout.write(line + '\\n');
process.stdin.once('data', () => {
  acquireFileLock(path!, { what: 'the test file', busyAdvice: 'wait.', staleMs: Number(staleMs), waitMs: 20_000, onWait: () => say('waiting') }).then(
    (lock) => { say('won'); process.stdin.once('end', () => void lock.release()); },
    (error: Error) => { say('lost: ' + error.message); process.stdin.destroy(); },
  );
});
say('ready');
`,
  );
  const script = join(dir, 'contender.mjs');
  await build({
    entryPoints: [entry],
    outfile: script,
    bundle: true,
    format: 'esm',
    platform: 'node',
    logLevel: 'silent',
  });
  return script;
}

interface Contender {
  child: ChildProcess;
  lines: string[];
  exited: Promise<unknown>;
}

/** Starts `count` contenders for `path`, resolving once each is ready to take the lock. */
async function contenders(
  script: string,
  count: number,
  path: string,
  staleMs: number,
): Promise<Contender[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const child = spawn(process.execPath, [script, path, String(staleMs)], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const lines: string[] = [];
      let buffer = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
          lines.push(buffer.slice(0, end));
          buffer = buffer.slice(end + 1);
        }
      });
      const exited = new Promise((done) => child.once('close', done));
      await waitFor(() => lines.includes('ready'), 20_000, 'a contender ready');
      return { child, lines, exited };
    }),
  );
}

const CONTENDERS = 8;
const ROUNDS = 3;

describe('contenders racing at an owner gone: exactly one takes the lock over', () => {
  it.each([
    ['provably dead (its PID gone): taken over at once', 'dead'],
    ['that cannot be checked and stopped beating: taken over after the stale time', 'stale'],
  ] as const)(
    `an owner %s (${CONTENDERS} processes, ${ROUNDS} rounds)`,
    async (_, kind) => {
      const script = await contenderScript();
      for (let round = 1; round <= ROUNDS; round++) {
        const owner = kind === 'dead' ? { ...me, pid: deadPid() } : { ...me, pid: 1, pidns: 'pid:[1]' };
        const { path } = lockOf({ ...owner, id: 'gone', since: 'then' });
        const all = await contenders(script, CONTENDERS, path, 500);
        try {
          // Told together: each is ready, so they reach the lock within a few milliseconds.
          for (const { child } of all) child.stdin!.write('go\n');
          const outcomes = await waitFor(
            () => all.every(({ lines }) => lines.some((line) => /^(won|lost)/.test(line))) && all,
            20_000,
            'every contender done',
          );
          const winners = outcomes.filter(({ lines }) => lines.includes('won'));
          expect(
            winners,
            `round ${round}: ${JSON.stringify(outcomes.map(({ lines }) => lines))}`,
          ).toHaveLength(1);
          const winner = winners[0]!.child.pid;
          for (const { lines } of outcomes.filter((contender) => !winners.includes(contender))) {
            expect(lines.at(-1)).toMatch(
              `lost: The test file is in use by another ordercli (process ${winner}, since `,
            );
          }
          // The stale owner was being watched by every contender: they all raced for it.
          if (kind === 'stale') expect(outcomes.every(({ lines }) => lines[1] === 'waiting')).toBe(true);
          expect(readdirSync(path)).toEqual(['owner-2.json']);
          expect(readRecord(join(path, 'owner-2.json')).owner.pid).toBe(winner);
        } finally {
          for (const { child } of all) child.stdin!.end();
          await Promise.all(all.map(({ exited }) => exited));
        }
        expect(existsSync(path), 'the winner released it').toBe(false);
      }
    },
    60_000,
  );
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

  it('a file as the lock (any file: notes, a PID file of an ordercli before 0.1.0): exit 2, left alone', async () => {
    const dir = tempDir();
    for (const [name, text] of [
      ['notes.lock', 'my notes, not a lock\n'],
      ['pid.lock', `${deadPid()}\n`],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, text);
      const refused = await acquireFileLock(path, OPTIONS).catch((e: unknown) => e);
      expect((refused as UsageError).exitCode).toBe(ExitCode.Usage);
      expect((refused as Error).message).toBe(
        `The lock ${path} of the test file is a file that is not a lock, not a folder, so the lock cannot be taken; nothing was done.`,
      );
      expect(readFileSync(path, 'utf8')).toBe(text);
    }
  });
});

describe('waiting for the lock', () => {
  it('ends within 2 s of its signal, with CancelledError', async () => {
    const path = join(tempDir(), 'file.lock');
    const record = join(path, 'owner-1.json');
    mkdirSync(path);
    // An owner in another PID namespace, beating: waited for.
    let beat = 0;
    const owner = { ...me, pid: 1, pidns: 'pid:[1]', id: 'elsewhere', since: new Date().toISOString() };
    writeFileSync(record, `${JSON.stringify({ ...owner, beat })}\n`);
    const toucher = setInterval(
      () => writeFileSync(record, `${JSON.stringify({ ...owner, beat: ++beat })}\n`),
      100,
    );
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
      expect(readRecord(record).owner).toEqual(owner);
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
