// Owners the lock cannot check (another PID namespace, another boot or host): alive while their
// record keeps changing as seen here (observeHeartbeat), whatever their clock says; taken over once
// it has not changed for the stale time on this process's monotonic clock. Records written by hand
// (beating, with mtimes a day ahead or behind; one as ordercli 0.1.0 wrote them, touching its
// mtime only), and a real holder in another PID namespace (unshare: skipped, saying so, where the
// machine does not allow it; with CI set, that fails).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { HEARTBEAT_MS, thisProcess } from '../../src/core/liveness.js';
import { acquireFileLock } from '../../src/io/file-lock.js';
import { ROOT, tempDir } from '../support/cli.js';
import { requireUnshare } from '../support/requirements.js';

const OPTIONS = { what: 'the test file', busyAdvice: 'wait.' };
/** The observers' stale time for records beaten by hand every 100 ms (the default is STALE_MS). */
const STALE_MS = 1500;
/** For a real holder, which beats every HEARTBEAT_MS: three beats. */
const HOLDER_STALE_MS = 3 * HEARTBEAT_MS;
const DAY_MS = 86_400_000;
/** `unshare -p -f --mount-proc` needs root (or user namespaces): CI runs as root and must have it. */
const UNSHARE_PID = requireUnshare(
  'a lock holder in a real other PID namespace (test/io/file-lock.namespace.test.ts)',
  '-p',
  '-f',
  '--mount-proc',
  '--kill-child',
);

interface Foreign {
  path: string;
  record: string;
  /** Stops beating; resolves with when (performance.now()) the last beat began. */
  stop: () => number;
}

/** A record: one line of JSON. */
function ownerLine(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/**
 * A lock held by an owner this process cannot check: a record written by hand, beaten every
 * 100 ms (its counter rewritten, as a holder does every HEARTBEAT_MS) with mtimes `offsetMs` from
 * our clock. A record of ordercli 0.1.0 (`legacy`: one line, other field names) is only touched,
 * each mtime different, as 0.1.0 did.
 */
function foreignLock(offsetMs: number, identity: Record<string, unknown>, legacy = false): Foreign {
  const path = join(tempDir('ordercli-lock-foreign-'), 'file.lock');
  const record = join(path, 'owner-1.json');
  mkdirSync(path);
  const since = new Date().toISOString();
  const owner = legacy
    ? { pid: 1, ...identity, token: 'foreign', staleMs: 30_000, since, command: 'test' }
    : { pid: 1, ...identity, id: 'foreign', since, command: 'test' };
  let tick = 0;
  const text = () => `${JSON.stringify(legacy ? owner : { ...owner, beat: tick })}\n`;
  writeFileSync(record, text());
  let lastTouch = performance.now();
  const touch = (): void => {
    lastTouch = performance.now();
    tick++;
    if (!legacy) writeFileSync(record, text(), { flag: 'r+' });
    const when = new Date(Date.now() + offsetMs + tick);
    utimesSync(record, when, when);
  };
  touch();
  const timer = setInterval(touch, 100);
  return {
    path,
    record,
    stop: () => {
      clearInterval(timer);
      return lastTouch;
    },
  };
}

async function timed<T>(work: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    return { value: await work, ms: performance.now() - start };
  } catch (error) {
    return { error, ms: performance.now() - start };
  }
}

const me = thisProcess();
const CASES = [
  {
    name: 'in another PID namespace (same boot), mtime a day in the future',
    offsetMs: DAY_MS,
    identity: { host: me.host, boot: me.boot, pidns: 'pid:[1]' },
    legacy: false,
    where: 'in another PID namespace (a container?)',
  },
  {
    name: 'in another PID namespace on another boot, mtime a day in the past',
    offsetMs: -DAY_MS,
    identity: { host: me.host, boot: '00000000-0000-4000-8000-000000000000', pidns: 'pid:[1]' },
    legacy: false,
    where: 'on another boot or host',
  },
  {
    name: 'on another host, mtime a day in the past',
    offsetMs: -DAY_MS,
    identity: { host: 'build-agent-7', boot: 'elsewhere', pidns: 'pid:[1]' },
    legacy: false,
    where: 'on host build-agent-7',
  },
  {
    name: 'in another PID namespace, a record of ordercli 0.1.0 (its mtime touched, a day ahead)',
    offsetMs: DAY_MS,
    identity: { hostname: me.host, bootId: me.boot, pidNamespace: 'pid:[1]' },
    legacy: true,
    where: 'in another PID namespace (a container?)',
  },
];

// Concurrent: each case waits for seconds on its own lock.
describe.concurrent.each(CASES)(
  'an owner that cannot be checked, $name',
  ({ offsetMs, identity, legacy, where }) => {
    it('is not taken over while its record keeps changing: the wait gives up', async () => {
      const foreign = foreignLock(offsetMs, identity, legacy);
      const messages: string[] = [];
      try {
        const waitMs = STALE_MS + 1000;
        const { error, ms } = await timed(
          acquireFileLock(foreign.path, {
            ...OPTIONS,
            staleMs: STALE_MS,
            waitMs,
            onWait: (message) => messages.push(message),
          }),
        );
        expect(error).toBeInstanceOf(UsageError);
        expect((error as Error).message).toBe(
          `The test file is locked by process 1 ${where}, which cannot be checked from here, and its lock did not go stale within the ${waitMs / 1000} s waited; nothing was done.`,
        );
        expect(ms).toBeGreaterThanOrEqual(waitMs - 50);
        expect(messages).toHaveLength(1);
        expect(messages[0]).toContain(`process 1 ${where} holds it and cannot be checked from here`);
      } finally {
        foreign.stop();
      }
      expect(ownerLine(foreign.record)).toMatchObject(legacy ? { token: 'foreign' } : { id: 'foreign' });
    }, 20_000);

    it('is taken over once its record has not changed for the stale time, as seen here', async () => {
      const foreign = foreignLock(offsetMs, identity, legacy);
      let stoppedAt = Number.POSITIVE_INFINITY;
      let lastTouch = Number.NaN;
      // Beaten for twice the stale time after the wait began, then left alone.
      const stopper = setTimeout(() => {
        stoppedAt = performance.now();
        lastTouch = foreign.stop();
      }, STALE_MS * 2);
      try {
        const lock = await acquireFileLock(foreign.path, { ...OPTIONS, staleMs: STALE_MS, waitMs: 15_000 });
        const takenAt = performance.now();
        expect(stoppedAt, 'taken over while the owner was beating').toBeLessThan(takenAt);
        expect(takenAt - lastTouch).toBeGreaterThanOrEqual(STALE_MS);
        // Not much later either: one poll after the stale time.
        expect(takenAt - stoppedAt).toBeLessThan(STALE_MS + 1500);
        expect(ownerLine(join(foreign.path, 'owner-2.json'))).toMatchObject(me);
        expect(() => readFileSync(foreign.record)).toThrow();
        await lock.release();
      } finally {
        clearTimeout(stopper);
        foreign.stop();
      }
    }, 20_000);
  },
);

describe('an owner that cannot be checked and does not beat', () => {
  it('is not taken over at once, however old its mtime: only after the stale time seen unchanged', async () => {
    const foreign = foreignLock(-DAY_MS * 365, { host: me.host, boot: me.boot, pidns: 'pid:[1]' });
    foreign.stop();
    // A year old by our clock, yet only just seen: the short wait gives up.
    const short = await timed(acquireFileLock(foreign.path, { ...OPTIONS, staleMs: STALE_MS, waitMs: 300 }));
    expect(short.error).toBeInstanceOf(UsageError);
    expect((short.error as Error).message).toContain('did not go stale within the 0.3 s waited');
    const long = await timed(
      acquireFileLock(foreign.path, { ...OPTIONS, staleMs: STALE_MS, waitMs: 10_000 }),
    );
    expect(long.error).toBeUndefined();
    expect(long.ms).toBeGreaterThanOrEqual(STALE_MS);
    await long.value!.release();
  }, 20_000);
});

/** Bundles a holder of the lock (this source) into a script that node runs without TypeScript. */
async function holderScript(): Promise<string> {
  const dir = tempDir('ordercli-lock-holder-');
  const entry = join(dir, 'holder.ts');
  writeFileSync(
    entry,
    `import { acquireFileLock } from ${JSON.stringify(resolve(ROOT, 'src/io/file-lock.ts'))};
const lock = await acquireFileLock(process.argv[2], { what: 'the test file', busyAdvice: 'wait.', waitMs: 0 });
process.stdout.write('held\\n');
// Holds the lock until killed (its heartbeat does not keep the process alive).
setInterval(() => undefined, 1 << 30);
void lock;
`,
  );
  const script = join(dir, 'holder.mjs');
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

/** The PIDs (in our namespace) of the children of `pid`. */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

describe('a holder in a real other PID namespace (unshare -p -f --mount-proc)', () => {
  it.skipIf(!UNSHARE_PID)(
    'is not taken over while it beats, and is once it was killed -9 and the stale time passed',
    async () => {
      const script = await holderScript();
      const path = join(tempDir('ordercli-lock-ns-'), 'file.lock');
      const unshare: ChildProcess = spawn(
        'unshare',
        ['-p', '-f', '--mount-proc', '--kill-child=SIGKILL', process.execPath, script, path],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      unshare.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<void>((done) => unshare.once('close', () => done()));
      try {
        await new Promise<void>((done, fail) => {
          unshare.stdout!.setEncoding('utf8').on('data', (chunk: string) => chunk.includes('held') && done());
          unshare.once('close', (code) => fail(new Error(`the holder ended (${code}): ${stderr}`)));
        });
        const record = ownerLine(join(path, 'owner-1.json'));
        expect(record.pidns).toMatch(/^pid:\[\d+\]$/);
        expect(record.pidns).not.toBe(me.pidns);
        expect(record.boot).toBe(me.boot);

        // Alive (beating every HEARTBEAT_MS): waited for twice the stale time, not taken over.
        const waitMs = HOLDER_STALE_MS * 2;
        const alive = await timed(acquireFileLock(path, { ...OPTIONS, staleMs: HOLDER_STALE_MS, waitMs }));
        expect(alive.error).toBeInstanceOf(UsageError);
        expect((alive.error as Error).message).toContain('in another PID namespace (a container?)');
        expect((alive.error as Error).message).toContain('did not go stale');
        expect(alive.ms).toBeGreaterThanOrEqual(waitMs - 50);

        // Killed -9: its record stops changing; taken over once seen unchanged for the stale time.
        const [holder] = childrenOf(unshare.pid!);
        expect(holder, 'the holder process').toBeDefined();
        process.kill(holder!, 'SIGKILL');
        await exited;
        const killedAt = performance.now();
        const taken = await timed(
          acquireFileLock(path, { ...OPTIONS, staleMs: HOLDER_STALE_MS, waitMs: 15_000 }),
        );
        expect(taken.error).toBeUndefined();
        expect(performance.now() - killedAt).toBeGreaterThanOrEqual(HOLDER_STALE_MS);
        expect(ownerLine(join(path, 'owner-2.json'))).toMatchObject({ pid: process.pid });
        await taken.value!.release();
      } finally {
        unshare.kill('SIGKILL');
        await exited;
      }
    },
    30_000,
  );
});
