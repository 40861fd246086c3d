// Whether another process is alive: judged by its PID and start time on this kernel and in this PID
// namespace, by a heartbeat that keeps changing anywhere else.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { judgeProcess, observeHeartbeat, processStartTime, thisProcess } from '../../src/core/liveness.js';

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
