// The append-only log on its own: replay and the torn tail, the group commit's order, the
// refusals (closed, not a regular file, read-only, full disk), and its lock held by another process.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppendLog, AppendLogError, NotRegularFileError } from '../../src/io/append-log.js';
import { ROOT, tempDir } from '../support/cli.js';
import { probe, requireToolNow, requireUnshare } from '../support/requirements.js';

const IS_ROOT = process.getuid?.() === 0;
/** A private mount namespace (root) for a full file system: CI runs as root and must have it. */
const UNSHARE_MOUNT = requireUnshare('a full disk (test/io/append-log.test.ts)', '-m');

/** The module bundled for a child process (another process holding the lock, a full disk). */
let bundle: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  bundle = join(tempDir('ordercli-append-log-'), 'append-log.mjs');
  await build({
    entryPoints: [join(ROOT, 'src/io/append-log.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    logLevel: 'silent',
  });
});

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n');
}

async function replayAll(
  log: AppendLog,
): Promise<{ text: string[]; result: Awaited<ReturnType<AppendLog['replay']>> }> {
  const text: string[] = [];
  const result = await log.replay((line) => text.push(line.toString('utf8')));
  return { text, result };
}

describe('AppendLog', () => {
  it('creates its folder, replays complete lines, cuts a torn last line and appends after it', async () => {
    const path = join(tempDir(), 'deep', 'er', 'log.ndjson');
    const first = await AppendLog.open(path, { what: 'the test log' });
    await first.append('{"n":1}');
    await first.append(Buffer.from('{"n":2}'));
    await first.close();
    // A kill during a write leaves a line without its newline.
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"n":3,"tor`);

    const second = await AppendLog.open(path, { what: 'the test log' });
    const { text, result } = await replayAll(second);
    expect(text).toEqual(['{"n":1}', '{"n":2}']);
    expect(result).toEqual({ lines: 2, tornTail: { bytes: 11, line: 3 } });
    expect(second.size).toBe(16);
    await second.append('{"n":4}');
    await second.close();
    expect(lines(path)).toEqual(['{"n":1}', '{"n":2}', '{"n":4}', '']);
  });

  it('replays a file without a torn tail as it is, across read chunks', async () => {
    const path = join(tempDir(), 'big.ndjson');
    const long = 'x'.repeat(300_000);
    writeFileSync(path, `${[1, 2, 3, 4, 5].map((n) => `{"n":${n},"pad":"${long}"}`).join('\n')}\n`);
    const log = await AppendLog.open(path, { what: 'the test log' });
    const seen: [number, number, number][] = [];
    const result = await log.replay((line, number, offset) =>
      seen.push([number, offset, (JSON.parse(line.toString()) as { n: number }).n]),
    );
    expect(result).toEqual({ lines: 5 });
    const size = long.length + 17;
    expect(seen).toEqual([1, 2, 3, 4, 5].map((n) => [n, (n - 1) * size, n]));
    await log.close();
  });

  it('passes a line over the bound on in pieces instead of visiting it, and takes the signal meanwhile', async () => {
    const path = join(tempDir(), 'bound.ndjson');
    // Line 2 spans read chunks (1 MiB), line 3 is over the bound within one, line 5 is a torn tail.
    const long = 'y'.repeat(2_500_000);
    writeFileSync(path, `{"n":1}\n${long}\n${'z'.repeat(100)}\n{"n":4}\n${'t'.repeat(1_500_000)}`);
    const log = await AppendLog.open(path, { what: 'the test log' });
    const visited: [number, string][] = [];
    const pieces: {
      line: number;
      offset: number;
      bytes: number;
      size: number;
      end: boolean;
      torn: boolean;
    }[] = [];
    const result = await log.replay((line, number) => visited.push([number, line.toString()]), undefined, {
      maxLineBytes: 64,
      oversize: (piece, { line, offset, bytes, end, torn }) => {
        pieces.push({ line, offset, bytes, size: piece.length, end, torn });
      },
    });
    expect(visited).toEqual([
      [1, '{"n":1}'],
      [4, '{"n":4}'],
    ]);
    const summary = (line: number) => {
      const own = pieces.filter((piece) => piece.line === line);
      return {
        bytes: own.reduce((sum, piece) => sum + piece.size, 0),
        ends: own.filter((p) => p.end).length,
      };
    };
    expect(summary(2)).toEqual({ bytes: long.length, ends: 1 });
    expect(pieces.filter((piece) => piece.line === 2).length).toBeGreaterThan(1);
    expect(pieces.every((piece) => piece.size <= 1 << 20)).toBe(true);
    expect(pieces.find((piece) => piece.line === 3)).toMatchObject({
      offset: 8 + long.length + 1,
      bytes: 100,
      end: true,
    });
    expect(pieces.at(-1)).toMatchObject({ line: 5, bytes: 1_500_000, end: true, torn: true });
    expect(result).toEqual({ lines: 4, tornTail: { bytes: 1_500_000, line: 5 } });
    await log.close();

    // Ctrl-C while a long line is passed on: the replay stops before reading the rest of it.
    writeFileSync(path, `${'w'.repeat(8 * 1024 * 1024)}\n{"n":2}\n`);
    const again = await AppendLog.open(path, { what: 'the test log' });
    const stop = new AbortController();
    let read = 0;
    const replay = again.replay(() => undefined, stop.signal, {
      maxLineBytes: 64,
      oversize: (piece) => {
        read += piece.length;
        stop.abort();
      },
    });
    await expect(replay).rejects.toThrow('Interrupted while reading the test log.');
    expect(read).toBeLessThanOrEqual(1 << 20);
    await again.close();
  });

  it('writes the lines of a turn in one round, in the order appended, rounds one after the other', async () => {
    const path = join(tempDir(), 'order.ndjson');
    const log = await AppendLog.open(path, { what: 'the test log', synced: true });
    const first = Array.from({ length: 50 }, (_, i) => log.append(`{"i":${i}}`));
    // Appended while the first round is being written: they go in the next round, after it.
    await new Promise((resolve) => setImmediate(resolve));
    const second = Array.from({ length: 50 }, (_, i) => log.append(`{"i":${50 + i}}`));
    const offsets = await Promise.all([...first, ...second]);
    expect(
      lines(path)
        .slice(0, -1)
        .map((line) => (JSON.parse(line) as { i: number }).i),
    ).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Each promise resolved with its own line's offset.
    for (const [i, offset] of offsets.entries()) {
      expect((await log.read(offset, `{"i":${i}}`.length)).toString()).toBe(`{"i":${i}}`);
    }
    await log.close();
  });

  it('appendNow writes what is queued and its line before returning', async () => {
    const path = join(tempDir(), 'now.ndjson');
    const log = await AppendLog.open(path, { what: 'the test log' });
    const queued = log.append('a');
    expect(log.appendNow('b')).toBe(2);
    expect(readFileSync(path, 'utf8')).toBe('a\nb\n');
    expect(await queued).toBe(0);
    log.truncateNow();
    log.appendNow('c');
    log.closeNow();
    expect(readFileSync(path, 'utf8')).toBe('c\n');
  });

  it('truncate empties the file between rounds; appends go on after it', async () => {
    const path = join(tempDir(), 'compact.ndjson');
    const log = await AppendLog.open(path, { what: 'the test log', synced: true });
    await Promise.all([log.append('a'), log.append('b')]);
    await log.truncate();
    expect(await log.append('c')).toBe(0);
    await log.close();
    expect(readFileSync(path, 'utf8')).toBe('c\n');
  });

  it('refuses an append after close, with the file named', async () => {
    const path = join(tempDir(), 'closed.ndjson');
    const log = await AppendLog.open(path, { what: 'the test log' });
    await log.close();
    const error = await log.append('late').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppendLogError);
    expect((error as AppendLogError).code).toBe('EBADF');
    expect((error as Error).message).toBe('Cannot write the test log (EBADF: file system error).');
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('refuses a device (/dev/full) and a folder, naming the reason', async () => {
    const device = await AppendLog.open('/dev/full', { what: 'the test log' }).catch((e: unknown) => e);
    expect(device).toBeInstanceOf(NotRegularFileError);
    expect((device as Error).message).toBe('The test log is a device, not a regular file.');
    const folder = await AppendLog.open(tempDir(), { what: 'the test log' }).catch((e: unknown) => e);
    expect((folder as Error).message).toBe('The test log is a folder, not a regular file.');
  });

  it('refuses a file it cannot open, naming the reason', async (context) => {
    const path = join(tempDir(), 'read-only.ndjson');
    writeFileSync(path, '');
    // Root opens a file whatever its mode: an immutable one is what it cannot write.
    requireToolNow(context, IS_ROOT ? 'chattr' : 'chmod', {
      what: 'a log file that cannot be opened (test/io/append-log.test.ts)',
      missing: IS_ROOT ? probe('chattr', '+i', path) : probe('chmod', '0444', path),
      how: 'apt-get install -y e2fsprogs (chattr), with the temporary folder on a file system that has the immutable flag (ext4)',
    });
    try {
      const error = await AppendLog.open(path, { what: 'the test log' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AppendLogError);
      expect(['EPERM', 'EACCES']).toContain((error as AppendLogError).code);
      expect((error as Error).message).toMatch(/^Cannot open the test log \((EPERM|EACCES): /);
    } finally {
      if (IS_ROOT) spawnSync('chattr', ['-i', path]);
    }
  });

  it('refuses the lock while another process holds it, and takes it once that process is gone', async () => {
    const path = join(tempDir(), 'locked.ndjson');
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { AppendLog } = await import(${JSON.stringify(bundle)});
         await AppendLog.open(${JSON.stringify(path)}, { what: 'the test log', lock: { busyAdvice: 'wait.' } });
         console.log('held');
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(holder);
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.once('data', () => resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited (${code})`)));
    });
    const options = { what: 'the test log', lock: { busyAdvice: 'wait.' } };
    const busy = await AppendLog.open(path, options).catch((e: unknown) => e);
    expect((busy as Error).message).toBe(
      `The test log is in use by another ordercli (process ${holder.pid}, since ${
        (JSON.parse(readFileSync(join(`${path}.lock`, 'owner-1.json'), 'utf8')) as { since: string }).since
      }); wait.`,
    );
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('close', resolve));
    const log = await AppendLog.open(path, options);
    await log.append('mine');
    await log.close();
    expect(readFileSync(path, 'utf8')).toBe('mine\n');
  });

  it.skipIf(!UNSHARE_MOUNT)(
    'a full disk: the failed round is rejected with ENOSPC and cut off; smaller appends go on',
    () => {
      const dir = tempDir('ordercli-append-full-');
      const script = `
        const { AppendLog } = await import(${JSON.stringify(bundle)});
        const path = process.argv[1] + '/log.ndjson';
        const log = await AppendLog.open(path, { what: 'the test log', synced: true });
        await log.append('{"small":1}');
        const error = await log.append('x'.repeat(64 * 1024)).catch((e) => e);
        const after = await log.append('{"small":2}');
        await log.close();
        const { readFileSync } = await import('node:fs');
        console.log(JSON.stringify({ code: error.code, message: error.message, after, text: readFileSync(path, 'utf8') }));`;
      const run = spawnSync(
        'unshare',
        [
          '-m',
          'sh',
          '-c',
          'mount -t tmpfs -o size=16k tmpfs "$1" && exec "$2" --input-type=module -e "$3" "$1"',
          'sh',
          dir,
          process.execPath,
          script,
        ],
        { encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as { code: string; message: string; after: number; text: string };
      expect(result.code).toBe('ENOSPC');
      expect(result.message).toBe('Cannot write the test log (ENOSPC: no space left on the device).');
      expect(result.after).toBe(12);
      expect(result.text).toBe('{"small":1}\n{"small":2}\n');
    },
  );
});
