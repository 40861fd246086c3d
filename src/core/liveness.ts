/**
 * Whether another process is alive, without ever comparing its clock with ours.
 *
 * - A process on this kernel (same boot id) in this PID namespace is judged by its PID and its
 *   start time (/proc/<pid>/stat): gone, or its PID reused by another process, means dead.
 * - Anything else (another PID namespace: a container on a shared volume; another boot or host)
 *   cannot be checked that way. Such an owner keeps a heartbeat (a counter it rewrites every
 *   `HEARTBEAT_MS`); it is alive while the heartbeat keeps changing as seen by the observer, and
 *   dead once the observer has seen no change for `STALE_MS` of its own monotonic clock. The
 *   values are only compared with each other: a clock a day ahead changes nothing.
 *
 * Every claim of the ledger and every file lock names its holder the same way (`Owner`), and keeps
 * its heartbeat the same way when it is a file (`Heartbeat`, `readHeartbeat`, `heartbeatOwner`).
 */
import { randomBytes } from 'node:crypto';
import { constants, readFileSync, readlinkSync, type Stats, writeFileSync } from 'node:fs';
import { open, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often an owner rewrites its heartbeat. */
export const HEARTBEAT_MS = 1_000;
/** How long an observer waits for a heartbeat to change before it judges the owner dead. */
export const STALE_MS = 10_000;

/** Who a process is, as records that other processes judge name it. */
export interface ProcessIdentity {
  /** Host name, for people. */
  host: string;
  /** `/proc/sys/kernel/random/boot_id`: one per running kernel (containers on a host share it). */
  boot?: string;
  /** `readlink /proc/self/ns/pid`: PIDs compare only inside one PID namespace. */
  pidns?: string;
  pid: number;
  /** Start time of the process (clock ticks since boot), to tell a reused PID. */
  start?: string;
}

/** Who holds a claim or a lock: a process, and a random id naming this hold (and its heartbeat). */
export interface Owner extends ProcessIdentity {
  id: string;
}

/** A new owner: this process, with a new id. */
export function newOwner(): Owner {
  return { ...thisProcess(), id: randomBytes(8).toString('hex') };
}

let self: ProcessIdentity | undefined;

/** This process (read once). */
export function thisProcess(): ProcessIdentity {
  if (self) return self;
  const identity: ProcessIdentity = { host: hostname(), pid: process.pid };
  const boot = readOptional(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  const pidns = readOptional(() => readlinkSync('/proc/self/ns/pid'));
  const start = processStartTime('self');
  if (boot) identity.boot = boot;
  if (pidns) identity.pidns = pidns;
  if (start) identity.start = start;
  self = identity;
  return identity;
}

function readOptional(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat; '' for a zombie (it has exited); undefined without /proc or the PID. */
export function processStartTime(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? '' : (fields[19] ?? '');
  } catch {
    return undefined;
  }
}

export type ProcessVerdict =
  | { kind: 'alive' }
  | { kind: 'dead'; why: string }
  /** Not checkable from here: judge by its heartbeat. `where` says why, for messages. */
  | { kind: 'unverifiable'; where: string };

/** Judges a process by its identity alone (no waiting). */
export function judgeProcess(owner: Partial<ProcessIdentity> & { pid: number }): ProcessVerdict {
  const me = thisProcess();
  if (owner.boot === undefined || owner.boot !== me.boot) {
    return {
      kind: 'unverifiable',
      where:
        owner.host !== undefined && owner.host !== me.host
          ? `on host ${owner.host}`
          : 'on another boot or host',
    };
  }
  if (owner.pidns === undefined || owner.pidns !== me.pidns) {
    return { kind: 'unverifiable', where: 'in another PID namespace (a container?)' };
  }
  if (owner.pid === me.pid && owner.start === me.start) return { kind: 'alive' };
  const start = processStartTime(owner.pid);
  if (start === undefined || start === '') return { kind: 'dead', why: 'its process is gone' };
  if (owner.start !== undefined && start !== owner.start) {
    return { kind: 'dead', why: 'its PID now belongs to another process' };
  }
  return { kind: 'alive' };
}

/**
 * Watches a heartbeat until it changes (alive) or has not changed for `staleMs` of this process's
 * monotonic clock (dead). `read` returns the heartbeat's current value, or undefined when it is
 * gone (the owner ended cleanly, or was already judged dead and cleared): dead at once.
 */
export async function observeHeartbeat(
  read: () => Promise<string | undefined>,
  options: { staleMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<'alive' | 'dead'> {
  const staleMs = options.staleMs ?? STALE_MS;
  const pollMs = options.pollMs ?? 200;
  const first = await read();
  if (first === undefined) return 'dead';
  const since = performance.now();
  while (performance.now() - since < staleMs) {
    await sleep(pollMs, undefined, { signal: options.signal });
    const now = await read();
    if (now === undefined) return 'dead';
    if (now !== first) return 'alive';
  }
  return 'dead';
}

/**
 * An owner's heartbeat file: one line of JSON, the owner and last its `beat`, a counter rewritten
 * every HEARTBEAT_MS while started. Rewritten in place (the text only grows: what precedes the
 * counter never changes), never created again: once the file was removed (by a process that judged
 * its owner dead, or by hand) the beats stop and `lost` is set. Observers compare its whole text
 * (`readHeartbeat`) with `observeHeartbeat`; `heartbeatOwner` reads the owner.
 */
export class Heartbeat {
  private beat = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Set when the file was found removed while beating. */
  lost = false;

  constructor(
    readonly path: string,
    private readonly owner: Owner,
  ) {}

  /** The file's text at the current beat (what its owner creates it with). */
  text(): string {
    return `${JSON.stringify({ ...this.owner, beat: this.beat })}\n`;
  }

  /** Beats until stopped, creating the file first unless its owner already did (`create: false`). */
  start(options: { create?: boolean } = {}): void {
    if (options.create !== false) writeFileSync(this.path, this.text(), { mode: 0o600 });
    this.timer = setInterval(() => void this.next(), HEARTBEAT_MS);
    this.timer.unref();
  }

  private async next(): Promise<void> {
    this.beat++;
    try {
      // The counter only grows: the text never gets shorter, so nothing needs truncating.
      await writeFile(this.path, this.text(), { flag: 'r+' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || this.timer === undefined) return;
      this.stopBeating();
      this.lost = true;
    }
  }

  private stopBeating(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Stops beating and removes the file (a file already gone is fine). */
  async stop(): Promise<void> {
    this.stopBeating();
    await rm(this.path, { force: true }).catch(() => undefined);
  }
}

/** Opening never waits: a FIFO opened for reading without O_NONBLOCK waits for a writer forever. */
const OPEN_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * A heartbeat file's text (at most `maxBytes`) and status, or undefined when it is gone. Read from
 * the open file (on NFS, opening revalidates the client's cache), never waiting on a pipe: what is
 * not a regular file has no text.
 */
export async function readHeartbeat(
  path: string,
  maxBytes = 64 * 1024,
): Promise<{ text: string; info: Stats } | undefined> {
  const handle = await open(path, OPEN_READ).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'EISDIR') return undefined;
    throw error;
  });
  if (!handle) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { text: '', info };
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { text: buffer.toString('utf8', 0, bytesRead), info };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** The owner a heartbeat file's text names (its first line), or undefined when it names none. */
export function heartbeatOwner(text: string): (Owner & Record<string, unknown>) | undefined {
  try {
    const owner = JSON.parse(text.split('\n', 1)[0]!) as Owner & Record<string, unknown>;
    const named = typeof owner.pid === 'number' && typeof owner.id === 'string';
    return named && typeof owner.host === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}
