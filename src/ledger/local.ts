/**
 * The local order ledger (docs/cli-contract.md, "The local ledger"): `<root>/<service>/<shard>.ndjson`,
 * 4096 shards by the FNV-1a hash of the key, shared by every process of the machine. A base URL
 * with no folder of its own that names the service of another folder (service-identity.ts) uses it.
 *
 * Each line is a record (record.ts) starting with `externalId`, appended in one O_APPEND write():
 * every process sees the file's order. A claim holds if, read back up to its own line, it took
 * effect there (a compare-and-swap: `over`). No lock, no clock. Claims (and resolutions, adopted
 * records) also go to this process's write-ahead log `wal/w-<owner>-<id>.ndjson`, one synced write
 * a round; outcomes are neither logged nor synced. Only a crash of the machine loses shard lines:
 * the next command after it (another boot of this host) copies them back from the log.
 * Owners of claims are judged by core/liveness.ts (their heartbeat is `owners/<id>`).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CliError, errorCode, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { hashBytes, KeyTable } from '../core/key-table.js';
import * as liveness from '../core/liveness.js';
import { normalizeBaseUrl } from '../core/url.js';
import { AppendLog } from '../io/append-log.js';
import { fileKind } from '../io/file-kind.js';
import { isoNow } from '../io/iso-time.js';
import { ClaimedNowError, LedgerDamagedError, LedgerWriteError } from './errors.js';
import type { ClaimOwner, LedgerEntry, LedgerRecord, LedgerStatus, Resolution } from './record.js';
import { applyRecord, isFree, refusalOf, settledAsUnknown, stateKey } from './record.js';
import { findSameService } from './service-identity.js';
import type * as store from './store.js';

export const LEDGER_SHARDS = 4096;
const SHARD_MASK = LEDGER_SHARDS - 1;
const { O_RDWR, O_RDONLY, O_CREAT, O_APPEND, O_NONBLOCK } = fs.constants;
/** Shard files kept open from prefetch to claim to outcome (fewer when descriptors run out). */
const OPEN_SHARDS = 2048;
/** At most this many shards written are synced at close, so that the log can go. */
const CLOSE_SYNC_SHARDS = 16;
/** Past this size of the log, the shards written since are synced and a new log starts. */
const WAL_CHECKPOINT_BYTES = 64 << 20;
/** An alive verdict on another namespace's owner is trusted this long before it is watched again. */
const ALIVE_VERDICT_MS = 5_000;
const RECORD_START = Buffer.from('{"externalId":');
const NEWLINE = 0x0a;
const NO_BYTES = Buffer.alloc(0);
const ALL = (): boolean => true;
const IGNORE = (): void => undefined;

/** The folder of one service's ledger under a ledger root: `http_127.0.0.1_4010-1a2b3c4d`. */
export function ledgerFolder(root: string, baseUrl: string): string {
  const normalized = normalizeBaseUrl(baseUrl);
  const readable = normalized
    .replace(/^[a-z]+:\/\//i, (scheme) => `${scheme.slice(0, -3)}_`)
    .replace(/[^A-Za-z0-9.-]+/g, '_')
    .replace(/_+$/, '')
    .slice(0, 80);
  return join(root, `${readable}-${fnv1a(normalized).toString(16).padStart(8, '0')}`);
}

/** The shard of a key: FNV-1a of its UTF-8 bytes, the low 12 bits. */
export function shardOf(externalId: string): number {
  return fnv1a(externalId) & SHARD_MASK;
}

export function shardFileName(shard: number): string {
  return `${shard.toString(16).padStart(3, '0')}.ndjson`;
}

const fnv1a = (text: string, bytes = Buffer.from(text, 'utf8')): number => hashBytes(bytes, 0, bytes.length);

/** Whether a ledger folder exists; what is not a folder (a file, a pipe, a device) is exit 2. */
function checkFolder(path: string): boolean {
  let info: fs.Stats;
  try {
    info = fs.statSync(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw new UsageError(`Cannot open the order ledger ${path} (${errorCode(error)}); nothing was sent.`);
  }
  if (info.isDirectory()) return true;
  throw new UsageError(
    `The order ledger ${path} is ${fileKind(info)}, not a folder, so it cannot keep the record of what was sent; nothing was sent.`,
    ['Name a folder with --ledger <dir>: the ledger keeps its own files there.'],
  );
}

/** A ledger folder that cannot be written (exit 2). */
function notWritable(folder: string, error: unknown): UsageError {
  // A folder not made yet: the one that refused is the nearest that exists.
  const refused = nearestExisting(folder);
  const within = refused === folder ? '' : ` in ${refused}`;
  const message = `Cannot open the order ledger ${folder} for writing (${errorCode(error)}${within}); nothing was sent.`;
  return new UsageError(message, [`Make ${refused} writable, or name another folder with --ledger <dir>.`]);
}

function nearestExisting(folder: string): string {
  while (!fs.existsSync(folder) && dirname(folder) !== folder) folder = dirname(folder);
  return folder;
}

/** The service folders of a ledger root, in the order of their names, by the base URL each names. */
async function serviceFolders(root: string): Promise<Map<string, string>> {
  const folders = new Map<string, string>();
  for (const name of (await readdir(root)).sort()) {
    const text = await readFile(join(root, name, 'service.json'), 'utf8').catch(() => '');
    const baseUrl = (parseJson(text) as { baseUrl?: unknown } | undefined)?.baseUrl;
    if (typeof baseUrl === 'string' && !folders.has(baseUrl)) folders.set(baseUrl, join(root, name));
  }
  return folders;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What this process read of a shard: up to `offset` (`lines` lines); `partial`: see `refresh`. */
type ShardView = { offset: number; lines: number; partial: boolean };
/** A read of a shard applies the records of the keys it wants (`visit`: one at byte `at`). */
type Wanted = (id: string) => boolean;
type Visit = (record: LedgerRecord, at: number) => void;

/*
 * What `table` holds of a key, one number. The low 2 bits: PREFETCHED, and READ (its records in
 * a shard read in part were applied, by the prefetch that read the shard or read for it since).
 * Then what is known (nothing, a state in a slot of `objects`, or a state one record decides
 * alone) and its status; above them the slot's number or that record's byte offset in its shard
 * (read back when asked). An import of a million known orders holds a million numbers in the
 * typed arrays of a KeyTable, not a million objects.
 */
const [PREFETCHED, READ] = [1, 2];
const [NOTHING, OBJECT, RECORD] = [0, 1, 2];
const STATUSES: readonly LedgerStatus[] = ['created', 'in-doubt', 'not-created', 'claimed'];
const known = (kind: number, flags: number, status?: LedgerStatus, offset = 0): number =>
  ((offset * 4 + (status ? STATUSES.indexOf(status) : 0)) * 4 + kind) * 4 + flags;
const flagsOf = (value: number): number => value % 4;
const kindOf = (value: number): number => Math.floor(value / 4) % 4;
const statusOf = (value: number): LedgerStatus => STATUSES[Math.floor(value / 16) % 4]!;
const numberOf = (value: number): number => Math.floor(value / 64);

export class LocalLedger implements store.LedgerStore {
  readonly owner: ClaimOwner = liveness.newOwner();
  private table = new KeyTable();
  /** The states no single record decides (claims, outcomes keeping their claim's details). */
  private readonly objects: (LedgerEntry | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly views = new Map<number, ShardView>();
  /** The open shard files (shard → descriptor), the least recently used first. */
  private readonly fds = new Map<number, number>();
  private fdLimit = OPEN_SHARDS;
  private buffer = Buffer.alloc(0);
  private wal: AppendLog | undefined;
  private unsynced = new Set<number>();
  private checkpointing: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private heartbeat: liveness.Heartbeat | undefined;
  private readonly verdicts = new Map<string, { alive: Promise<boolean>; at: number }>();
  private readonly counts = { created: 0, inDoubt: 0 };
  private claims = 0;
  /** When each claim was made, for its outcome record (read alone, it says when the order was sent). */
  private readonly sentAt = new WeakMap<store.Claim, string>();

  private constructor(
    readonly location: string,
    readonly baseUrl: string,
    private readonly options: store.OpenLedgerOptions,
    readonly sameServiceAs: string | undefined,
  ) {}

  /** Opens (creating it unless read-only) the ledger of the service at `baseUrl` under `root`. */
  static async open(root: string, options: store.OpenLedgerOptions): Promise<LocalLedger> {
    const baseUrl = normalizeBaseUrl(options.baseUrl);
    // Another name of the same service, when this one has no folder of its own.
    const aliased = checkFolder(root) && !fs.existsSync(ledgerFolder(root, baseUrl));
    const folders = aliased ? await serviceFolders(root).catch(() => new Map<string, string>()) : new Map();
    const alias = folders.has(baseUrl) ? baseUrl : await findSameService(baseUrl, [...folders.keys()]);
    const service = alias === undefined ? ledgerFolder(root, baseUrl) : folders.get(alias)!;
    const folder = options.kind === 'orders' ? service : join(service, options.kind);
    const ledger = new LocalLedger(folder, baseUrl, options, alias);
    checkFolder(folder);
    if (options.readOnly) return ledger;
    try {
      await mkdir(join(folder, 'wal'), { recursive: true, mode: 0o700 });
      const [file, text] = [join(service, 'service.json'), `${JSON.stringify({ baseUrl })}\n`];
      if (alias === undefined) await writeFile(file, text, { mode: 0o600, flag: 'wx' }).catch(unlessExists);
      await ledger.recoverLogs();
      await ledger.startHeartbeat();
      ledger.wal = await ledger.openWal();
    } catch (error) {
      await ledger.heartbeat?.stop();
      if (error instanceof CliError) throw error;
      throw notWritable(folder, error);
    }
    return ledger;
  }

  /** What a dry run checks: the ledger's folder, or the nearest one it would be made in, is writable. */
  static probe(root: string, options: store.OpenLedgerOptions): void {
    const folder = nearestExisting(ledgerFolder(root, options.baseUrl));
    try {
      fs.accessSync(folder, fs.constants.W_OK);
    } catch (error) {
      throw notWritable(folder, error);
    }
    if (root !== folder) checkFolder(root);
  }

  /** The services (and kinds) a local ledger root holds records of. */
  static async services(root: string): Promise<store.LedgerService[]> {
    const services: store.LedgerService[] = [];
    for (const [baseUrl, folder] of checkFolder(root) ? await serviceFolders(root) : []) {
      services.push({ baseUrl, kind: 'orders' });
      const contacts = checkFolder(join(folder, 'contact-references'));
      if (contacts) services.push({ baseUrl, kind: 'contact-references' });
    }
    return services;
  }

  /** Removes a service's ledger (every kind) from a local ledger root; how many keys it held. */
  static async forget(root: string, baseUrl: string): Promise<number> {
    const folder = ledgerFolder(root, baseUrl);
    let keys = 0;
    for (const kind of ['orders', 'contact-references'] as const) {
      if (!checkFolder(kind === 'orders' ? folder : join(folder, kind))) continue;
      const source = { by: 'ledger forget' } as const;
      const ledger = await LocalLedger.open(root, { baseUrl, kind, source, readOnly: true });
      keys += (await ledger.list()).length;
      await ledger.close();
    }
    await rm(folder, { recursive: true, force: true });
    return keys;
  }

  async lookup(externalId: string): Promise<LedgerEntry | undefined> {
    return this.latest(externalId);
  }

  async prefetch(keys: Iterable<string> | KeyTable): Promise<void> {
    const indexes = this.markPrefetched(keys);
    // Each shard with keys is read once (a shard read before: for each key, see `refresh`).
    const shards = new Uint8Array(LEDGER_SHARDS);
    for (const index of indexes) shards[this.table.hashAt(index) & SHARD_MASK] = 1;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (shards[shard] === 0) continue;
      // A turn of the event loop now and then, so that a Ctrl-C is seen during a long read.
      if (shard % 64 === 0) await nextTurn();
      this.options.signal?.throwIfAborted();
      if (this.views.has(shard)) shards[shard] = 2;
      else this.refresh(shard, undefined, true);
    }
    for (const index of indexes) {
      const shard = this.table.hashAt(index) & SHARD_MASK;
      if (shards[shard] === 2) this.refresh(shard, this.table.keyAt(index));
      // Read now with the shard: a later partial read of it need not be made for this key.
      else if (!(flagsOf(this.table.valueAt(index)!) & READ))
        this.table.setAt(index, this.table.valueAt(index)! + READ);
      const value = this.table.valueAt(index)!;
      const status = kindOf(value) === NOTHING ? undefined : statusOf(value);
      if (status === 'created') this.counts.created++;
      else if (status === 'claimed' || status === 'in-doubt') this.counts.inDoubt++;
    }
  }

  /** Marks the keys prefetched: the indexes of those that were not. An import's table is taken over. */
  private markPrefetched(keys: Iterable<string> | KeyTable): Uint32Array {
    if (!(keys instanceof KeyTable) || this.table.count > 0) {
      const indexes: number[] = [];
      for (const key of keys) {
        const before = this.table.get(key) ?? 0;
        if (!(flagsOf(before) & PREFETCHED)) indexes.push(this.table.set(key, before + PREFETCHED));
      }
      return Uint32Array.from(indexes);
    }
    this.table = keys;
    const indexes = new Uint32Array(keys.count);
    let taken = 0;
    for (let index = 0; index < keys.count; index++) {
      if (keys.valueAt(index) === undefined) continue;
      keys.setAt(index, known(NOTHING, PREFETCHED));
      indexes[taken++] = index;
    }
    return indexes.subarray(0, taken);
  }

  knows(externalId: string): boolean {
    return kindOf(this.table.get(externalId) ?? 0) !== NOTHING;
  }

  prefetchedCounts(): { created: number; inDoubt: number } {
    return { ...this.counts };
  }

  async claim(request: store.ClaimRequest): Promise<store.ClaimResult> {
    this.checkWritable();
    const { externalId, bodyHash, line } = request;
    // A claim that loses to another process's is decided again on what that one wrote.
    for (;;) {
      const current = this.latest(externalId);
      const refusal = await refusalOf(current, request, () => this.ownerAlive(current!));
      if (refusal && current?.status !== 'claimed') return { claimed: false, refusal };
      if (refusal) {
        // Judging an owner may have waited: what it wrote meanwhile (its outcome) decides.
        const after = this.latest(externalId);
        if (after !== undefined && stateKey(after) === stateKey(current!)) return { claimed: false, refusal };
        continue;
      }
      // Unique across processes (the owner's random id) and within this one (a counter).
      const token = `${this.owner.id.slice(0, 10)}-${(++this.claims).toString(36)}`;
      const [{ source }, owner, at] = [this.options, this.owner, isoNow()];
      const over = isFree(current) ? undefined : stateKey(current!);
      const record = { externalId, event: 'claim', at, token, ...source, owner, bodyHash, over, line };
      const text = JSON.stringify(record);
      this.append(shardOf(externalId), text);
      const now = this.latest(externalId);
      if (now?.status === 'claimed' && now.token === token) {
        await this.toWal(text);
        const claim = { externalId, token, previous: now.previous, bodyHash, line };
        this.sentAt.set(claim, at);
        return { claimed: true, claim };
      }
      this.options.signal?.throwIfAborted();
    }
  }

  readonly created = this.outcome('created');
  readonly failed = this.outcome('failed');
  readonly unknown = this.outcome('unknown');
  readonly notSent = this.outcome('not-sent');

  /**
   * Writes the outcomes of claims with `event`, not synced: one lost in a crash of the machine
   * leaves its claim, in doubt once its owner is gone. It says alone what the order became (with
   * its claim's body hash and line), so a reader need not keep the claim for it.
   */
  private outcome(event: 'created' | 'failed' | 'unknown' | 'not-sent') {
    return (claim: store.Claim, details: Partial<LedgerRecord> | string): void => {
      const [{ externalId, token, bodyHash, line }, { source }, at] = [claim, this.options, isoNow()];
      const fields = typeof details === 'string' ? { reason: details } : details;
      const sentAt = this.sentAt.get(claim);
      const record = { externalId, at, token, ...source, event, ...fields, bodyHash, line, sentAt };
      this.write(record, false).catch(IGNORE);
    };
  }

  validated(externalId: string, validatedAt: string): void {
    const event = 'validated';
    this.write({ externalId, event, at: isoNow(), ...this.options.source, validatedAt }, false).catch(IGNORE);
  }

  async resolved(
    externalId: string,
    resolution: Resolution,
    details: { id?: string | number; code?: string; evidence?: string },
  ): Promise<void> {
    this.checkWritable();
    const current = this.latest(externalId);
    // A person's word never overrides an order that another ordercli is sending right now.
    if (current?.status === 'claimed' && (await this.ownerAlive(current))) {
      throw new ClaimedNowError(externalId, current);
    }
    const [at, { source }, { id, code, evidence }] = [isoNow(), this.options, details];
    // Takes effect only on the state judged here (`over`): a claim that came in meanwhile stands.
    const [event, over] = ['resolved' as const, current && stateKey(current)];
    await this.write({ externalId, event, at, ...source, resolution, over, id, code, evidence });
    const now = this.latest(externalId);
    if (now?.event !== 'resolved' || now.at !== at) {
      throw new UsageError(
        `The order ${JSON.stringify(externalId)} changed in the order ledger while this was being recorded (another ordercli claimed or settled it); nothing was recorded for it.`,
        ['Look at it again with ordercli orders journal, then run the same command again.'],
      );
    }
  }

  async adopt(records: readonly LedgerRecord[]): Promise<void> {
    this.checkWritable();
    // Every record of a key the ledger had no record of (a claim, then its outcome), in order.
    const adopted = new Map<string, boolean>();
    for (const record of records) {
      const { externalId } = record;
      if (!adopted.has(externalId)) this.refresh(shardOf(externalId), externalId);
      if (!adopted.has(externalId)) adopted.set(externalId, !this.knows(externalId));
      if (adopted.get(externalId)) this.write(record).catch(IGNORE);
    }
    await this.sync();
  }

  async list(filter: store.LedgerFilter = {}): Promise<store.ListedEntry[]> {
    const inputs = filter.inputs && new Set(filter.inputs);
    const listed: store.ListedEntry[] = [];
    const limit = filter.limit ?? Number.POSITIVE_INFINITY;
    for (let shard = 0; shard < LEDGER_SHARDS && listed.length < limit; shard++) {
      if (shard % 64 === 0) await nextTurn();
      this.options.signal?.throwIfAborted();
      const states = new Map<string, LedgerEntry>();
      this.eachRecord(shard, this.readShard(shard), 0, ALL, (record) => {
        const state = applyRecord(states.get(record.externalId), record);
        if (state) states.set(record.externalId, state);
        else states.delete(record.externalId);
      });
      for (const [externalId, entry] of states) {
        if (inputs && !inputs.has(entry.input ?? '') && !inputs.has(entry.journal ?? '')) continue;
        // A claim as it stands: being sent by a live owner, or the doubt a dead one left.
        const alive = entry.status !== 'claimed' || (await this.ownerAlive(entry));
        listed.push({ externalId, entry: alive ? entry : settledAsUnknown(entry) });
      }
    }
    return listed.slice(0, limit);
  }

  async openers(): Promise<store.LedgerOpener[]> {
    const folder = join(this.location, 'owners');
    const openers: store.LedgerOpener[] = [];
    for (const name of await readdir(folder).catch(() => [])) {
      const owner = await ownerIn(join(folder, name));
      if (!owner) continue;
      const verdict = owner.id === this.owner.id ? 'alive' : liveness.judgeProcess(owner).kind;
      openers.push({ owner, alive: verdict === 'unverifiable' ? 'unknown' : verdict });
    }
    return openers;
  }

  async sync(): Promise<void> {
    await this.wal?.flush().catch((error: unknown) => Promise.reject(this.fail(error)));
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.checkpointing;
      // After many shards, syncing each would cost more than the command did: the log stays for the
      // next command of this boot to delete (the shards hold its lines), or to copy after a crash.
      if (!this.failure && this.wal) await this.sync();
      if (!this.failure && this.wal && this.unsynced.size <= CLOSE_SYNC_SHARDS) {
        await this.syncShards([...this.unsynced]);
        await unlink(this.wal.path);
      }
    } finally {
      this.closed = true;
      this.closeFds(0);
      await this.wal?.close();
      await this.heartbeat?.stop();
    }
  }

  /** Whether the owner of a claim without outcome is alive, as seen from here. */
  private async ownerAlive({ owner }: LedgerEntry): Promise<boolean> {
    // A `sending` of ordercli before claims names no owner: in doubt.
    if (!owner) return false;
    if (owner.id === this.owner.id) return true;
    const { kind } = liveness.judgeProcess(owner);
    if (kind !== 'unverifiable') return kind === 'alive';
    const seen = this.verdicts.get(owner.id);
    if (seen && performance.now() - seen.at < ALIVE_VERDICT_MS) return seen.alive;
    // A dead verdict stands; an alive one is watched again after a while.
    if (seen && !(await seen.alive)) return false;
    const path = join(this.location, 'owners', owner.id);
    const read = async () => (await liveness.readHeartbeat(path).catch(() => undefined))?.text;
    const alive = liveness.observeHeartbeat(read, { signal: this.options.signal }).then((v) => v === 'alive');
    this.verdicts.set(owner.id, { alive, at: performance.now() });
    return alive;
  }

  private async startHeartbeat(): Promise<void> {
    const folder = join(this.location, 'owners');
    await mkdir(folder, { recursive: true, mode: 0o700 });
    // Heartbeats of processes proven dead (killed before their close) would only cost a wait.
    for (const name of await readdir(folder)) {
      const owner = await ownerIn(join(folder, name));
      const dead = owner && liveness.judgeProcess(owner).kind === 'dead';
      if (dead) await rm(join(folder, name), { force: true });
    }
    this.heartbeat = new liveness.Heartbeat(join(folder, this.owner.id), this.owner);
    this.heartbeat.start();
  }

  private checkWritable(): void {
    if (this.options.readOnly || this.closed)
      throw new Error('ledger: write to a read-only or closed ledger');
    if (this.failure) throw this.failure;
  }

  /**
   * Appends a record to its shard (at once) and, if `logged`, to the write-ahead log: resolves once
   * it is on disk. After a failure nothing more is written; the failure stays for sync() to report.
   */
  private async write(record: LedgerRecord, logged = true): Promise<void> {
    if (this.failure) throw this.failure;
    const text = JSON.stringify(record);
    this.append(shardOf(record.externalId), text);
    if (logged) await this.toWal(text);
  }

  private async toWal(line: string): Promise<void> {
    const onDisk = this.wal!.append(line);
    if (this.wal!.size > WAL_CHECKPOINT_BYTES && !this.checkpointing) this.checkpointing = this.checkpoint();
    await onDisk.catch((error: unknown) => Promise.reject(this.fail(error)));
  }

  /** One write() with O_APPEND: lines of several writers never interleave. */
  private append(shard: number, line: string): void {
    const buffer = Buffer.from(`${line}\n`, 'utf8');
    try {
      const written = this.withShard(shard, true, (fd) => fs.writeSync(fd, buffer, 0, buffer.length, null));
      if (written! < buffer.length)
        throw Object.assign(new Error('short write (disk full?)'), { code: 'ENOSPC' });
    } catch (error) {
      throw this.fail(error);
    }
    this.unsynced.add(shard);
  }

  private fail(error: unknown): Error {
    this.failure ??= error instanceof CliError ? error : new LedgerWriteError(this.location, error as Error);
    return this.failure;
  }

  /** The state of a key, with what every process appended to its shard since it was read. */
  private latest(externalId: string): LedgerEntry | undefined {
    this.refresh(shardOf(externalId), externalId);
    return this.stateOf(externalId);
  }

  /** The state of a key as far as read, its record read back if it is kept as an offset. */
  private stateOf(externalId: string): LedgerEntry | undefined {
    const value = this.table.get(externalId) ?? 0;
    if (kindOf(value) !== RECORD) return kindOf(value) === OBJECT ? this.objects[numberOf(value)] : undefined;
    const record = this.withShard(shardOf(externalId), false, (fd) => readRecordAt(fd, numberOf(value)));
    if (!record) throw new Error(`ledger: the shard of ${externalId} is gone`);
    return settledEntry(record);
  }

  /** Keeps a key's state (undefined: none) as an object, or as the `offset` of the record deciding it. */
  private setState(externalId: string, state: LedgerEntry | undefined, offset?: number): void {
    const before = this.table.get(externalId) ?? 0;
    if (kindOf(before) === OBJECT) {
      this.objects[numberOf(before)] = undefined;
      this.freeSlots.push(numberOf(before));
    }
    const kind = state === undefined ? NOTHING : offset === undefined ? OBJECT : RECORD;
    const number = kind === OBJECT ? (this.freeSlots.pop() ?? this.objects.length) : offset;
    if (kind === OBJECT) this.objects[number!] = state;
    this.table.set(externalId, known(kind, flagsOf(before), state?.status, number));
  }

  /** Applies the records of the shard's bytes from `base`. */
  private applyFrom(base: number): Visit {
    return (record, at) => {
      const current = this.stateOf(record.externalId);
      const state = applyRecord(current, record);
      const decided = state !== undefined && decidedBy(record, state);
      if (state !== current) this.setState(record.externalId, state, decided ? base + at : undefined);
    };
  }

  /**
   * Applies what every process appended to the shard since this one read it. A shard first read
   * for the prefetch (`prefetchedOnly`) is `partial`: the records of other keys were passed over,
   * and are read for one when it is asked for (`key`: it is then marked READ).
   */
  private refresh(shard: number, key?: string, prefetchedOnly = false): void {
    let view = this.views.get(shard);
    if (!view) {
      view = { offset: 0, lines: 0, partial: false };
      this.views.set(shard, view);
      this.readMore(shard, view, prefetchedOnly ? (id) => flagsOf(this.table.get(id) ?? 0) !== 0 : ALL);
      // A shard that does not exist yet has nothing to pass over.
      view.partial = prefetchedOnly && view.offset > 0;
      return;
    }
    if (key !== undefined && view.partial && !(flagsOf(this.table.get(key) ?? 0) & READ)) {
      const wanted = (id: string) => id === key;
      this.eachRecord(shard, this.readShard(shard, view.offset), 0, wanted, this.applyFrom(0));
      this.table.set(key, (this.table.get(key) ?? 0) + READ);
    }
    this.readMore(shard, view, ALL);
  }

  /** Applies the records appended since `view`; a shard cut or replaced since is read again from the start. */
  private readMore(shard: number, view: ShardView, wanted: Wanted): void {
    const cut = this.withShard(shard, true, (fd) => {
      const size = fs.fstatSync(fd).size;
      if (size <= view.offset) return size < view.offset;
      const data = this.bytes(fd, view.offset, size);
      const read = this.eachRecord(shard, data, view.lines, wanted, this.applyFrom(view.offset));
      view.offset += read.bytes;
      view.lines += read.lines;
      return false;
    });
    if (!cut) return;
    for (let index = 0; index < this.table.count; index++) {
      const value = this.table.valueAt(index);
      if (value === undefined || (this.table.hashAt(index) & SHARD_MASK) !== shard) continue;
      this.setState(this.table.keyAt(index), undefined);
    }
    Object.assign(view, { offset: 0, lines: 0, partial: false });
    this.readMore(shard, view, ALL);
  }

  /**
   * Visits the records of `data` (from line `firstLine` of the shard) whose key `wanted` takes; a
   * line that is not a record is damage. Consumes up to the last newline: a torn last line waits.
   */
  private eachRecord(shard: number, data: Buffer, firstLine: number, wanted: Wanted, visit: Visit) {
    let [start, lines] = [0, 0];
    for (let end = data.indexOf(NEWLINE); end !== -1; start = end + 1, end = data.indexOf(NEWLINE, start)) {
      lines++;
      const found = end > start ? recordIn(data, start, end, wanted) : undefined;
      if (found === 'damaged') {
        const text = data.subarray(start, Math.min(end, start + 40));
        const what = text.every((byte) => byte === 0)
          ? 'a line of NUL bytes'
          : `not a ledger record: ${JSON.stringify(text.toString('utf8'))}${end - start > 40 ? '…' : ''}`;
        throw new LedgerDamagedError(this.shardPath(shard), firstLine + lines, what);
      }
      if (found) visit(found.record, found.at);
    }
    return { bytes: start, lines };
  }

  /**
   * Bytes `[from, to)` of a shard, in a buffer that the next read reuses (the callers parse what
   * they need at once): reading 4096 shards into new buffers would leave hundreds of MB to collect.
   */
  private bytes(fd: number, from: number, to: number): Buffer {
    if (this.buffer.length < to - from)
      this.buffer = Buffer.allocUnsafe(Math.max(to - from, 2 * this.buffer.length));
    return this.buffer.subarray(0, fs.readSync(fd, this.buffer, 0, to - from, from));
  }

  /** A shard's bytes up to `to` (else all of them), as `bytes` reads them; none if there is no such shard. */
  private readShard(shard: number, to?: number): Buffer {
    return this.withShard(shard, false, (fd) => this.bytes(fd, 0, to ?? fs.fstatSync(fd).size)) ?? NO_BYTES;
  }

  /**
   * Runs `use` on the shard's file: the one kept open, else (`keep`, for a writer) one opened
   * (created) and kept, else one opened to read; undefined when there is no such shard.
   */
  private withShard<T>(shard: number, keep: boolean, use: (fd: number) => T): T | undefined {
    let fd = this.fds.get(shard);
    // Least recently used first: the one used now goes last.
    if (fd !== undefined) this.fds.delete(shard);
    const kept = fd !== undefined || (keep && !this.options.readOnly && !this.closed);
    fd ??= this.openShard(shard, kept);
    if (fd === undefined) return undefined;
    if (kept) this.fds.set(shard, fd);
    try {
      return use(fd);
    } finally {
      if (!kept) fs.closeSync(fd);
    }
  }

  /** Opens a shard: to keep (a writer's, created), or to read (undefined when it does not exist). */
  private openShard(shard: number, write: boolean): number | undefined {
    const path = this.shardPath(shard);
    let fd: number;
    try {
      fd = fs.openSync(path, write ? O_RDWR | O_CREAT | O_APPEND | O_NONBLOCK : O_RDONLY | O_NONBLOCK, 0o600);
    } catch (error) {
      const code = errorCode(error);
      const before = this.fds.size;
      // Fewer descriptors than kept shards here: keep half as many from now on, and open it again.
      if (code === 'EMFILE' || code === 'ENFILE') this.fdLimit = Math.max(16, before >> 1);
      this.closeFds(this.fdLimit);
      if (this.fds.size < before) return this.openShard(shard, write);
      if (write) throw this.fail(error);
      if (code === 'ENOENT') return undefined;
      const message = `Cannot read the order ledger ${path} (${code}), so nothing was sent.`;
      throw new CliError(message, ExitCode.Failure, ['Fix its permissions, then run the command again.']);
    }
    const info = fs.fstatSync(fd);
    if (info.isFile()) {
      if (write) this.closeFds(this.fdLimit - 1);
      return fd;
    }
    fs.closeSync(fd);
    throw new UsageError(
      `The order ledger file ${path} is ${fileKind(info)}, not a regular file; nothing was sent.`,
      ['Remove it: the ledger writes its own files.'],
    );
  }

  /** Closes the least recently used shard files until `keep` are open. */
  private closeFds(keep: number): void {
    for (const [shard, fd] of this.fds) {
      if (this.fds.size <= keep) return;
      this.fds.delete(shard);
      fs.closeSync(fd);
    }
  }

  private shardPath(shard: number): string {
    return join(this.location, shardFileName(shard));
  }

  private async syncShards(shards: number[]): Promise<void> {
    for (let i = 0; i < shards.length; i += 16) {
      await Promise.all(shards.slice(i, i + 16).map((shard) => appendSynced(this.shardPath(shard))));
    }
  }

  /** Starts a new write-ahead log; once the shards written so far are synced, deletes the old one. */
  private async checkpoint(): Promise<void> {
    try {
      const next = await this.openWal();
      const [old, shards] = [this.wal!, this.unsynced];
      [this.wal, this.unsynced] = [next, new Set()];
      await old.flush().finally(() => old.close());
      await this.syncShards([...shards]);
      await unlink(old.path);
    } catch (error) {
      this.fail(error);
    } finally {
      this.checkpointing = undefined;
    }
  }

  /** This process's new write-ahead log; its first line names the owner. */
  private async openWal(): Promise<AppendLog> {
    const path = join(this.location, 'wal', `w-${this.owner.id}-${randomBytes(4).toString('hex')}.ndjson`);
    const log = await AppendLog.open(path, { what: `the order ledger's log ${path}`, synced: true });
    log.append(JSON.stringify({ wal: 2, owner: this.owner })).catch(IGNORE);
    return log;
  }

  /**
   * Write-ahead logs left behind: one of another boot of this host (the machine restarted) is
   * copied into the shards where lines are missing; one of this boot is not needed (the shards
   * have its lines) and is removed once its owner is proven dead; any other is left. Logs of
   * ordercli before claims (`<pid>-<id>.ndjson`) are copied once their PID is gone.
   */
  private async recoverLogs(): Promise<void> {
    const folder = join(this.location, 'wal');
    const me = liveness.thisProcess();
    for (const name of await readdir(folder)) {
      const path = join(folder, name);
      const legacy = /^(\d+)(?:-[0-9a-f]+)?\.ndjson$/.exec(name);
      const owner = /^w-[0-9a-f]+-[0-9a-f]+\.ndjson$/.test(name) ? await ownerIn(path, true) : undefined;
      const restarted = owner?.boot !== undefined && owner.boot !== me.boot && owner.host === me.host;
      const judged = legacy ? { ...me, pid: Number(legacy[1]), start: undefined } : owner;
      if (!judged || (!restarted && liveness.judgeProcess(judged).kind !== 'dead')) continue;
      // Taken by renaming, so that two commands opening the ledger at once do not both copy it.
      const taken = `${path}.recovering-${this.owner.id}`;
      if (!(await rename(path, taken).then(ALL, () => false))) continue;
      if (legacy || restarted) await this.copyMissingLines(await readFile(taken));
      await unlink(taken);
    }
  }

  private async copyMissingLines(data: Buffer): Promise<void> {
    const byShard = new Map<number, Buffer[]>();
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; start = end + 1, end = data.indexOf(NEWLINE, start)) {
      const line = data.subarray(start, end + 1);
      const id = startsRecord(line, 0, end - start) ? keyAt(line, 0, end - start) : undefined;
      if (id === undefined) continue;
      if (!byShard.has(shardOf(id))) byShard.set(shardOf(id), []);
      byShard.get(shardOf(id))!.push(line);
    }
    for (const [shard, lines] of byShard) {
      const existing = this.readShard(shard);
      const data = Buffer.concat(lines.filter((line) => !existing.includes(line)));
      if (data.length > 0) await appendSynced(this.shardPath(shard), data);
    }
  }
}

function unlessExists(error: unknown): void {
  if (errorCode(error) !== 'EEXIST') throw error;
}

/** Appends `data` (or nothing) to a file, and syncs it. */
async function appendSynced(path: string, data?: Buffer): Promise<void> {
  const handle = await open(path, 'a', 0o600);
  try {
    if (data) await handle.appendFile(data);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/**
 * The owner a heartbeat file names (one line with its beat, or the two lines of earlier releases),
 * or (`wal`) the first line of a write-ahead log.
 */
async function ownerIn(path: string, wal = false): Promise<ClaimOwner | undefined> {
  const text = (await liveness.readHeartbeat(path).catch(() => undefined))?.text ?? '';
  if (wal) return (parseJson(text.split('\n', 1)[0]!) as { owner?: ClaimOwner } | undefined)?.owner;
  const owner = liveness.heartbeatOwner(text);
  if (owner) delete owner.beat;
  return owner;
}

/** The state one settled record gives on its own: what a record's offset stands for. */
function settledEntry(record: LedgerRecord & { sentAt?: string }): LedgerEntry | undefined {
  const { token, sentAt, ...rest } = record;
  const entry = applyRecord(undefined, rest);
  if (entry !== undefined && token !== undefined) entry.token = token;
  if (entry !== undefined && sentAt !== undefined) entry.sentAt = sentAt;
  return entry;
}

const SETTLED_FIELDS = [
  ...'status event at token by input journal bodyHash'.split(' '),
  ...'httpStatus id code message reason evidence resolved sentAt'.split(' '),
];

/** Whether `state` is what `record` gives on its own, so that its offset can stand for it. */
function decidedBy(record: LedgerRecord, state: LedgerEntry): boolean {
  if (state.status === 'claimed' || ['claim', 'sending', 'not-sent'].includes(record.event)) return false;
  const alone = settledEntry(record) as Record<string, unknown> | undefined;
  const wanted = state as unknown as Record<string, unknown>;
  // An outcome of an earlier release does not say when its claim was made: that is not kept.
  const same = (field: string) => alone?.[field] === wanted[field] || (field === 'sentAt' && !alone?.sentAt);
  return alone !== undefined && SETTLED_FIELDS.every(same);
}

/**
 * The record of the line `[start, end)` if `wanted` takes its key; undefined if not; 'damaged'
 * if the line is not a record. A record written after a torn one (a full disk, a crash) is glued
 * onto it: a line that starts as a record and ends with a whole one is that record.
 */
function recordIn(data: Buffer, start: number, end: number, wanted: Wanted) {
  if (!startsRecord(data, start, end) || data[end - 1] !== 0x7d) return 'damaged';
  const glued = data.lastIndexOf(RECORD_START, end - 1);
  for (const at of glued > start ? [start, glued] : [start]) {
    const id = keyAt(data, at, end);
    if (id === undefined) continue;
    // Passed over without a parse (only its shape is checked), unless it may be glued.
    if (!wanted(id) && !(at === start && glued > start)) return undefined;
    const record = parseJson(data.toString('utf8', at, end)) as LedgerRecord | undefined;
    if (record !== undefined && !wanted(id)) return undefined;
    if (typeof record?.event !== 'string' || typeof record.externalId !== 'string') continue;
    if (typeof record.at !== 'string') record.at = '';
    return { record, at };
  }
  return 'damaged';
}

/** Whether the bytes `[start, end)` begin with `{"externalId":`. */
function startsRecord(data: Buffer, start: number, end: number): boolean {
  const length = RECORD_START.length;
  return end - start > length && data.compare(RECORD_START, 0, length, start, start + length) === 0;
}

/** The key of the record that starts at `at`: the JSON string after `{"externalId":`, ending before `end`. */
function keyAt(data: Buffer, at: number, end: number): string | undefined {
  const start = at + RECORD_START.length;
  let escaped = false;
  for (let i = start + 1; data[start] === 0x22 && i < end; i++) {
    if (data[i] === 0x5c) [escaped, i] = [true, i + 1];
    else if (data[i] === 0x22) {
      const text = data.toString('utf8', start, i + 1);
      return escaped ? (parseJson(text) as string | undefined) : text.slice(1, -1);
    }
  }
  return undefined;
}

/** The record that starts at `offset` of a shard. */
function readRecordAt(fd: number, offset: number): LedgerRecord {
  for (let length = 1024; ; length *= 4) {
    const buffer = Buffer.allocUnsafe(length);
    const read = fs.readSync(fd, buffer, 0, length, offset);
    const end = buffer.subarray(0, read).indexOf(NEWLINE);
    const record = end === -1 ? undefined : (JSON.parse(buffer.toString('utf8', 0, end)) as LedgerRecord);
    if (record) return Object.assign(record, { at: typeof record.at === 'string' ? record.at : '' });
    if (read < length) throw new Error(`ledger: no whole record at ${offset}`);
  }
}
