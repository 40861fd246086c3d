// listen never waits on a special file: a --log or forwarding queue (or its lock) that is a pipe
// or a device is exit 2 at once, naming it, before the listener starts. Through the binary.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';

const LISTEN = ['listen', '--port', '0', '--key', 'whk_special_files_test'];

function fifo(path: string): string {
  execFileSync('mkfifo', [path]);
  return path;
}

describe('listen with a special file where a file is written', () => {
  it('a --log that is a pipe or a device: exit 2 at once, naming it', async () => {
    const dir = tempDir();
    for (const [log, kind] of [
      [fifo(join(dir, 'log.ndjson')), 'a pipe (FIFO)'],
      ['/dev/null', 'a device'],
    ] as const) {
      const result = await runBin([...LISTEN, '--log', log], { timeoutMs: 15_000 });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`The log ${log} is ${kind}, not a regular file.`);
      expect(result.stderr).not.toContain('Ready:');
    }
  });

  it('a forwarding queue, or its lock, that is a pipe: exit 2 at once, naming it', async () => {
    const queueDir = join(tempDir(), 'queue');
    mkdirSync(queueDir);
    const queue = fifo(join(queueDir, 'forward-queue.ndjson'));
    const forward = ['--forward-to', 'http://127.0.0.1:9/', '--queue-dir', queueDir];
    const onQueue = await runBin([...LISTEN, ...forward], { timeoutMs: 15_000 });
    expect(onQueue.code).toBe(2);
    expect(onQueue.stderr).toContain(`The forwarding queue ${queue} is a pipe (FIFO), not a regular file.`);

    const lockDir = join(tempDir(), 'queue');
    mkdirSync(lockDir);
    const lock = fifo(join(lockDir, 'forward-queue.ndjson.lock'));
    const onLock = await runBin([...LISTEN, '--forward-to', 'http://127.0.0.1:9/', '--queue-dir', lockDir], {
      timeoutMs: 15_000,
    });
    expect(onLock.code).toBe(2);
    expect(onLock.stderr).toContain(`The lock ${lock} of the forwarding queue`);
    expect(onLock.stderr).toContain('is a pipe (FIFO), not a folder');
  });
});
