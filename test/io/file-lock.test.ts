// The lock on its own, in this process: the owner record, its refresh, a lock removed under its
// holder. The races between processes are tested through the binary (test/import/journal-lock).
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireFileLock, lockWaitFromEnv } from '../../src/io/file-lock.js';
import { tempDir } from '../support/cli.js';

const OPTIONS = { what: 'the test file', busyAdvice: 'wait.' };

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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
    await until(() => statSync(record).mtimeMs > first, 'the record refreshed');
    await lock.release();
    expect(() => statSync(path)).toThrow();
  });

  it('notices a lock removed under its holder', async () => {
    const path = join(tempDir(), 'file.lock');
    const lock = await acquireFileLock(path, { ...OPTIONS, staleMs: 200 });
    expect(lock.lost).toBeUndefined();
    rmSync(path, { recursive: true });
    await until(() => lock.lost !== undefined, 'the loss noticed');
    expect(lock.lost?.message).toContain(
      `The lock ${path} of the test file was removed while this ordercli held it`,
    );
    await lock.release();
  });

  it('reads ORDERCLI_LOCK_WAIT in seconds', () => {
    expect(lockWaitFromEnv({})).toBe(60_000);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '2.5' })).toBe(2500);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '0' })).toBe(0);
    expect(() => lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '-1' })).toThrow(
      'ORDERCLI_LOCK_WAIT must be a number',
    );
  });
});
