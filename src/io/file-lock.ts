/**
 * One writer per file (the import journal, the forwarding queue, the sandbox's --data journal):
 * two writers would send an order, or deliver an event, twice.
 *
 * The lock of `<file>` is the folder `<file>.lock` holding owner records `owner-<n>.json`, each
 * created whole and exclusively (written to a temporary file, then hard-linked to its name, which
 * fails if the name exists). The record with the highest `n` is the owner. It names the owner's
 * host (hostname and boot id), PID namespace, PID and process start time, and the owner touches
 * its file (mtime) every `staleMs / 4` while it holds the lock.
 *
 * Taking the lock over from owner `n` means creating `owner-<n+1>.json`: exactly one process can
 * create that name, so two processes that both judge the same owner gone can never both win.
 * The winner then checks that record `n` is still the one it judged (by its random token) and
 * that no later record exists, and removes the records below its own. Release removes the
 * record and the folder.
 *
 * The owner is judged by `judgeProcess` (core/liveness.ts): one on this kernel, in this PID
 * namespace, whose PID is gone or now belongs to another process (another start time), is dead:
 * taken over at once. Without /proc (no boot id, no start time) a PID that exists is alive. An
 * owner that cannot be checked (another host, boot or PID namespace: a container, a shared volume)
 * is alive while its record keeps changing (mtime, or content) as seen from here: it is taken over
 * once this process has seen no change for the owner's `staleMs`, timed by this process's own
 * monotonic clock. The owner's clock (the mtimes it writes) is never compared with ours: only its
 * successive values with each other, so a clock a day ahead or behind changes nothing. The wait is
 * bounded (`waitMs`) and ends at once when `signal` fires.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { link, mkdir, open, readdir, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { parseDuration } from '../config/duration.js';
import { CancelledError, UsageError } from '../core/errors.js';
import {
  judgeProcess,
  type ProcessIdentity,
  type ProcessVerdict,
  processStartTime,
  thisProcess,
} from '../core/liveness.js';
import { fileKind } from './file-kind.js';
import { capitalize } from './quote.js';

/** How long the record of an owner that cannot be checked may stay unchanged before it is stale. */
export const DEFAULT_STALE_MS = 30_000;
/** How long to wait for an owner that cannot be checked before giving up (ORDERCLI_LOCK_WAIT). */
export const DEFAULT_LOCK_WAIT_MS = 60_000;
const POLL_MS = 250;
/** An owner record is a line of JSON: what is longer is not one (and is not read whole). */
const MAX_RECORD_BYTES = 64 * 1024;
/**
 * Opening never waits: a FIFO opened for reading without O_NONBLOCK waits for a writer forever.
 * (Absent on Windows, which has no FIFOs in the file system.)
 */
const OPEN_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What an owner record says about the process holding the lock. */
export interface LockOwner {
  pid: number;
  /** Start time of the process (clock ticks since boot, /proc/<pid>/stat), to tell PID reuse. */
  startTime?: string;
  hostname: string;
  bootId?: string;
  /** `readlink /proc/self/ns/pid`, where the system has it. */
  pidNamespace?: string;
  /** Random: tells this record from any later one of the same number. */
  token: string;
  /** The owner promises to touch its record at least every staleMs / 4. */
  staleMs: number;
  since: string;
  /** What holds the lock, for people reading the record. */
  command?: string;
}

export interface FileLockOptions {
  /** The locked file as the user knows it, for messages ("the import journal x.ndjson"). */
  what: string;
  /** What to tell the user to do when a live owner holds the lock. */
  busyAdvice: string;
  /** Longest wait for an owner that cannot be checked (default DEFAULT_LOCK_WAIT_MS). */
  waitMs?: number;
  staleMs?: number;
  /** Told once, when the lock is waited for. */
  onWait?: (message: string) => void;
  /** Ends a wait (Ctrl-C). */
  signal?: AbortSignal;
  /** Written in the record. */
  command?: string;
}

/** A lock this process holds. */
export class FileLock {
  readonly path: string;
  private readonly ownerFile: string;
  private refresher: NodeJS.Timeout | undefined;
  private lostError: Error | undefined;
  /** The last mtime written (ms): each touch writes a later one, even if our clock stepped back. */
  private lastTouch = Number.NEGATIVE_INFINITY;

  constructor(path: string, ownerFile: string, staleMs: number, what: string) {
    this.path = path;
    this.ownerFile = ownerFile;
    this.refresher = setInterval(() => void this.refresh(what), Math.max(50, Math.floor(staleMs / 4)));
    this.refresher.unref();
  }

  /** Set when the record was removed under us (by hand, or taken over after a long stall). */
  get lost(): Error | undefined {
    return this.lostError;
  }

  private async refresh(what: string): Promise<void> {
    // Observers only look for a change: the value must differ from the last one, whatever the clock.
    this.lastTouch = Math.max(Date.now(), this.lastTouch + 1);
    const when = new Date(this.lastTouch);
    try {
      await utimes(this.ownerFile, when, when);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || this.refresher === undefined) return;
      this.lostError = new UsageError(
        `The lock ${this.path} of ${what} was removed while this ordercli held it, so it stopped writing.`,
        ['Make sure no other ordercli uses the same file, then run the command again.'],
      );
      this.stopRefreshing();
    }
  }

  private stopRefreshing(): void {
    if (this.refresher) clearInterval(this.refresher);
    this.refresher = undefined;
  }

  /** Removes the record and the lock folder (a record already gone is fine). */
  async release(): Promise<void> {
    this.stopRefreshing();
    held.delete(this.path);
    await unlink(this.ownerFile).catch(() => undefined);
    await rmdir(this.path).catch(() => undefined);
  }
}

/** Locks held by this process: its own records cannot tell two holders in it apart. */
const held = new Set<string>();

/**
 * ORDERCLI_LOCK_WAIT as milliseconds, or the default: a duration like every other (`90s`, `2m`),
 * a bare number being seconds as the contract always said; `0` does not wait.
 */
export function lockWaitFromEnv(env: NodeJS.ProcessEnv): number {
  const value = env.ORDERCLI_LOCK_WAIT;
  if (value === undefined || value === '') return DEFAULT_LOCK_WAIT_MS;
  return parseDuration(value, { name: 'ORDERCLI_LOCK_WAIT', bare: 's', maxMs: 7 * 86_400_000 });
}

const OWNER_FILE = /^owner-(\d+)\.json$/;

interface Latest {
  generation: number;
  file: string;
  owner: LockOwner | undefined;
  /**
   * What changes when the owner touches or rewrites its record (inode, mtime, size, content): only
   * ever compared with an earlier value, never with a clock.
   */
  fingerprint: string;
}

/** The record being waited for, and when (performance.now()) it was last seen to change. */
interface Watched {
  generation: number;
  fingerprint: string;
  changedAt: number;
}

/**
 * The wait for an owner that cannot be checked from here (another machine, another PID namespace,
 * an unreadable record): it is taken over once its record has not changed for its stale time.
 */
class UncheckableOwnerWait {
  private readonly started = performance.now();
  private announced = false;
  private watched: Watched | undefined;

  constructor(
    private readonly path: string,
    private readonly staleMs: number,
    private readonly waitMs: number,
    private readonly options: FileLockOptions,
  ) {}

  /**
   * While the owner's record is fresh: pauses, then resolves true (look again); false once it is
   * stale (take over). Throws when the wait ran out, or CancelledError on the signal.
   */
  async pausedFor(latest: Latest, where: string): Promise<boolean> {
    const { path, waitMs, options } = this;
    const now = performance.now();
    let watched = this.watched;
    if (watched?.generation !== latest.generation || watched.fingerprint !== latest.fingerprint) {
      // First seen, or changed since last seen: its owner was alive a moment ago.
      watched = { generation: latest.generation, fingerprint: latest.fingerprint, changedAt: now };
      this.watched = watched;
    }
    const ownerStale = ownerStaleMs(latest.owner, this.staleMs);
    const unchangedFor = now - watched.changedAt;
    if (unchangedFor >= ownerStale) return false;
    const waited = now - this.started;
    if (waited >= waitMs) throw gaveUpError(path, latest.owner, where, ownerStale, waitMs, options);
    if (!this.announced) {
      this.announced = true;
      options.onWait?.(
        `Waiting for the lock ${path} of ${options.what}: ${ownerText(latest.owner)}${where ? ` ${where}` : ''} holds it and cannot be checked from here; it is taken over once its record has not changed for ${seconds(ownerStale)}, and this gives up after ${seconds(waitMs)} (ORDERCLI_LOCK_WAIT).`,
      );
    }
    const next = Math.min(POLL_MS, ownerStale - unchangedFor, waitMs - waited);
    await pause(Math.max(1, Math.ceil(next)), options.signal);
    return true;
  }
}

/**
 * Takes the lock `lockPath` (a folder), taking over from an owner that is provably dead or whose
 * record stopped changing; throws a UsageError when a live owner holds it, the wait ran out, or
 * `lockPath` is not a folder (a pipe, a device, a file that is not an older ordercli's lock), and
 * a CancelledError when `signal` fires during the wait.
 */
export async function acquireFileLock(lockPath: string, options: FileLockOptions): Promise<FileLock> {
  const path = resolve(lockPath);
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  if (held.has(path)) {
    throw new UsageError(`${capitalize(options.what)} is already in use by this ordercli process.`);
  }
  const uncheckable = new UncheckableOwnerWait(path, staleMs, waitMs, options);
  for (;;) {
    if (options.signal?.aborted) throw new CancelledError();
    await requireLockFolder(path, options);
    const latest = await readLatest(path, options.what);
    let successor = 1;
    let predecessor: string | undefined;
    if (latest) {
      const verdict = judge(latest.owner);
      if (verdict.kind === 'alive') throw busyError(path, latest.owner, options);
      if (verdict.kind === 'unverifiable' && (await uncheckable.pausedFor(latest, verdict.where))) continue;
      successor = latest.generation + 1;
      predecessor = latest.owner?.token ?? '';
    }
    const me = thisProcess();
    const owner: LockOwner = {
      pid: me.pid,
      startTime: me.start,
      hostname: me.host,
      bootId: me.boot,
      pidNamespace: me.pidns,
      token: randomBytes(12).toString('base64url'),
      staleMs,
      since: new Date().toISOString(),
      command: options.command,
    };
    const ownerFile = join(path, `owner-${successor}.json`);
    if (!(await createRecord(path, ownerFile, owner, options.what))) {
      // Another process took this number first: look again.
      await pause(5 + Math.random() * 20, options.signal);
      continue;
    }
    if (await confirm(path, successor, predecessor)) {
      held.add(path);
      await removeEarlier(path, successor);
      return new FileLock(path, ownerFile, staleMs, options.what);
    }
    await unlink(ownerFile).catch(() => undefined);
    await pause(5 + Math.random() * 20, options.signal);
  }
}

/** The owner's promise (its record's staleMs), or ours for a record that does not say. */
function ownerStaleMs(owner: LockOwner | undefined, staleMs: number): number {
  const promised = owner?.staleMs;
  return typeof promised === 'number' && Number.isFinite(promised) && promised > 0 ? promised : staleMs;
}

/** The owner record with the highest number, or undefined when the lock is free. */
async function readLatest(path: string, what: string): Promise<Latest | undefined> {
  for (;;) {
    let names: string[];
    try {
      names = await readdir(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      throw lockIoError(path, what, error);
    }
    let generation = 0;
    for (const name of names) {
      const match = OWNER_FILE.exec(name);
      if (match) generation = Math.max(generation, Number(match[1]));
    }
    if (generation === 0) return undefined;
    const file = join(path, `owner-${generation}.json`);
    const record = await readRecord(path, file, what);
    // Removed between the listing and the read: the lock changed hands, look again.
    if (!record) continue;
    const { text, info } = record;
    return {
      generation,
      file,
      owner: parseOwner(text),
      fingerprint: `${info.ino}:${info.mtimeMs}:${info.size}:${text}`,
    };
  }
}

/**
 * Reads an owner record and its status (from the open file: on NFS, opening revalidates what the
 * client caches), or undefined when it is gone. Never waits on a pipe nor reads a device.
 */
async function readRecord(
  path: string,
  file: string,
  what: string,
): Promise<{ text: string; info: Stats } | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, OPEN_READ);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw lockIoError(path, what, error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      throw new UsageError(
        `The lock ${path} of ${what} holds ${file}, which is ${fileKind(info)}, not an owner record; nothing was done.`,
        [`If no ordercli uses ${what}, remove the folder ${path} and run the command again.`],
      );
    }
    const buffer = Buffer.alloc(Math.min(info.size, MAX_RECORD_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { text: buffer.toString('utf8', 0, bytesRead), info };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw lockIoError(path, what, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (
      typeof value.pid !== 'number' ||
      typeof value.token !== 'string' ||
      typeof value.hostname !== 'string'
    )
      return undefined;
    return value as LockOwner;
  } catch {
    return undefined;
  }
}

/** The identity `judgeProcess` takes, from a record (of this version or an earlier one). */
function identityOf(owner: LockOwner): Partial<ProcessIdentity> & { pid: number } {
  const identity: Partial<ProcessIdentity> & { pid: number } = { pid: owner.pid, host: owner.hostname };
  if (typeof owner.bootId === 'string' && owner.bootId !== '') identity.boot = owner.bootId;
  if (typeof owner.pidNamespace === 'string' && owner.pidNamespace !== '')
    identity.pidns = owner.pidNamespace;
  if (typeof owner.startTime === 'string') identity.start = owner.startTime;
  return identity;
}

function judge(owner: LockOwner | undefined): ProcessVerdict {
  // A record nobody can read (written by hand?) is judged by its changes only.
  if (!owner) return { kind: 'unverifiable', where: '' };
  const identity = identityOf(owner);
  const me = thisProcess();
  if (
    me.boot === undefined &&
    me.pidns === undefined &&
    identity.boot === undefined &&
    identity.pidns === undefined &&
    identity.host === me.host
  ) {
    // No /proc, here nor where the owner ran: its PID is all there is to check. A PID that exists
    // is alive (it may have been reused: then the lock waits for that process to end).
    return pidExists(owner.pid) ? { kind: 'alive' } : { kind: 'dead', why: 'its process is gone' };
  }
  return judgeProcess(identity);
}

/** Whether a PID names a live process (a zombie has exited: it holds nothing). */
function pidAlive(pid: number): boolean {
  const start = processStartTime(pid);
  if (start !== undefined) return start !== '';
  // No /proc, or one hiding other users' processes: ask the kernel.
  return pidExists(pid);
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates `ownerFile` whole, or returns false when the name is taken. */
async function createRecord(
  path: string,
  ownerFile: string,
  owner: LockOwner,
  what: string,
): Promise<boolean> {
  const temporary = join(path, `.tmp-${owner.token}`);
  for (;;) {
    try {
      await writeFile(temporary, `${JSON.stringify(owner)}\n`, { flag: 'wx', mode: 0o644 });
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw lockIoError(path, what, error);
      // The folder is absent (free, or just released): create it and try again.
      await mkdir(path, { mode: 0o755 }).catch((mkdirError: NodeJS.ErrnoException) => {
        if (mkdirError.code !== 'EEXIST') throw lockIoError(path, what, mkdirError);
      });
    }
  }
  try {
    await link(temporary, ownerFile);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOENT') return false;
    throw lockIoError(path, what, error);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * Our record `generation` holds the lock if no later record exists and the record we took over
 * from is still the one judged (a late process that judged an old owner must not win).
 */
async function confirm(path: string, generation: number, predecessor: string | undefined): Promise<boolean> {
  const names = await readdir(path).catch(() => [] as string[]);
  for (const name of names) {
    const match = OWNER_FILE.exec(name);
    if (match && Number(match[1]) > generation) return false;
  }
  if (generation === 1) return true;
  const record = await readRecord(path, join(path, `owner-${generation - 1}.json`), '').catch(
    () => undefined,
  );
  if (record === undefined) return false;
  return (parseOwner(record.text)?.token ?? '') === predecessor;
}

async function removeEarlier(path: string, generation: number): Promise<void> {
  const names = await readdir(path).catch(() => [] as string[]);
  for (const name of names) {
    const match = OWNER_FILE.exec(name);
    if (match && Number(match[1]) < generation) await unlink(join(path, name)).catch(() => undefined);
  }
}

/**
 * The lock must be a folder (or absent). A pipe or a device there is bad usage, said at once
 * (reading a pipe would wait forever, a device may never end). A file is the lock of an older
 * ordercli (its PID, or nothing if it was killed while creating it): removed when that PID is
 * gone; any other file is not ours to remove. unlink() cannot remove a lock folder, so this never
 * breaks a lock of this version.
 */
async function requireLockFolder(path: string, options: FileLockOptions): Promise<void> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Absent (the lock is free), or its folder is missing (said when the lock is created).
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw lockIoError(path, options.what, error);
  }
  if (info.isDirectory()) return;
  if (!info.isFile()) throw notAFolderError(path, fileKind(info), options);
  const legacy = await readLegacyLock(path, options);
  if (legacy === undefined) return;
  if (legacy === 'not a lock') throw notAFolderError(path, 'a file that is not a lock', options);
  if (legacy > 0 && legacy !== process.pid && pidAlive(legacy)) {
    throw new UsageError(
      `${capitalize(options.what)} is in use by another ordercli (process ${legacy}); ${options.busyAdvice}`,
      [`If no ordercli is running, delete ${path} and run the command again.`],
    );
  }
  await unlink(path).catch(() => undefined);
}

/** The PID in an older ordercli's lock file (0: none yet), 'not a lock', or undefined when gone. */
async function readLegacyLock(
  path: string,
  options: FileLockOptions,
): Promise<number | 'not a lock' | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, OPEN_READ);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // A folder now: a lock of this version was just created.
    if (code === 'EISDIR') return undefined;
    throw lockIoError(path, options.what, error);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) return undefined;
    if (!info.isFile()) throw notAFolderError(path, fileKind(info), options);
    // `<pid>\n`: a few bytes.
    if (info.size > 32) return 'not a lock';
    const buffer = Buffer.alloc(32);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const match = /^\s*(\d*)\s*$/.exec(buffer.toString('latin1', 0, bytesRead));
    return match ? Number(match[1] || 0) : 'not a lock';
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw lockIoError(path, options.what, error);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

function notAFolderError(path: string, kind: string, options: FileLockOptions): UsageError {
  return new UsageError(
    `The lock ${path} of ${options.what} is ${kind}, not a folder, so the lock cannot be taken; nothing was done.`,
    [
      `The lock of a file is the folder beside it named after the file with .lock added: move ${path} away, or choose another file.`,
    ],
  );
}

/** What a path that is not what it should be is, for messages. */

function busyError(path: string, owner: LockOwner | undefined, options: FileLockOptions): UsageError {
  return new UsageError(
    `${capitalize(options.what)} is in use by another ordercli (${ownerText(owner)}, since ${owner?.since ?? 'unknown'}); ${options.busyAdvice}`,
    [`The lock is ${path}; it is released when that process ends.`],
  );
}

function gaveUpError(
  path: string,
  owner: LockOwner | undefined,
  where: string,
  staleMs: number,
  waitMs: number,
  options: FileLockOptions,
): UsageError {
  return new UsageError(
    `${capitalize(options.what)} is locked by ${ownerText(owner)}${where ? ` ${where}` : ''}, which cannot be checked from here, and its lock did not go stale within the ${seconds(waitMs)} waited; nothing was done.`,
    [
      `Wait for it to finish; set ORDERCLI_LOCK_WAIT (seconds) to wait longer. A lock whose record has not changed for ${seconds(staleMs)} is taken over.`,
      `If you are sure no ordercli uses it, remove the folder ${path} and run the command again.`,
    ],
  );
}

function lockIoError(path: string, what: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new UsageError(
    `Cannot take the lock ${path} of ${what} (${code}: ${describeCode(code)}); nothing was done.`,
    [
      code === 'ENOENT' || code === 'ENOTDIR'
        ? 'The folder of the file does not exist: create it, or choose another location.'
        : 'The lock is a folder created beside the file: make that folder writable, or choose another location.',
    ],
  );
}

/** A few words on a file system error code, for one-sentence messages. */
export function describeCode(code: string): string {
  switch (code) {
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EROFS':
      return 'read-only file system';
    case 'EACCES':
      return 'permission denied';
    case 'EPERM':
      return 'operation not permitted';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EFBIG':
      return 'file too large';
    case 'EIO':
      return 'input/output error';
    case 'ENOENT':
      return 'no such file or folder';
    case 'ENOTDIR':
      return 'a part of the path is not a folder';
    case 'EISDIR':
      return 'it is a folder';
    default:
      return 'file system error';
  }
}

function ownerText(owner: LockOwner | undefined): string {
  if (!owner) return 'an ordercli whose lock record cannot be read';
  return `process ${owner.pid}`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** Waits `ms`; a CancelledError (exit 130) once `signal` aborts: the user gave up waiting. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await wait(ms, undefined, { signal });
  } catch (error) {
    if (signal?.aborted) throw new CancelledError();
    throw error;
  }
}
