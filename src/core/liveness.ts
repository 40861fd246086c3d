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
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often an owner rewrites its heartbeat. */
export const HEARTBEAT_MS = 1_000;
/** How long an observer waits for a heartbeat to change before it judges the owner dead. */
export const STALE_MS = 10_000;

/** Who a process is, as records that other processes judge name it. */
export interface ProcessIdentity {
  host: string;
  boot?: string;
  pidns?: string;
  pid: number;
  start?: string;
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
