/**
 * One writer per file (the forwarding queue, the sandbox's --data journal): two would deliver an
 * event, or record a change, twice.
 *
 * The lock of `<file>` is the folder `<file>.lock` holding owner records `owner-<n>.json`, the
 * highest `n` being the owner. A record is a heartbeat file of core/liveness.ts (a line of JSON: the
 * `Owner`, `since`, `command`, a `beat` rewritten every HEARTBEAT_MS), created whole and exclusively:
 * written to a temporary file, then hard-linked to its name, which fails if the name exists. Taking
 * over from owner `n` means creating `owner-<n+1>.json`: only one process can, so two that both
 * judge the same owner gone never both win; the winner then checks that record `n` is still the
 * one it judged (its id) and that no later record exists, and removes the records below its own.
 *
 * Owners are judged as the ledger's are: `judgeProcess` on this kernel and PID namespace (a dead
 * one is taken over at once, a live one is exit 2), else `observeHeartbeat` (taken over once this
 * process has seen the record unchanged for STALE_MS of its monotonic clock; clocks are never
 * compared). A record of ordercli 0.1.0 (`hostname`, `bootId`, … `token`; its mtime touched, not
 * its beat) is judged the same way.
 */

import { link, mkdir, readdir, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { parseDuration } from '../config/duration.js';
import { CancelledError, errorCode, UsageError } from '../core/errors.js';
import * as liveness from '../core/liveness.js';
import { codeWords } from './code-words.js';
import { fileKind } from './file-kind.js';
import { capitalize } from './quote.js';

/** How long to wait for an owner that cannot be checked before giving up (ORDERCLI_LOCK_WAIT). */
export const DEFAULT_LOCK_WAIT_MS = 60_000;
const OWNER_FILE = /^owner-(\d+)\.json$/;

/** What an owner record says (besides its `beat`). */
export interface LockRecord extends liveness.Owner {
  since: string;
  /** What holds the lock, for people reading the record. */
  command?: string;
}

export interface FileLockOptions {
  /** The locked file as the user knows it, for messages ("the forwarding queue x.ndjson"). */
  what: string;
  /** What to tell the user to do when a live owner holds the lock. */
  busyAdvice: string;
  /** Longest wait for an owner that cannot be checked (default DEFAULT_LOCK_WAIT_MS). */
  waitMs?: number;
  /** How long a record that cannot be checked may stay unchanged (default STALE_MS; for tests). */
  staleMs?: number;
  /** Told once, when the lock is waited for. */
  onWait?: (message: string) => void;
  /** Ends a wait (Ctrl-C). */
  signal?: AbortSignal;
  /** Written in the record. */
  command?: string;
}

/** A lock this process holds: its record beats until it is released. */
export class FileLock {
  constructor(
    readonly path: string,
    private readonly heartbeat: liveness.Heartbeat,
    private readonly what: string,
  ) {}

  /** Set when the record was removed under us (by hand, or taken over after a long stall). */
  get lost(): Error | undefined {
    if (!this.heartbeat.lost) return undefined;
    return new UsageError(
      `The lock ${this.path} of ${this.what} was removed while this ordercli held it, so it stopped writing.`,
      ['Make sure no other ordercli uses the same file, then run the command again.'],
    );
  }

  /** Removes the record and the lock folder (a record already gone is fine). */
  async release(): Promise<void> {
    await this.heartbeat.stop();
    await rmdir(this.path).catch(() => undefined);
  }
}

/** ORDERCLI_LOCK_WAIT in ms, or the default: a duration (`90s`, `2m`), a bare number in seconds. */
export function lockWaitFromEnv(env: NodeJS.ProcessEnv): number {
  const value = env.ORDERCLI_LOCK_WAIT;
  if (value === undefined || value === '') return DEFAULT_LOCK_WAIT_MS;
  return parseDuration(value, { name: 'ORDERCLI_LOCK_WAIT', bare: 's', maxMs: 7 * 86_400_000 });
}

/** The owner record with the highest number. */
interface Latest {
  generation: number;
  owner: LockRecord | undefined;
  /** Changes when its owner beats (content) or touches it (mtime): compared, never with a clock. */
  fingerprint: string;
}

/**
 * Takes the lock `lockPath` (a folder), taking over from an owner that is provably dead or whose
 * record stopped changing; throws a UsageError when a live owner holds it, the wait ran out, or
 * `lockPath` is not a folder (a pipe, a device, a file), a CancelledError when `signal` fires.
 */
export async function acquireFileLock(lockPath: string, options: FileLockOptions): Promise<FileLock> {
  const path = resolve(lockPath);
  const watch = watcher(path, options);
  for (;;) {
    if (options.signal?.aborted) throw new CancelledError();
    await requireLockFolder(path, options);
    let latest = await readLatest(path, options.what);
    const owner = latest?.owner;
    // A record nobody can read (written by hand?) is judged by its changes only.
    const verdict = owner ? liveness.judgeProcess(owner) : undefined;
    if (owner && verdict?.kind === 'alive') throw busyError(path, owner, options);
    if (latest && verdict?.kind !== 'dead') {
      // Watched until it stops changing (then taken over), or changes or goes (look again).
      latest = await watch(latest, verdict?.kind === 'unverifiable' ? verdict.where : '');
      if (!latest) continue;
    }
    const lock = await takeOver(path, latest, options);
    if (lock) return lock;
    // Another process took this number first: look again (a signal is seen at the top).
    await wait(5 + Math.random() * 20);
  }
}

/**
 * Watches owners that cannot be checked from here, within `waitMs` of the first call: resolves
 * with the record to take over once it has not changed for `staleMs`, or undefined once it changed.
 */
function watcher(path: string, options: FileLockOptions) {
  const { what, onWait, signal } = options;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  const staleMs = options.staleMs ?? liveness.STALE_MS;
  const deadline = performance.now() + waitMs;
  let announced = false;
  return async (latest: Latest, where: string): Promise<Latest | undefined> => {
    const owner = `${ownerText(latest.owner)}${where ? ` ${where}` : ''}`;
    const left = deadline - performance.now();
    if (left <= 0) throw gaveUpError(path, owner, staleMs, waitMs, options);
    if (!announced) {
      announced = true;
      onWait?.(
        `Waiting for the lock ${path} of ${what}: ${owner} holds it and cannot be checked from here; it is taken over once its record has not changed for ${seconds(staleMs)}, and this gives up after ${seconds(waitMs)} (ORDERCLI_LOCK_WAIT).`,
      );
    }
    const timeout = AbortSignal.timeout(Math.ceil(left));
    let seen: Latest | undefined = latest;
    const read = async () => {
      seen = await readLatest(path, what);
      return seen?.fingerprint;
    };
    try {
      const within = signal ? AbortSignal.any([signal, timeout]) : timeout;
      const verdict = await liveness.observeHeartbeat(read, { staleMs, signal: within });
      // Unchanged for staleMs: taken over, if it is still the owner judged (else judged again).
      return verdict === 'dead' && seen?.generation === latest.generation ? seen : undefined;
    } catch (error) {
      if (signal?.aborted) throw new CancelledError();
      throw timeout.aborted ? gaveUpError(path, owner, staleMs, waitMs, options) : error;
    }
  };
}

/** The owner record with the highest number, or undefined when the lock is free. */
async function readLatest(path: string, what: string): Promise<Latest | undefined> {
  for (;;) {
    const names = await readdir(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw lockIoError(path, what, error);
    });
    const generation = Math.max(0, ...names.map(generationOf));
    if (generation === 0) return undefined;
    const latest = await readRecord(path, generation, what);
    // Removed between the listing and the read: the lock changed hands, look again.
    if (latest) return latest;
  }
}

/** Record `generation`, or undefined when it is gone. */
async function readRecord(path: string, generation: number, what: string): Promise<Latest | undefined> {
  const file = join(path, `owner-${generation}.json`);
  const record = await liveness.readHeartbeat(file).catch((error) => {
    throw lockIoError(path, what, error);
  });
  if (!record) return undefined;
  const { text, info } = record;
  if (!info.isFile()) {
    throw new UsageError(
      `The lock ${path} of ${what} holds ${file}, which is ${fileKind(info)}, not an owner record; nothing was done.`,
      [`If no ordercli uses ${what}, remove the folder ${path} and run the command again.`],
    );
  }
  const fingerprint = `${generation}:${info.ino}:${info.mtimeMs}:${info.size}:${text}`;
  return { generation, owner: parseRecord(text), fingerprint };
}

function generationOf(name: string): number {
  return Number(OWNER_FILE.exec(name)?.[1] ?? 0);
}

/** The owner line of a record, of this version or of 0.1.0 (then mapped); or undefined. */
function parseRecord(text: string): LockRecord | undefined {
  const current = liveness.heartbeatOwner(text);
  if (current) return { ...current, since: String(current.since ?? '') };
  let old: Record<string, unknown>;
  try {
    old = JSON.parse(text) ?? {};
  } catch {
    return undefined;
  }
  const field = (name: string) => (typeof old[name] === 'string' && old[name] !== '' ? old[name] : undefined);
  const names = ['hostname', 'token', 'since', 'bootId', 'pidNamespace', 'startTime'];
  const [host, id, since, boot, pidns, start] = names.map(field);
  if (typeof old.pid !== 'number' || host === undefined || id === undefined) return undefined;
  return { host, boot, pidns, pid: old.pid, start, id, since: since ?? '' };
}

/** Creates record `n + 1` after `latest` (n), and holds the lock if it is still the latest. */
async function takeOver(path: string, latest: Latest | undefined, options: FileLockOptions) {
  const { what, command } = options;
  const generation = (latest?.generation ?? 0) + 1;
  const record: LockRecord = { ...liveness.newOwner(), since: new Date().toISOString(), command };
  const heartbeat = new liveness.Heartbeat(join(path, `owner-${generation}.json`), record);
  await mkdir(path, { mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw lockIoError(path, what, error);
  });
  // Created whole: written to a temporary file, then linked to its name (which fails if it exists).
  const temporary = join(path, `.tmp-${record.id}`);
  try {
    await writeFile(temporary, heartbeat.text(), { flag: 'wx', mode: 0o644 });
    await link(temporary, heartbeat.path);
  } catch (error) {
    // Taken, or the folder was removed since (released): look again.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOENT') return undefined;
    throw lockIoError(path, what, error);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  if (!(await confirm(path, generation, latest?.owner?.id ?? ''))) {
    await heartbeat.stop();
    return undefined;
  }
  heartbeat.start({ create: false });
  for (const name of await readdir(path).catch(() => [] as string[])) {
    const earlier = generationOf(name);
    if (earlier > 0 && earlier < generation) await unlink(join(path, name)).catch(() => undefined);
  }
  return new FileLock(path, heartbeat, what);
}

/**
 * Our record `generation` holds the lock if no later record exists and the record we took over
 * from is still the one judged (a late process that judged an old owner must not win).
 */
async function confirm(path: string, generation: number, predecessor: string): Promise<boolean> {
  const names = await readdir(path).catch(() => [] as string[]);
  if (names.some((name) => generationOf(name) > generation)) return false;
  if (generation === 1) return true;
  const before = await readRecord(path, generation - 1, '').catch(() => undefined);
  return before !== undefined && (before.owner?.id ?? '') === predecessor;
}

/**
 * The lock must be a folder (or absent): anything else is bad usage, said at once and left alone
 * (reading a pipe would wait forever, a device may never end, a file is not ours to remove).
 */
async function requireLockFolder(path: string, options: FileLockOptions): Promise<void> {
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    // Absent (the lock is free), or its folder is missing (said when the lock is created).
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw lockIoError(path, options.what, error);
  });
  if (info?.isDirectory() !== false) return;
  throw new UsageError(
    `The lock ${path} of ${options.what} is ${info.isFile() ? 'a file that is not a lock' : fileKind(info)}, not a folder, so the lock cannot be taken; nothing was done.`,
    [
      `The lock of a file is the folder beside it named after the file with .lock added: move ${path} away, or choose another file.`,
    ],
  );
}

function busyError(path: string, owner: LockRecord, options: FileLockOptions): UsageError {
  // Alive, on this kernel and in this PID namespace, with our PID: this very process.
  if (owner.pid === process.pid) {
    return new UsageError(`${capitalize(options.what)} is already in use by this ordercli process.`);
  }
  return new UsageError(
    `${capitalize(options.what)} is in use by another ordercli (${ownerText(owner)}, since ${owner.since || 'unknown'}); ${options.busyAdvice}`,
    [`The lock is ${path}; it is released when that process ends.`],
  );
}

function gaveUpError(path: string, owner: string, staleMs: number, waitMs: number, options: FileLockOptions) {
  return new UsageError(
    `${capitalize(options.what)} is locked by ${owner}, which cannot be checked from here, and its lock did not go stale within the ${seconds(waitMs)} waited; nothing was done.`,
    [
      `Wait for it to finish; set ORDERCLI_LOCK_WAIT (seconds) to wait longer. A lock whose record has not changed for ${seconds(staleMs)} is taken over.`,
      `If you are sure no ordercli uses it, remove the folder ${path} and run the command again.`,
    ],
  );
}

function lockIoError(path: string, what: string, error: unknown): UsageError {
  const code = errorCode(error);
  return new UsageError(`Cannot take the lock ${path} of ${what} (${codeWords(code)}); nothing was done.`, [
    code === 'ENOENT' || code === 'ENOTDIR'
      ? 'The folder of the file does not exist: create it, or choose another location.'
      : 'The lock is a folder created beside the file: make that folder writable, or choose another location.',
  ]);
}

function ownerText(owner: LockRecord | undefined): string {
  return owner ? `process ${owner.pid}` : 'an ordercli whose lock record cannot be read';
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
