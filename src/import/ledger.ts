/**
 * The order ledger: what this machine sent to each service and what came of it, written by
 * `orders create` and `orders import` alike and shared by every profile, so that no command
 * creates an order whose externalId another command already created (or may have created).
 *
 * Layout: `<config folder>/ledger/<service>/<shard>.ndjson`, one folder per service (its
 * normalized base URL, readable plus a hash) and 4096 shard files chosen by a hash of the
 * externalId (FNV-1a of its UTF-8 bytes, low 12 bits, as 3 hex digits). Checking one externalId
 * reads one shard; an import reads the shards of its externalIds once each, one at a time.
 * `service.json` in each folder names its base URL. A base URL that may name a service this
 * machine already has a ledger of (`localhost` after `127.0.0.1`, a DNS name after its address:
 * same scheme, port and path, the hosts resolving to a common address) uses that ledger, so
 * that another name for the same service never sends an order twice.
 *
 * Each line is one JSON record whose first key is `externalId`, then `event` (`sending`,
 * `created`, `failed`, `unknown`, `not-sent`, `resolved`), `at`, who wrote it (`by`, with the
 * `input` file and the import's `journal`) and what applies (`bodyHash`, `httpStatus`, `id`,
 * `code`, `message`, `reason`, `resolution`). The last record of an externalId says its state:
 * `created` (or resolved as created) → created; `sending` without an outcome or `unknown` → in
 * doubt; `failed` (or resolved as not created) → not created; `not-sent` restores the state
 * before its `sending`.
 *
 * Writes: each record goes at once, unsynced, to its shard, opened with O_APPEND, in one write()
 * so that processes writing the same shard never interleave inside a line; and to this process's
 * write-ahead log (`wal/<pid>-<id>.ndjson`), an AppendLog whose synced writes the records of all
 * the workers share (group commit). A `sending` record is thus on disk before its promise
 * resolves at the price of one sync a write of the log, not one per shard; the shards are synced
 * at a clean close (then the log is deleted) and when the log grows large (then a new one
 * starts), and a log left by a process that is gone is copied into the shards by the next
 * command that opens the ledger. A kill can still leave a partial last line in a shard, which the
 * next writer's line glues onto: readers find records by their `{"externalId":` start and skip
 * what does not parse.
 */
import { randomUUID } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import {
  close,
  closeSync,
  constants,
  fdatasync,
  mkdir,
  open,
  openSync,
  readdir,
  readFileSync,
  rename,
  unlink,
  write,
  writeSync,
} from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CliError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { normalizeBaseUrl, serviceKey } from '../core/url.js';
import { AppendLog } from '../io/append-log.js';
import { isoNow } from '../io/iso-time.js';

const openAsync = promisify(open);
const writeAsync = promisify(write);
const closeAsync = promisify(close);
const fdatasyncAsync = promisify(fdatasync);
const readdirAsync = promisify(readdir);
const renameAsync = promisify(rename);
const unlinkAsync = promisify(unlink);
/** Past this size, the shards written since are synced and a new write-ahead log starts. */
const WAL_CHECKPOINT_BYTES = 64 << 20;
const mkdirAsync = promisify(mkdir);

export const LEDGER_SHARDS = 4096;
const SHARD_MASK = LEDGER_SHARDS - 1;
const APPEND_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND;
/**
 * Shard files kept open between rounds: an order's outcome goes to the shard its `sending` just
 * went to, so it needs no open() or close() of its own.
 */
const OPEN_SHARDS = 256;
/** Every record starts with these bytes: a reader finds records by them, even glued to a torn one. */
const RECORD_START = Buffer.from('{"externalId":');
const NEWLINE = 0x0a;

export type LedgerEvent = 'sending' | 'created' | 'failed' | 'unknown' | 'not-sent' | 'resolved';

/** Which command wrote a record, and for what. */
export interface LedgerSource {
  by: 'orders create' | 'orders new' | 'orders import' | 'orders resolve';
  /** The input file (absolute), or `(stdin)`. */
  input?: string;
  /** The import's journal (absolute): its own orders are the journal's to decide. */
  journal?: string;
}

/** One line of a shard. */
export interface LedgerRecord extends LedgerSource {
  externalId: string;
  event: LedgerEvent;
  at: string;
  bodyHash?: string;
  httpStatus?: number;
  id?: string | number;
  code?: string;
  message?: string;
  reason?: string;
  resolution?: 'created' | 'not-created';
}

/** What the ledger says of one externalId at one service. */
export type LedgerStatus = 'created' | 'in-doubt' | 'not-created';

export interface LedgerEntry extends LedgerSource {
  status: LedgerStatus;
  /** The record that decided it. */
  event: Exclude<LedgerEvent, 'not-sent'>;
  at: string;
  httpStatus?: number;
  id?: string | number;
  code?: string;
  message?: string;
  reason?: string;
  /** For `sending`: the state before it, which a `not-sent` record restores. */
  previous?: LedgerEntry;
}

export interface OpenLedgerOptions {
  /** Only read (a dry run): the folder is not created, records are refused. */
  readOnly?: boolean;
  /** Past this size of the write-ahead log, a new one starts (default 64 MiB). */
  walCheckpointBytes?: number;
}

/** The folder of one service's ledger inside the config folder. */
export function ledgerFolder(configFolder: string, baseUrl: string): string {
  return join(configFolder, 'ledger', serviceFolderName(normalizeBaseUrl(baseUrl)));
}

const SERVICE_FILE = 'service.json';

/**
 * The ledger of another base URL that may name the same service as `baseUrl` (same scheme, port
 * and path; hosts with an address in common), when this machine has no ledger of `baseUrl` itself.
 */
async function sameServiceLedger(
  configFolder: string,
  baseUrl: string,
): Promise<{ folder: string; baseUrl: string } | undefined> {
  const root = join(configFolder, 'ledger');
  const own = ledgerFolder(configFolder, baseUrl);
  let names: string[];
  try {
    names = await readdirAsync(root);
  } catch {
    return undefined;
  }
  if (names.includes(own.slice(root.length + 1))) return undefined;
  const wanted = serviceKey(baseUrl);
  if (!wanted) return undefined;
  let wantedAddresses: Set<string> | undefined;
  for (const name of names.sort()) {
    const folder = join(root, name);
    let other: string;
    try {
      other = (JSON.parse(await readFile(join(folder, SERVICE_FILE), 'utf8')) as { baseUrl: string }).baseUrl;
    } catch {
      continue;
    }
    const key = serviceKey(other);
    if (!key || key.rest !== wanted.rest) continue;
    wantedAddresses ??= await addressesOf(wanted.host);
    const otherAddresses = await addressesOf(key.host);
    if ([...otherAddresses].some((address) => wantedAddresses!.has(address)))
      return { folder, baseUrl: other };
  }
  return undefined;
}

/** The addresses a host name resolves to (itself for an address); none when it does not resolve. */
async function addressesOf(host: string): Promise<Set<string>> {
  try {
    const found = await dnsLookup(host, { all: true });
    return new Set(found.map((entry) => entry.address));
  } catch {
    return new Set();
  }
}

/** `http_127.0.0.1_4010-1a2b3c4d`: readable enough to find, exact by the hash of the whole URL. */
function serviceFolderName(baseUrl: string): string {
  const readable = baseUrl
    .replace(/^[a-z]+:\/\//i, (scheme) => scheme.slice(0, -3) + '_')
    .replace(/[^A-Za-z0-9.-]+/g, '_')
    .replace(/_+$/, '')
    .slice(0, 80);
  return `${readable}-${fnv1a(Buffer.from(baseUrl, 'utf8'), 0, Buffer.byteLength(baseUrl)).toString(16).padStart(8, '0')}`;
}

/** FNV-1a over bytes `[start, end)`: the shard of an externalId is its low 12 bits. */
function fnv1a(bytes: Buffer, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** The shard file number of an externalId. */
export function shardOf(externalId: string): number {
  const bytes = Buffer.from(externalId, 'utf8');
  return fnv1a(bytes, 0, bytes.length) & SHARD_MASK;
}

export function shardFileName(shard: number): string {
  return `${shard.toString(16).padStart(3, '0')}.ndjson`;
}

export class OrderLedger {
  readonly baseUrl: string;
  /** The base URL of the ledger used when this one may name the same service under another name. */
  sameServiceAs: string | undefined;
  readonly folder: string;
  private readonly source: LedgerSource;
  /** Open shard files, least recently used first. */
  private fds = new Map<number, number>();
  /**
   * This process's write-ahead log: every record goes there, synced, and to its shard unsynced.
   * A machine crash can lose the shards' last records; the next command that opens the ledger
   * copies them back from the logs of processes that are gone.
   */
  private wal: AppendLog | undefined;
  /** Shards written since the current log was started: synced before it is deleted. */
  private unsynced = new Set<number>();
  /** A checkpoint under way (see `checkpoint`). */
  private checkpointing: Promise<void> | undefined;
  private walCheckpointBytes = WAL_CHECKPOINT_BYTES;
  private failure: Error | undefined;
  private closed = false;
  /**
   * What `load` found for the externalIds of an import (other writers' last states only), one
   * tab-separated string a hit (see `encodeHit`), so that a million of them stay small.
   */
  private hits = new Map<string, string>();
  private sources: string[] = [];
  private sourceIndex = new Map<string, number>();
  private counts = { created: 0, inDoubt: 0 };

  private constructor(folder: string, baseUrl: string, source: LedgerSource) {
    this.folder = folder;
    this.baseUrl = baseUrl;
    this.source = source;
  }

  /** Opens (creating its folder) the ledger of the service at `baseUrl` in the config folder. */
  static async open(
    configFolder: string,
    baseUrl: string,
    source: LedgerSource,
    options: OpenLedgerOptions = {},
  ): Promise<OrderLedger> {
    const alias = await sameServiceLedger(configFolder, baseUrl);
    const folder = alias?.folder ?? ledgerFolder(configFolder, baseUrl);
    if (!options.readOnly && !alias) {
      try {
        await mkdirAsync(folder, { recursive: true, mode: 0o700 });
        await writeFile(
          join(folder, SERVICE_FILE),
          `${JSON.stringify({ baseUrl: normalizeBaseUrl(baseUrl) })}\n`,
          { mode: 0o600, flag: 'wx' },
        ).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
      } catch (error) {
        throw new LedgerWriteError(folder, error as Error);
      }
    }
    const ledger = new OrderLedger(folder, normalizeBaseUrl(baseUrl), source);
    ledger.sameServiceAs = alias?.baseUrl;
    ledger.walCheckpointBytes = options.walCheckpointBytes ?? WAL_CHECKPOINT_BYTES;
    ledger.closed = Boolean(options.readOnly);
    if (!options.readOnly) {
      try {
        await recoverLogs(folder);
        ledger.wal = await openWal(folder);
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new LedgerWriteError(folder, error as Error);
      }
    }
    return ledger;
  }

  /** What the ledger says of one externalId (every writer's records); reads one shard. */
  async lookup(externalId: string): Promise<LedgerEntry | undefined> {
    const data = this.readShard(shardOf(externalId));
    if (data === undefined) return undefined;
    const pattern = Buffer.from(`{"externalId":${JSON.stringify(externalId)},`, 'utf8');
    let state: LedgerEntry | undefined;
    for (let at = data.indexOf(pattern); at !== -1; at = data.indexOf(pattern, at + 1)) {
      const record = parseRecordAt(data, at);
      if (record && record.externalId === externalId) state = applyRecord(state, record);
    }
    return state;
  }

  /**
   * Reads what the ledger knows of every externalId of an input, one shard at a time and only
   * the shards they fall in, keeping only those whose last record was not written by `journal`
   * (the import's own orders are its journal's to decide). Then `stateOf` answers from memory;
   * with `countOnly` (a dry run) only `loadedCounts` does.
   */
  async load(
    ids: ReadonlyMap<string, unknown>,
    options: { journal?: string; countOnly?: boolean } = {},
  ): Promise<{ shardsRead: number }> {
    const needed = new Uint8Array(LEDGER_SHARDS);
    for (const id of ids.keys()) needed[shardOf(id)] = 1;
    let shardsRead = 0;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (needed[shard] === 0) continue;
      // A turn of the event loop now and then, so that a Ctrl-C is seen during a long check.
      if (shard % 64 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const data = this.readShard(shard);
      if (data === undefined) continue;
      shardsRead++;
      const states = new Map<string, LedgerEntry>();
      for (let at = data.indexOf(RECORD_START); at !== -1; at = data.indexOf(RECORD_START, at + 1)) {
        // Only the records of the input's ids are parsed whole.
        const id = externalIdAt(data, at + RECORD_START.length);
        if (id === undefined || !ids.has(id)) continue;
        const record = parseRecordAt(data, at);
        if (!record) continue;
        const state = applyRecord(states.get(id), record);
        if (state) states.set(id, state);
        else states.delete(id);
      }
      for (const [id, state] of states) {
        if (options.journal !== undefined && state.journal === options.journal) continue;
        if (state.status === 'created') this.counts.created++;
        else if (state.status === 'in-doubt') this.counts.inDoubt++;
        if (!options.countOnly) this.hits.set(id, this.encodeHit(state));
      }
    }
    return { shardsRead };
  }

  /** After `load`: how many of the input's orders other writers created, or left in doubt. */
  loadedCounts(): { created: number; inDoubt: number } {
    return { ...this.counts };
  }

  /** After `load`: the state other writers left for this externalId, if any. */
  stateOf(externalId: string): LedgerEntry | undefined {
    const hit = this.hits.get(externalId);
    return hit === undefined ? undefined : this.decodeHit(hit);
  }

  /** `status event at source id code httpStatus reason`, tab-separated: some 60 bytes a hit. */
  private encodeHit(entry: LedgerEntry): string {
    const source = JSON.stringify({ by: entry.by, input: entry.input, journal: entry.journal });
    let index = this.sourceIndex.get(source);
    if (index === undefined) {
      index = this.sources.push(source) - 1;
      this.sourceIndex.set(source, index);
    }
    const id = entry.id === undefined ? '' : typeof entry.id === 'number' ? `#${entry.id}` : `s${entry.id}`;
    const clean = (text: string | undefined): string => (text ?? '').replace(/[\t\n]/g, ' ');
    return [
      entry.status,
      entry.event,
      entry.at,
      index,
      clean(id),
      clean(entry.code),
      entry.httpStatus ?? '',
      clean(entry.reason ?? entry.message),
    ].join('\t');
  }

  private decodeHit(hit: string): LedgerEntry {
    const [status, event, at, index, id, code, httpStatus, reason] = hit.split('\t') as string[];
    const entry: LedgerEntry = {
      status: status as LedgerStatus,
      event: event as LedgerEntry['event'],
      at: at!,
      ...(JSON.parse(this.sources[Number(index)]!) as LedgerSource),
    };
    if (id) entry.id = id.startsWith('#') ? Number(id.slice(1)) : id.slice(1);
    if (code) entry.code = code;
    if (httpStatus) entry.httpStatus = Number(httpStatus);
    if (reason) entry.reason = reason;
    return entry;
  }

  /** Records that the order is about to be sent; resolves once that is on disk. */
  sending(externalId: string, bodyHash: string): Promise<void> {
    return this.record({ externalId, event: 'sending', at: isoNow(), ...this.source, bodyHash });
  }

  created(externalId: string, outcome: { httpStatus: number; id?: string | number; code?: string }): void {
    void this.record({ externalId, event: 'created', at: isoNow(), ...this.source, ...outcome });
  }

  failed(externalId: string, outcome: { httpStatus?: number; message: string }): void {
    void this.record({ externalId, event: 'failed', at: isoNow(), ...this.source, ...outcome });
  }

  unknown(externalId: string, reason: string): void {
    void this.record({ externalId, event: 'unknown', at: isoNow(), ...this.source, reason });
  }

  /** The order recorded as `sending` was not sent after all: its earlier state stands. */
  notSent(externalId: string, reason: string): void {
    void this.record({ externalId, event: 'not-sent', at: isoNow(), ...this.source, reason });
  }

  /**
   * A person checked at the service: `created` counts as created from now on; `not-created`
   * clears the doubt, so the order may be sent again. Resolves once on disk.
   */
  resolved(externalId: string, resolution: 'created' | 'not-created', id?: string | number): Promise<void> {
    const record: LedgerRecord = { externalId, event: 'resolved', at: isoNow(), ...this.source, resolution };
    if (id !== undefined) record.id = id;
    return this.record(record);
  }

  /** Resolves once every record so far is on disk. */
  async sync(): Promise<void> {
    if (this.failure) throw this.failure;
    await this.wal?.flush().catch((error: unknown) => Promise.reject(this.fail(error)));
  }

  /** Writes what is pending; records after this are refused. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.checkpointing;
      if (!this.failure) {
        await this.sync();
        // The shards hold every record on disk now: the log is not needed any more.
        await this.syncShards(this.unsynced);
        if (this.wal) await unlinkAsync(this.wal.path);
      }
    } finally {
      this.closed = true;
      const fds = [...this.fds.values()];
      this.fds.clear();
      await Promise.all(fds.map((fd) => closeAsync(fd).catch(() => undefined)));
      await this.wal?.close();
    }
  }

  /**
   * Appends a record to its shard and to the write-ahead log; resolves once it is on disk there.
   * Callers that do not wait need not catch: a failure is reported by the next awaited record.
   */
  private record(record: LedgerRecord): Promise<void> {
    if (this.closed) throw new Error('ledger: record after close');
    if (this.failure) return rejected(this.failure);
    const line = JSON.stringify(record);
    const shard = shardOf(record.externalId);
    try {
      appendAllSync(this.shardFd(shard), Buffer.from(`${line}\n`, 'utf8'));
    } catch (error) {
      return rejected(this.fail(error));
    }
    this.unsynced.add(shard);
    const onDisk = this.wal!.append(line).then(
      () => undefined,
      (error: unknown) => Promise.reject(this.fail(error)),
    );
    if (this.wal!.size > this.walCheckpointBytes && !this.checkpointing)
      this.checkpointing = this.checkpoint();
    return onDisk;
  }

  private fail(error: unknown): Error {
    this.failure ??=
      error instanceof LedgerWriteError ? error : new LedgerWriteError(this.folder, error as Error);
    return this.failure;
  }

  /** Starts a new write-ahead log; once the shards written so far are synced, deletes the old one. */
  private async checkpoint(): Promise<void> {
    try {
      const next = await openWal(this.folder);
      const old = this.wal!;
      const shards = this.unsynced;
      this.wal = next;
      this.unsynced = new Set();
      // A failed write keeps the old log: the next command copies it into the shards.
      try {
        await old.flush();
      } finally {
        await old.close();
      }
      await this.syncShards(shards);
      await unlinkAsync(old.path);
    } catch (error) {
      this.fail(error);
    } finally {
      this.checkpointing = undefined;
    }
  }

  /** Syncs the given shards (a few at a time). */
  private async syncShards(written: Set<number>): Promise<void> {
    const shards = [...written];
    written.clear();
    for (let i = 0; i < shards.length; i += 16) {
      await Promise.all(
        shards.slice(i, i + 16).map(async (shard) => {
          const open = this.fds.get(shard);
          if (open !== undefined) return fdatasyncAsync(open);
          const fd = await openAsync(join(this.folder, shardFileName(shard)), APPEND_FLAGS, 0o600);
          try {
            await fdatasyncAsync(fd);
          } finally {
            await closeAsync(fd);
          }
        }),
      );
    }
  }

  /** The shard's open file, opened for appending if it is not open yet. */
  private shardFd(shard: number): number {
    const open = this.fds.get(shard);
    if (open !== undefined) {
      this.fds.delete(shard);
      this.fds.set(shard, open);
      return open;
    }
    const fd = openSync(join(this.folder, shardFileName(shard)), APPEND_FLAGS, 0o600);
    this.fds.set(shard, fd);
    // Keep the most recently written shards open: an outcome goes to the shard its `sending` did.
    if (this.fds.size > OPEN_SHARDS) {
      const [oldest, oldestFd] = this.fds.entries().next().value!;
      this.fds.delete(oldest);
      closeSync(oldestFd);
    }
    return fd;
  }

  /** Read synchronously: a check reads many small files one after the other, and nothing else waits. */
  private readShard(shard: number): Buffer | undefined {
    const path = join(this.folder, shardFileName(shard));
    try {
      return readFileSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new CliError(
        `Cannot read the order ledger ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}), so nothing was sent.`,
        ExitCode.Failure,
        ['Fix its permissions, then run the command again.'],
      );
    }
  }
}

/** The ledger could not be written: nothing more may be sent. */
export class LedgerWriteError extends CliError {
  constructor(folder: string, cause: Error) {
    super(
      `Cannot write the order ledger in ${folder} (${(cause as NodeJS.ErrnoException).code ?? cause.message}), so nothing more was sent.`,
      ExitCode.Failure,
      ['Free some space or fix the permissions of the config folder, then run the command again.'],
    );
    this.cause = cause;
  }
}

/**
 * Copies into the shards the records of write-ahead logs left by processes that are gone (a kill
 * or a crash before their close), unless the shard already has the line, then removes the log.
 */
async function recoverLogs(folder: string): Promise<void> {
  const wal = join(folder, 'wal');
  let names: string[];
  try {
    names = await readdirAsync(wal);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = Number(
      /^(\d+)(?:-[0-9a-f]+)?\.ndjson(?:\.recovering-(\d+))?$/.exec(name)?.slice(1).filter(Boolean).pop(),
    );
    if (!Number.isInteger(owner) || processAlive(owner)) continue;
    // Claimed by renaming, so that two commands opening the ledger at once do not both copy it.
    const claimed = join(wal, `${name.replace(/\.recovering-\d+$/, '')}.recovering-${process.pid}`);
    try {
      await renameAsync(join(wal, name), claimed);
    } catch {
      continue;
    }
    const data = readFileSync(claimed);
    const byShard = new Map<number, Buffer[]>();
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      const line = data.subarray(start, end + 1);
      start = end + 1;
      const record = parseRecordAt(line, 0);
      if (!record) continue;
      const shard = shardOf(record.externalId);
      const lines = byShard.get(shard);
      if (lines) lines.push(line);
      else byShard.set(shard, [line]);
    }
    for (const [shard, lines] of byShard) {
      const path = join(folder, shardFileName(shard));
      let existing: Buffer = Buffer.alloc(0);
      try {
        existing = readFileSync(path);
      } catch {
        // No shard yet: every line is missing.
      }
      const missing = lines.filter((line) => existing.indexOf(line) === -1);
      if (missing.length === 0) continue;
      const fd = await openAsync(path, APPEND_FLAGS, 0o600);
      try {
        await appendAll(fd, Buffer.concat(missing));
        await fdatasyncAsync(fd);
      } finally {
        await closeAsync(fd);
      }
    }
    await unlinkAsync(claimed);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `appendAll` in the calling thread. */
function appendAllSync(fd: number, buffer: Buffer): void {
  const bytesWritten = writeSync(fd, buffer, 0, buffer.length, null);
  if (bytesWritten < buffer.length) {
    throw Object.assign(new Error('short write (disk full?)'), { code: 'ENOSPC' });
  }
}

/** This process's new write-ahead log in the ledger's `wal` folder. */
async function openWal(folder: string): Promise<AppendLog> {
  const wal = join(folder, 'wal');
  await mkdirAsync(wal, { recursive: true, mode: 0o700 });
  const path = join(wal, `${process.pid}-${randomUUID().slice(0, 8)}.ndjson`);
  // The import journals its orders ahead of their requests: 10 ms rounds let several share a sync.
  return AppendLog.open(path, { what: `the order ledger's log ${path}`, synced: true, roundMs: 10 });
}

function rejected(error: Error): Promise<never> {
  const promise = Promise.reject(error);
  // Callers that do not wait for a record learn of the failure from the next one that they do.
  promise.catch(() => undefined);
  return promise;
}

/** Appends whole lines in one write(): concurrent appenders never interleave inside it. */
async function appendAll(fd: number, buffer: Buffer): Promise<void> {
  const { bytesWritten } = await writeAsync(fd, buffer, 0, buffer.length, null);
  // A short write (disk full) leaves a torn line that readers skip; the rest would not be whole.
  if (bytesWritten < buffer.length) {
    throw Object.assign(new Error('short write (disk full?)'), { code: 'ENOSPC' });
  }
}

/** The JSON string that starts at `start` (an externalId), or undefined when it is not whole. */
function externalIdAt(data: Buffer, start: number): string | undefined {
  if (data[start] !== 0x22) return undefined;
  let escaped = false;
  for (let i = start + 1; i < data.length; i++) {
    const byte = data[i];
    if (byte === 0x5c) {
      escaped = true;
      i++;
    } else if (byte === 0x22) {
      if (!escaped) return data.toString('utf8', start + 1, i);
      try {
        return JSON.parse(data.toString('utf8', start, i + 1)) as string;
      } catch {
        return undefined;
      }
    } else if (byte === NEWLINE) return undefined;
  }
  return undefined;
}

/** The record that starts at `at` and ends at the next newline, or undefined (torn, damaged). */
function parseRecordAt(data: Buffer, at: number): LedgerRecord | undefined {
  const end = data.indexOf(NEWLINE, at);
  // No newline after it: a last line still being written, or torn by a kill.
  if (end === -1) return undefined;
  try {
    const record = JSON.parse(data.toString('utf8', at, end)) as LedgerRecord;
    if (typeof record.externalId !== 'string' || typeof record.event !== 'string') return undefined;
    if (typeof record.at !== 'string') record.at = '';
    return record;
  } catch {
    return undefined;
  }
}

/** The one definition of how a record changes the state of its order. */
function applyRecord(current: LedgerEntry | undefined, record: LedgerRecord): LedgerEntry | undefined {
  const source: LedgerSource = { by: record.by };
  if (record.input !== undefined) source.input = record.input;
  if (record.journal !== undefined) source.journal = record.journal;
  switch (record.event) {
    case 'sending': {
      // A `sending` left without an outcome is in doubt: that is what a later `not-sent` restores.
      const previous: LedgerEntry | undefined =
        current?.event === 'sending'
          ? {
              ...current,
              event: 'unknown',
              previous: undefined,
              reason: 'the command that sent it stopped before the answer',
            }
          : current;
      return { status: 'in-doubt', event: 'sending', at: record.at, ...source, previous };
    }
    case 'created':
    case 'failed':
    case 'unknown': {
      const entry: LedgerEntry = {
        status:
          record.event === 'created' ? 'created' : record.event === 'failed' ? 'not-created' : 'in-doubt',
        event: record.event,
        at: record.at,
        ...source,
      };
      if (record.httpStatus !== undefined) entry.httpStatus = record.httpStatus;
      if (record.id !== undefined) entry.id = record.id;
      if (record.code !== undefined) entry.code = record.code;
      if (record.message !== undefined) entry.message = record.message;
      if (record.reason !== undefined) entry.reason = record.reason;
      return entry;
    }
    case 'resolved': {
      if (record.resolution !== 'created' && record.resolution !== 'not-created') return current;
      const entry: LedgerEntry = {
        status: record.resolution,
        event: 'resolved',
        at: record.at,
        ...source,
      };
      // Resolved as created: the id and code the service had, if the person gave them or they are known.
      if (record.resolution === 'created') {
        const id = record.id ?? current?.id;
        if (id !== undefined) entry.id = id;
        if (record.id === undefined && current?.code !== undefined) entry.code = current.code;
      }
      return entry;
    }
    case 'not-sent':
      if (current?.event !== 'sending') return current;
      return current.previous;
    default:
      // A record of a later version of ordercli: ignored, as it changes nothing this one knows.
      return current;
  }
}

/** `created at 2026-11-23T11:00:00.000Z by orders import of /data/orders.csv (id 10001, code SO-…)` */
export function describeEntry(entry: LedgerEntry): string {
  const who = `${entry.by}${entry.input ? ` of ${entry.input}` : ''}`;
  const ids = [
    entry.id !== undefined ? `id ${entry.id}` : undefined,
    entry.code !== undefined ? `code ${entry.code}` : undefined,
  ].filter(Boolean);
  const what =
    entry.event === 'resolved'
      ? `resolved as ${entry.status === 'created' ? 'created' : 'not created'}`
      : entry.status === 'created'
        ? 'created'
        : entry.event === 'sending'
          ? 'sent with no outcome recorded'
          : entry.event === 'unknown'
            ? `sent with an unknown outcome (${entry.reason ?? 'no answer'})`
            : 'refused';
  return `${what} at ${entry.at} by ${who}${ids.length > 0 ? ` (${ids.join(', ')})` : ''}`;
}
