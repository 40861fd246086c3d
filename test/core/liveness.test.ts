// Whether another process is alive: judged by its PID and start time on this kernel and in this PID
// namespace, by a heartbeat that keeps changing anywhere else; the heartbeat file an owner keeps.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  HEARTBEAT_MS,
  Heartbeat,
  heartbeatOwner,
  judgeProcess,
  newOwner,
  observeHeartbeat,
  processStartTime,
  readHeartbeat,
  thisProcess,
} from '../../src/core/liveness.js';
import { tempDir } from '../support/cli.js';
import { probe, requireTool } from '../support/requirements.js';
import { waitFor } from '../support/wait.js';

const me = thisProcess();

describe('judgeProcess', () => {
  it('finds this process alive, and its PID with another start time taken by another process', () => {
    expect(me.pid).toBe(process.pid);
    expect(thisProcess()).toBe(me);
    expect(judgeProcess(me)).toEqual({ kind: 'alive' });
    expect(processStartTime(process.pid)).toBe(me.start);
    expect(judgeProcess({ ...me, start: `${me.start}0` })).toEqual({
      kind: 'dead',
      why: 'its PID now belongs to another process',
    });
  });

  it('finds a process that has exited gone', () => {
    const { pid } = spawnSync(process.execPath, ['-e', '']);
    // Gone, or (should the PID have been reused at once) another process's.
    expect(judgeProcess({ ...me, pid: pid!, start: '1' })).toMatchObject({ kind: 'dead' });
  });

  it('leaves a process of another boot, host or PID namespace to its heartbeat', () => {
    expect(judgeProcess({ ...me, boot: 'another-boot' })).toEqual({
      kind: 'unverifiable',
      where: 'on another boot or host',
    });
    expect(judgeProcess({ ...me, host: 'build-7', boot: undefined })).toEqual({
      kind: 'unverifiable',
      where: 'on host build-7',
    });
    expect(judgeProcess({ ...me, pidns: 'pid:[1]' })).toEqual({
      kind: 'unverifiable',
      where: 'in another PID namespace (a container?)',
    });
  });
});

describe('observeHeartbeat', () => {
  it('is alive once the heartbeat changes, and dead when it is gone', async () => {
    let beat = 0;
    expect(await observeHeartbeat(async () => String(beat++), { pollMs: 1 })).toBe('alive');
    expect(await observeHeartbeat(async () => undefined)).toBe('dead');
    const values = ['1', '1', undefined];
    expect(await observeHeartbeat(async () => values.shift(), { pollMs: 1 })).toBe('dead');
  });

  it('is dead when the heartbeat has not changed for the stale time', async () => {
    let reads = 0;
    const verdict = await observeHeartbeat(
      async () => {
        reads++;
        return 'same';
      },
      { staleMs: 20, pollMs: 1 },
    );
    expect(verdict).toBe('dead');
    expect(reads).toBeGreaterThan(1);
  });
});

describe('Heartbeat', () => {
  it('writes its owner and a beat on one line, rewrites the beat in place, and removes the file on stop', async () => {
    const owner = newOwner();
    expect(owner).toMatchObject(me);
    expect(owner.id).toMatch(/^[0-9a-f]{16}$/);
    expect(newOwner().id).not.toBe(owner.id);
    const path = join(tempDir(), 'beat');
    const heartbeat = new Heartbeat(path, owner);
    heartbeat.start();
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify({ ...owner, beat: 0 })}\n`);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const inode = statSync(path).ino;
    const first = await readHeartbeat(path);
    expect(heartbeatOwner(first!.text)).toEqual({ ...owner, beat: 0 });
    // What an observer sees: a change within a beat or two.
    expect(
      await observeHeartbeat(async () => (await readHeartbeat(path))?.text, { staleMs: 3 * HEARTBEAT_MS }),
    ).toBe('alive');
    expect(statSync(path).ino).toBe(inode);
    expect(heartbeat.lost).toBe(false);
    await heartbeat.stop();
    expect(existsSync(path)).toBe(false);
    expect(await readHeartbeat(path)).toBeUndefined();
  });

  it('stops, and says it lost its file, once the file was removed: it never creates it again', async () => {
    const path = join(tempDir(), 'beat');
    const heartbeat = new Heartbeat(path, newOwner());
    heartbeat.start();
    rmSync(path);
    await waitFor(() => heartbeat.lost, 4 * HEARTBEAT_MS, 'the loss noticed');
    expect(existsSync(path)).toBe(false);
    await heartbeat.stop();
  });

  it('heartbeatOwner: the owner of a line of JSON that names one (host, pid, id), else undefined', () => {
    const owner = { host: 'h', pid: 7, id: 'x' };
    expect(heartbeatOwner(`${JSON.stringify(owner)}\n3\n`)).toEqual(owner);
    expect(heartbeatOwner('{"pid":7,"hostname":"h","token":"x"}')).toBeUndefined();
    expect(heartbeatOwner('{"pid":7,"host":"h","id":')).toBeUndefined();
    expect(heartbeatOwner('null')).toBeUndefined();
    expect(heartbeatOwner('')).toBeUndefined();
  });
});

const MKFIFO = requireTool('mkfifo', {
  what: 'a pipe as a heartbeat file (test/core/liveness.test.ts)',
  missing: probe('mkfifo', '--version'),
  how: 'apt-get install -y coreutils',
});

describe('readHeartbeat', () => {
  it.skipIf(!MKFIFO)('never waits on a pipe: its status, and no text', async () => {
    const path = join(tempDir(), 'beat');
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    const read = await readHeartbeat(path);
    expect(read?.info.isFIFO()).toBe(true);
    expect(read?.text).toBe('');
  });

  it('reads at most maxBytes', async () => {
    const path = join(tempDir(), 'beat');
    writeFileSync(path, 'x'.repeat(100));
    expect((await readHeartbeat(path, 10))?.text).toBe('x'.repeat(10));
  });
});
