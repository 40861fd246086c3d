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
 * An owner on this host, in this PID namespace, whose PID is gone or now belongs to another
 * process (another start time), is dead: taken over at once. An owner that cannot be checked
 * (another host or PID namespace: a container, a shared volume) is waited for, and taken over once
 * its record has not been touched for its `staleMs`; the wait is bounded (`waitMs`).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { CancelledError, UsageError } from '../core/errors.js';

/** How long an unrefreshed record of an owner that cannot be checked stays valid. */
export const DEFAULT_STALE_MS = 30_000;
/** How long to wait for an owner that cannot be checked before giving up (ORDERCLI_LOCK_WAIT). */
export const DEFAULT_LOCK_WAIT_MS = 60_000;
/** An mtime this much older than our clock is stale whatever the clocks' skew. */
const CLOCK_STALE_FACTOR = 10;
const POLL_MS = 250;

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
    const now = new Date();
    try {
      await utimes(this.ownerFile, now, now);
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

let self: Omit<LockOwner, 'token' | 'staleMs' | 'since' | 'command'> | undefined;

/** This process as an owner record describes it (read once). */
function selfIdentity(): NonNullable<typeof self> {
  self ??= {
    pid: process.pid,
    startTime: processStartTime('self'),
    hostname: hostname(),
    bootId: readOptional(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    pidNamespace: readOptional(() => readlinkSync('/proc/self/ns/pid')),
  };
  return self;
}

function readOptional(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function processStartTime(pid: number | 'self'): string | undefined {
  return readOptional(() => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has exited: it holds nothing.
    return fields[0] === 'Z' ? '' : (fields[19] ?? '');
  });
}

/** ORDERCLI_LOCK_WAIT (seconds) as milliseconds, or the default. */
export function lockWaitFromEnv(env: NodeJS.ProcessEnv): number {
  const value = env.ORDERCLI_LOCK_WAIT;
  if (value === undefined || value === '') return DEFAULT_LOCK_WAIT_MS;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new UsageError(
      `ORDERCLI_LOCK_WAIT must be a number of seconds (0 or more), not ${JSON.stringify(value)}.`,
    );
  }
  return Math.round(seconds * 1000);
}

const OWNER_FILE = /^owner-(\d+)\.json$/;

interface Latest {
  generation: number;
  file: string;
  owner: LockOwner | undefined;
  mtimeMs: number;
}

/** How the current owner stands, seen from here. */
type Verdict = { kind: 'dead'; why: string } | { kind: 'alive' } | { kind: 'unverifiable'; where: string };

/**
 * Takes the lock `lockPath` (a folder), taking over from an owner that is provably dead or whose
 * record went stale; throws a UsageError when a live owner holds it or the wait ran out.
 */
export async function acquireFileLock(lockPath: string, options: FileLockOptions): Promise<FileLock> {
  const path = resolve(lockPath);
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  if (held.has(path)) {
    throw new UsageError(`${capitalize(options.what)} is already in use by this ordercli process.`);
  }
  const started = Date.now();
  let announced = false;
  /** The record being waited for, and since when (our clock) its mtime has not changed. */
  let watched: { token: string; mtimeMs: number; since: number } | undefined;
  for (;;) {
    if (options.signal?.aborted) throw new CancelledError();
    await removeLegacyLockFile(path, options);
    const latest = await readLatest(path, options.what);
    let successor = 1;
    let predecessor: string | undefined;
    if (latest) {
      const verdict = judge(latest, staleMs);
      if (verdict.kind === 'alive') throw busyError(path, latest.owner, options);
      if (verdict.kind === 'unverifiable') {
        const token = latest.owner?.token ?? latest.file;
        if (watched?.token !== token || watched.mtimeMs !== latest.mtimeMs) {
          watched = { token, mtimeMs: latest.mtimeMs, since: Date.now() };
        }
        const ownerStale = latest.owner?.staleMs ?? staleMs;
        const stale =
          Date.now() - watched.since >= ownerStale ||
          Date.now() - latest.mtimeMs >= ownerStale * CLOCK_STALE_FACTOR;
        if (!stale) {
          const waited = Date.now() - started;
          if (waited >= waitMs)
            throw gaveUpError(path, latest.owner, verdict.where, ownerStale, waitMs, options);
          if (!announced) {
            announced = true;
            options.onWait?.(
              `Waiting for the lock ${path} of ${options.what}: ${ownerText(latest.owner)}${verdict.where ? ` ${verdict.where}` : ''} holds it and cannot be checked from here; it is taken over once its record has not been refreshed for ${seconds(ownerStale)}, and this gives up after ${seconds(waitMs)} (ORDERCLI_LOCK_WAIT).`,
            );
          }
          await pause(Math.min(POLL_MS, Math.max(1, waitMs - waited)), options.signal);
          continue;
        }
      }
      successor = latest.generation + 1;
      predecessor = latest.owner?.token ?? '';
    }
    const owner: LockOwner = {
      ...selfIdentity(),
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

/** The owner record with the highest number, or undefined when the lock is free. */
async function readLatest(path: string, what: string): Promise<Latest | undefined> {
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
  try {
    const [text, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    return { generation, file, owner: parseOwner(text), mtimeMs: info.mtimeMs };
  } catch (error) {
    // Removed between the listing and the read: the lock changed hands, look again.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return readLatest(path, what);
    throw lockIoError(path, what, error);
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

function judge(latest: Latest, staleMs: number): Verdict {
  const owner = latest.owner;
  // A record nobody can read (written by hand?) is only ever stale.
  if (!owner) return { kind: 'unverifiable', where: '' };
  const me = selfIdentity();
  if (owner.hostname !== me.hostname) return { kind: 'unverifiable', where: `on host ${owner.hostname}` };
  if (owner.bootId !== me.bootId) {
    return { kind: 'unverifiable', where: 'on a host of the same name (or on this one before it restarted)' };
  }
  if (owner.pidNamespace !== me.pidNamespace) {
    return { kind: 'unverifiable', where: 'in another PID namespace (a container?)' };
  }
  if (owner.pid === me.pid && owner.startTime === me.startTime) return { kind: 'alive' };
  if (me.startTime !== undefined) {
    const startTime = processStartTime(owner.pid);
    if (startTime === undefined || startTime === '') return { kind: 'dead', why: 'its process is gone' };
    if (startTime !== owner.startTime) return { kind: 'dead', why: 'its PID now belongs to another process' };
    return { kind: 'alive' };
  }
  // No /proc: the PID may have been reused, so an alive PID whose record went stale is not trusted.
  if (!pidExists(owner.pid)) return { kind: 'dead', why: 'its process is gone' };
  if (Date.now() - latest.mtimeMs >= (owner.staleMs ?? staleMs)) return { kind: 'dead', why: 'stale' };
  return { kind: 'alive' };
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
  const text = await readFile(join(path, `owner-${generation - 1}.json`), 'utf8').catch(() => undefined);
  if (text === undefined) return false;
  return (parseOwner(text)?.token ?? '') === predecessor;
}

async function removeEarlier(path: string, generation: number): Promise<void> {
  const names = await readdir(path).catch(() => [] as string[]);
  for (const name of names) {
    const match = OWNER_FILE.exec(name);
    if (match && Number(match[1]) < generation) await unlink(join(path, name)).catch(() => undefined);
  }
}

/**
 * A lock of an older ordercli is a file holding a PID: removed when that PID is gone. unlink()
 * cannot remove a lock folder, so this never breaks a lock of this version.
 */
async function removeLegacyLockFile(path: string, options: FileLockOptions): Promise<void> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return;
  }
  const pid = Number.parseInt(text, 10);
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && pidExists(pid)) {
    throw new UsageError(
      `${capitalize(options.what)} is in use by another ordercli (process ${pid}); ${options.busyAdvice}`,
      [`If no ordercli is running, delete ${path} and run the command again.`],
    );
  }
  await unlink(path).catch(() => undefined);
}

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
      `Wait for it to finish; set ORDERCLI_LOCK_WAIT (seconds) to wait longer. A lock not refreshed for ${seconds(staleMs)} is taken over.`,
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

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) {
      fail(new CancelledError());
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      done();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      fail(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
