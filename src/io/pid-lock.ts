/**
 * Lock files holding the owner's pid: one import per journal, one `listen` per forwarding queue
 * (two writers would send the same order, or deliver the same event, twice). A lock left by a
 * process that is gone (kill -9, a crash) is taken over.
 */
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../cli/errors.js';

/** Locks taken by this process: a pid check cannot tell two holders in one process apart. */
const held = new Set<string>();

/**
 * Takes the lock, or throws the error `busy` builds for its live owner (`'this process'` when the
 * lock is already held here).
 */
export async function acquirePidLock(
  lockPath: string,
  busy: (owner: number | 'this process') => Error,
): Promise<void> {
  const key = resolve(lockPath);
  if (held.has(key)) throw busy('this process');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lockPath, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      held.add(key);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number.parseInt(await readFile(lockPath, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) throw busy(owner);
    // The owner is gone: take the lock over.
    await unlink(lockPath).catch(() => undefined);
  }
  throw new UsageError(
    `Cannot take the lock ${lockPath}: it keeps reappearing; is another ordercli starting?`,
  );
}

/** Releases a lock taken by acquirePidLock (a missing file is fine). */
export async function releasePidLock(lockPath: string): Promise<void> {
  held.delete(resolve(lockPath));
  await unlink(lockPath).catch(() => undefined);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
