/**
 * The local order ledger (docs/cli-contract.md, "The local ledger"): shard files in a folder of
 * this machine (the config folder's `ledger/`, or `--ledger <dir>`), shared by every process.
 *
 * `<root>/<service>/<shard>.ndjson`: a folder per service (`service.json` names its base URL;
 * contact references in its `contact-references/` subfolder), 4096 shards by the FNV-1a hash of
 * the key. A base URL with no folder of its own that names a service of another folder
 * (service-identity.ts) uses that folder.
 *
 * Each line is a record (record.ts) starting with `externalId`, appended with O_APPEND in one
 * write(), so every process sees one order: the file's. A process appends its claim and reads the
 * shard up to its line: the claim holds if it took effect there (compare-and-swap). No lock, no
 * clock. A line that is not a record anywhere but at the end is damage (exit 2).
 *
 * Durability: claims (and resolutions, adopted records) also go to this process's write-ahead log
 * `wal/w-<owner>-<id>.ndjson`, whose synced rounds they share. Outcomes are neither logged nor
 * synced. The shards are in the page cache at once; only a crash of the machine loses lines, and
 * the next command after it (another boot of this host) copies them back from the log. A log of
 * this boot goes at close (after few shards) or once its owner is proven dead.
 *
 * Owners of claims are judged by core/liveness.ts: PID and start time in this PID namespace, else
 * their heartbeat `owners/<id>` changing on our own clock.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CliError, errorCode, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { hashBytes, KeyTable } from '../core/key-table.js';
import {
  Heartbeat,
  heartbeatOwner,
  judgeProcess,
  newOwner,
  observeHeartbeat,
  readHeartbeat,
  thisProcess,
} from '../core/liveness.js';
import { normalizeBaseUrl } from '../core/url.js';
import { AppendLog } from '../io/append-log.js';
import { fileKind } from '../io/file-kind.js';
import { isoNow } from '../io/iso-time.js';
import { ClaimedNowError, LedgerDamagedError, LedgerWriteError } from './errors.js';
import {
  applyRecord,
  type ClaimOwner,
  isFree,
  type LedgerEntry,
  type LedgerRecord,
  type LedgerStatus,
  type Resolution,
  settledAsUnknown,
  stateKey,
} from './record.js';
import { findSameService } from './service-identity.js';
import type {
  Claim,
  ClaimRefusal,
  ClaimRequest,
  ClaimResult,
  LedgerFilter,
  LedgerOpener,
  LedgerService,
  LedgerStore,
  ListedEntry,
  OpenLedgerOptions,
} from './store.js';

export const LEDGER_SHARDS = 4096;
const SHARD_MASK = LEDGER_SHARDS - 1;
/** A writer reads and appends through one file (never waiting on a pipe). */
const WRITE_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_APPEND | constants.O_NONBLOCK;
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;
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
const ALL = (): boolean => true;

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

function fnv1a(text: string): number {
  const bytes = Buffer.from(text, 'utf8');
  return hashBytes(bytes, 0, bytes.length);
}

/** Whether a ledger folder exists; what is not a folder (a file, a pipe, a device) is exit 2. */
function checkFolder(path: string): boolean {
  try {
    const info = statSync(path);
    if (info.isDirectory()) return true;
    throw new UsageError(
      `The order ledger ${path} is ${fileKind(info)}, not a folder, so it cannot keep the record of what was sent; nothing was sent.`,
      ['Name a folder with --ledger <dir>: the ledger keeps its own files there.'],
    );
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (errorCode(error) === 'ENOENT') return false;
    throw new UsageError(`Cannot open the order ledger ${path} (${errorCode(error)}); nothing was sent.`);
  }
}

/** The service folders of a ledger root, in the order of their names, by the base URL each names. */
async function serviceFolders(root: string): Promise<Map<string, string>> {
  const folders = new Map<string, string>();
  for (const name of (await readdir(root)).sort()) {
    const folder = join(root, name);
    const baseUrl = await readFile(join(folder, 'service.json'), 'utf8')
      .then((text) => (JSON.parse(text) as { baseUrl?: unknown }).baseUrl)
      .catch(() => undefined);
    if (typeof baseUrl === 'string' && !folders.has(baseUrl)) folders.set(baseUrl, folder);
  }
  return folders;
}

/** The ledger of another name of the same service, when `baseUrl` has no folder of its own. */
async function sameServiceLedger(
  root: string,
  baseUrl: string,
): Promise<{ folder: string; baseUrl: string } | undefined> {
  if (!checkFolder(root) || existsSync(ledgerFolder(root, baseUrl))) return undefined;
  const folders = await serviceFolders(root).catch(() => new Map<string, string>());
  const other = folders.has(baseUrl) ? baseUrl : await findSameService(baseUrl, [...folders.keys()]);
  return other === undefined ? undefined : { folder: folders.get(other)!, baseUrl: other };
}

/** How far this process has read a shard. */
interface ShardView {
  /** The end of the last complete line read, and how many lines that is (for messages). */
  offset: number;
  lines: number;
  /**
   * Read for the prefetched keys only: records before the first `offset` of other keys were passed
   * over (read for a key when it is asked, which is then marked READ). Later ones apply to all.
   */
  partial: boolean;
}

/*
 * What `table` holds of a key, one number: in the low 2 bits PREFETCHED and READ (its records
 * passed over by a partial read were read since); then what is known (nothing, a state in a slot
 * of `objects`, or a state that one record decides alone); for the last, its status; above
 * them, the record's byte offset in its shard (read back when asked) or the slot's number. An
 * import of a million known orders holds a million numbers in typed arrays, not objects.
 */
const PREFETCHED = 1;
const READ = 2;
const NOTHING = 0;
const OBJECT = 1;
const RECORD = 2;
const STATUSES: readonly LedgerStatus[] = ['created', 'in-doubt', 'not-created', 'claimed'];
const known = (kind: number, flags: number, status?: LedgerStatus, offset = 0): number =>
  ((offset * 4 + (status ? STATUSES.indexOf(status) : 0)) * 4 + kind) * 4 + flags;
const flagsOf = (value: number): number => value % 4;
const kindOf = (value: number): number => Math.floor(value / 4) % 4;
const statusOf = (value: number): LedgerStatus => STATUSES[Math.floor(value / 16) % 4]!;
const numberOf = (value: number): number => Math.floor(value / 64);

export class LocalLedger implements LedgerStore {
  readonly location: string;
  sameServiceAs: string | undefined;
  readonly owner: ClaimOwner = newOwner();
  private table = new KeyTable();
  /** The states no single record decides (claims, outcomes keeping their claim's details). */
  private readonly objects: (LedgerEntry | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly views = new Map<number, ShardView>();
  private readonly fds = new OpenShards(OPEN_SHARDS);
  private buffer = Buffer.alloc(0);
  private wal: AppendLog | undefined;
  private unsynced = new Set<number>();
  private checkpointing: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private heartbeat: Heartbeat | undefined;
  private readonly verdicts = new Map<string, { verdict: Promise<'alive' | 'dead'>; at: number }>();
  private readonly counts = { created: 0, inDoubt: 0 };
  private claims = 0;

  private constructor(
    private readonly folder: string,
    readonly baseUrl: string,
    private readonly options: OpenLedgerOptions,
  ) {
    this.location = folder;
  }

  /** Opens (creating it unless read-only) the ledger of the service at `baseUrl` under `root`. */
  static async open(root: string, options: OpenLedgerOptions): Promise<LocalLedger> {
    const baseUrl = normalizeBaseUrl(options.baseUrl);
    const alias = await sameServiceLedger(root, baseUrl);
    const service = alias?.folder ?? ledgerFolder(root, baseUrl);
    const folder = options.kind === 'orders' ? service : join(service, options.kind);
    const ledger = new LocalLedger(folder, baseUrl, options);
    ledger.sameServiceAs = alias?.baseUrl;
    checkFolder(folder);
    if (options.readOnly) return ledger;
    try {
      await mkdir(join(folder, 'wal'), { recursive: true, mode: 0o700 });
      if (!alias) {
        await writeFile(join(service, 'service.json'), `${JSON.stringify({ baseUrl })}\n`, {
          mode: 0o600,
          flag: 'wx',
        }).catch((error: unknown) => {
          if (errorCode(error) !== 'EEXIST') throw error;
        });
      }
      await ledger.recoverLogs();
      await ledger.startHeartbeat();
      ledger.wal = await ledger.openWal();
    } catch (error) {
      await ledger.heartbeat?.stop();
      if (error instanceof CliError) throw error;
      throw new UsageError(
        `Cannot open the order ledger ${folder} for writing (${errorCode(error)}); nothing was sent.`,
        ['Make it writable, or name another folder with --ledger <dir>.'],
      );
    }
    return ledger;
  }

  /** The services (and kinds) a local ledger root holds records of. */
  static async services(root: string): Promise<LedgerService[]> {
    if (!checkFolder(root)) return [];
    const services: LedgerService[] = [];
    for (const [baseUrl, folder] of await serviceFolders(root)) {
      services.push({ baseUrl, kind: 'orders' });
      if (checkFolder(join(folder, 'contact-references')))
        services.push({ baseUrl, kind: 'contact-references' });
    }
    return services;
  }

  /** Removes a service's ledger (every kind) from a local ledger root; how many keys it held. */
  static async forget(root: string, baseUrl: string): Promise<number> {
    const folder = ledgerFolder(root, baseUrl);
    let keys = 0;
    for (const kind of ['orders', 'contact-references'] as const) {
      if (!checkFolder(kind === 'orders' ? folder : join(folder, kind))) continue;
      const store = await LocalLedger.open(root, {
        baseUrl,
        kind,
        source: { by: 'ledger forget' },
        readOnly: true,
      });
      keys += (await store.list()).length;
      await store.close();
    }
    await rm(folder, { recursive: true, force: true });
    return keys;
  }

  async lookup(externalId: string): Promise<LedgerEntry | undefined> {
    this.refresh(shardOf(externalId), externalId);
    return this.stateOf(externalId);
  }

  async prefetch(keys: Iterable<string> | KeyTable): Promise<void> {
    const indexes = this.markPrefetched(keys);
    // The keys grouped by shard with a counting sort of their indexes: typed arrays, no strings.
    const starts = new Uint32Array(LEDGER_SHARDS + 1);
    for (const index of indexes) starts[(this.table.hashAt(index) & SHARD_MASK) + 1]!++;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) starts[shard + 1]! += starts[shard]!;
    const order = new Uint32Array(indexes.length);
    const next = starts.slice(0, LEDGER_SHARDS);
    for (const index of indexes) order[next[this.table.hashAt(index) & SHARD_MASK]!++] = index;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (starts[shard] === starts[shard + 1]) continue;
      // A turn of the event loop now and then, so that a Ctrl-C is seen during a long read.
      if (shard % 64 === 0) await nextTurn();
      this.options.signal?.throwIfAborted();
      const wanted = order.subarray(starts[shard]!, starts[shard + 1]!);
      if (!this.views.has(shard)) this.readWhole(shard, true);
      else for (const index of wanted) this.refresh(shard, this.table.keyAt(index));
      for (const index of wanted) this.countPrefetched(this.table.valueAt(index)!);
    }
  }

  /** Marks the keys prefetched; their indexes, but those already prefetched. An import's table is taken over. */
  private markPrefetched(keys: Iterable<string> | KeyTable): Uint32Array {
    if (keys instanceof KeyTable && this.table.count === 0) {
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
    const indexes: number[] = [];
    for (const key of keys) {
      const before = this.table.get(key) ?? known(NOTHING, 0);
      if (flagsOf(before) & PREFETCHED) continue;
      indexes.push(this.table.set(key, before + PREFETCHED));
    }
    return Uint32Array.from(indexes);
  }

  private countPrefetched(value: number): void {
    const kind = kindOf(value);
    const status =
      kind === RECORD ? statusOf(value) : kind === OBJECT ? this.objects[numberOf(value)]?.status : undefined;
    if (status === 'created') this.counts.created++;
    else if (status === 'claimed' || status === 'in-doubt') this.counts.inDoubt++;
  }

  knows(externalId: string): boolean {
    const value = this.table.get(externalId);
    return value !== undefined && kindOf(value) !== NOTHING;
  }

  prefetchedCounts(): { created: number; inDoubt: number } {
    return { ...this.counts };
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.checkWritable();
    const { externalId } = request;
    const shard = shardOf(externalId);
    // A claim that loses to another process's is decided again on what that one wrote.
    for (;;) {
      this.refresh(shard, externalId);
      const current = this.stateOf(externalId);
      const refusal = await this.refusal(current, request);
      if (refusal && current?.status !== 'claimed') return { claimed: false, refusal };
      if (refusal) {
        // Judging an owner may have waited: what it wrote meanwhile (its outcome) decides.
        this.refresh(shard, externalId);
        const after = this.stateOf(externalId);
        if (after !== undefined && stateKey(after) === stateKey(current!)) return { claimed: false, refusal };
        continue;
      }
      // Unique across processes (the owner's random id) and within this one (a counter).
      const token = `${this.owner.id.slice(0, 10)}-${(++this.claims).toString(36)}`;
      const { bodyHash, line } = request;
      const record: LedgerRecord = {
        externalId,
        event: 'claim',
        at: isoNow(),
        token,
        ...this.options.source,
        owner: this.owner,
        bodyHash,
      };
      if (!isFree(current)) record.over = stateKey(current!);
      if (line !== undefined) record.line = line;
      const text = JSON.stringify(record);
      this.append(shard, text);
      this.refresh(shard, externalId);
      const now = this.stateOf(externalId);
      if (now?.status === 'claimed' && now.token === token) {
        await this.toWal(text);
        return { claimed: true, claim: { externalId, token, previous: now.previous, bodyHash, line } };
      }
      this.options.signal?.throwIfAborted();
    }
  }

  created(claim: Claim, outcome: { httpStatus: number; id?: string | number; code?: string }): void {
    this.outcome(claim, { event: 'created', ...outcome });
  }

  failed(claim: Claim, outcome: { httpStatus?: number; message: string }): void {
    this.outcome(claim, { event: 'failed', ...outcome });
  }

  unknown(claim: Claim, reason: string): void {
    this.outcome(claim, { event: 'unknown', reason });
  }

  notSent(claim: Claim, reason: string): void {
    this.outcome(claim, { event: 'not-sent', reason });
  }

  async resolved(
    externalId: string,
    resolution: Resolution,
    details: { id?: string | number; code?: string; evidence?: string },
  ): Promise<void> {
    this.checkWritable();
    const shard = shardOf(externalId);
    this.refresh(shard, externalId);
    const current = this.stateOf(externalId);
    // A person's word never overrides an order that another ordercli is sending right now.
    if (current?.status === 'claimed' && (await this.ownerVerdict(current)) === 'alive') {
      throw new ClaimedNowError(externalId, current);
    }
    const at = isoNow();
    const record: LedgerRecord = { externalId, event: 'resolved', at, ...this.options.source, resolution };
    // Takes effect only on the state judged here: a claim that came in meanwhile stands.
    if (current !== undefined) record.over = stateKey(current);
    if (details.id !== undefined) record.id = details.id;
    if (details.code !== undefined) record.code = details.code;
    if (details.evidence !== undefined) record.evidence = details.evidence;
    await this.write(record);
    this.refresh(shard, externalId);
    const now = this.stateOf(externalId);
    if (now?.event !== 'resolved' || now.at !== at) {
      throw new UsageError(
        `The order ${JSON.stringify(externalId)} changed in the order ledger while this was being recorded (another ordercli claimed or settled it); nothing was recorded for it.`,
        ['Look at it again with ordercli orders journal, then run the same command again.'],
      );
    }
  }

  async adopt(records: readonly LedgerRecord[]): Promise<void> {
    this.checkWritable();
    for (const record of records) {
      this.refresh(shardOf(record.externalId), record.externalId);
      if (!this.knows(record.externalId)) void this.write(record);
    }
    await this.sync();
  }

  async list(filter: LedgerFilter = {}): Promise<ListedEntry[]> {
    const inputs = filter.inputs && new Set(filter.inputs);
    const listed: ListedEntry[] = [];
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (shard % 64 === 0) await nextTurn();
      this.options.signal?.throwIfAborted();
      const states = new Map<string, LedgerEntry>();
      this.withShard(shard, false, (fd) =>
        this.eachRecord(shard, this.bytes(fd, 0), 0, ALL, (record) => {
          const state = applyRecord(states.get(record.externalId), record);
          if (state) states.set(record.externalId, state);
          else states.delete(record.externalId);
        }),
      );
      for (const [externalId, entry] of states) {
        if (inputs && !inputs.has(entry.input ?? '') && !inputs.has(entry.journal ?? '')) continue;
        // A claim as it stands: being sent by a live owner, or the doubt a dead one left.
        const alive = entry.status !== 'claimed' || (await this.ownerVerdict(entry)) === 'alive';
        listed.push({ externalId, entry: alive ? entry : settledAsUnknown(entry) });
      }
    }
    return listed;
  }

  async openers(): Promise<LedgerOpener[]> {
    const folder = join(this.folder, 'owners');
    const openers: LedgerOpener[] = [];
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const owner = await heartbeatAt(join(folder, name));
      if (!owner) continue;
      const verdict = owner.id === this.owner.id ? 'alive' : judgeProcess(owner).kind;
      openers.push({ owner, alive: verdict === 'unverifiable' ? 'unknown' : verdict });
    }
    return openers;
  }

  async sync(): Promise<void> {
    if (this.failure) throw this.failure;
    await this.wal?.flush().catch((error: unknown) => Promise.reject(this.fail(error)));
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.checkpointing;
      if (!this.failure && this.wal) {
        await this.sync();
        // After many shards, syncing each would cost more than the command did: the log stays for
        // the next command of this boot to delete (the shards hold its lines), or to copy in after
        // a crash of the machine.
        if (this.unsynced.size <= CLOSE_SYNC_SHARDS) {
          await this.syncShards(this.unsynced);
          await unlink(this.wal.path);
        }
      }
    } finally {
      this.closed = true;
      this.fds.closeAll();
      await this.wal?.close();
      await this.heartbeat?.stop();
    }
  }

  /** Why a key may not be claimed now, or undefined when it may. */
  private async refusal(
    entry: LedgerEntry | undefined,
    request: ClaimRequest,
  ): Promise<ClaimRefusal | undefined> {
    if (entry === undefined || isFree(entry)) return undefined;
    if (entry.status === 'claimed') {
      if ((await this.ownerVerdict(entry)) === 'alive') return { reason: 'claimed', entry };
      if (request.takeOverDoubt || request.takeOverAny) return undefined;
      return { reason: 'in-doubt', entry: settledAsUnknown(entry) };
    }
    if (request.takeOverAny) return undefined;
    if (entry.status === 'created') return { reason: 'created', entry };
    return request.takeOverDoubt ? undefined : { reason: 'in-doubt', entry };
  }

  /** Whether the owner of a claim without outcome is alive, as seen from here. */
  private ownerVerdict(entry: LedgerEntry): Promise<'alive' | 'dead'> {
    const owner = entry.owner;
    // A `sending` of ordercli before claims names no owner: in doubt.
    if (!owner) return Promise.resolve('dead');
    if (owner.id === this.owner.id) return Promise.resolve('alive');
    const verdict = judgeProcess(owner);
    if (verdict.kind !== 'unverifiable') return Promise.resolve(verdict.kind);
    const seen = this.verdicts.get(owner.id);
    if (seen && performance.now() - seen.at < ALIVE_VERDICT_MS) return seen.verdict;
    // A dead verdict stands; an alive one is watched again after a while.
    const watch = (): Promise<'alive' | 'dead'> => {
      const path = join(this.folder, 'owners', owner.id);
      const read = async () => (await readHeartbeat(path).catch(() => undefined))?.text;
      const watched = observeHeartbeat(read, { signal: this.options.signal });
      this.verdicts.set(owner.id, { verdict: watched, at: performance.now() });
      return watched;
    };
    return seen ? seen.verdict.then((before) => (before === 'dead' ? 'dead' : watch())) : watch();
  }

  private async startHeartbeat(): Promise<void> {
    const folder = join(this.folder, 'owners');
    await mkdir(folder, { recursive: true, mode: 0o700 });
    // Heartbeats of processes proven dead (killed before their close) would only cost a wait.
    for (const name of await readdir(folder)) {
      const owner = await heartbeatAt(join(folder, name));
      if (owner && judgeProcess(owner).kind === 'dead') await rm(join(folder, name), { force: true });
    }
    this.heartbeat = new Heartbeat(join(folder, this.owner.id), this.owner);
    this.heartbeat.start();
  }

  private checkWritable(): void {
    if (this.options.readOnly || this.closed)
      throw new Error('ledger: write to a read-only or closed ledger');
    if (this.failure) throw this.failure;
  }

  private outcome(claim: Claim, fields: Partial<LedgerRecord> & { event: LedgerRecord['event'] }): void {
    const { externalId, token, bodyHash, line } = claim;
    const record: LedgerRecord = { externalId, at: isoNow(), token, ...this.options.source, ...fields };
    // Its outcome says alone what the order became: a reader need not keep the claim for it.
    if (bodyHash !== undefined) record.bodyHash = bodyHash;
    if (line !== undefined) record.line = line;
    // Not synced: one lost in a crash of the machine leaves its claim, in doubt once its owner is
    // gone; only claims must be on disk before their request leaves. A failure is kept for sync().
    if (!this.failure) {
      try {
        this.append(shardOf(externalId), JSON.stringify(record));
      } catch {
        // Kept as the failure: sync() reports it.
      }
    }
  }

  /** Appends a record to its shard and the write-ahead log; resolves once it is on disk. */
  private write(record: LedgerRecord): Promise<void> {
    const text = JSON.stringify(record);
    try {
      if (this.failure) throw this.failure;
      this.append(shardOf(record.externalId), text);
    } catch (error) {
      const failed = Promise.reject(error as Error);
      failed.catch(() => undefined);
      return failed;
    }
    return this.toWal(text);
  }

  private toWal(line: string): Promise<void> {
    const wal = this.wal!;
    const onDisk = wal.append(line).then(
      () => undefined,
      (error: unknown) => Promise.reject(this.fail(error)),
    );
    onDisk.catch(() => undefined);
    if (wal.size > WAL_CHECKPOINT_BYTES && !this.checkpointing) this.checkpointing = this.checkpoint();
    return onDisk;
  }

  /** One write() with O_APPEND: lines of several writers never interleave. */
  private append(shard: number, line: string): void {
    const buffer = Buffer.from(`${line}\n`, 'utf8');
    try {
      const written = writeSync(
        this.fds.get(shard) ?? this.openShard(shard, true)!,
        buffer,
        0,
        buffer.length,
        null,
      );
      if (written < buffer.length)
        throw Object.assign(new Error('short write (disk full?)'), { code: 'ENOSPC' });
    } catch (error) {
      throw this.fail(error);
    }
    this.unsynced.add(shard);
  }

  private fail(error: unknown): Error {
    this.failure ??= error instanceof CliError ? error : new LedgerWriteError(this.folder, error as Error);
    return this.failure;
  }

  /** The state of a key as far as read, its record read back if it is kept as an offset. */
  private stateOf(externalId: string): LedgerEntry | undefined {
    const value = this.table.get(externalId);
    const kind = value === undefined ? NOTHING : kindOf(value);
    if (kind === OBJECT) return this.objects[numberOf(value!)];
    if (kind === NOTHING) return undefined;
    const shard = shardOf(externalId);
    const record = this.withShard(shard, false, (fd) => readRecordAt(fd, numberOf(value!), shard));
    if (!record) throw new Error(`ledger: shard ${shard} is gone`);
    return settledEntry(record);
  }

  /** Records a key's state (undefined: none) as an object, or as the offset of the record deciding it. */
  private setState(externalId: string, state: LedgerEntry | undefined, offset?: number): void {
    const before = this.table.get(externalId);
    const flags = before === undefined ? 0 : flagsOf(before);
    let slot = before !== undefined && kindOf(before) === OBJECT ? numberOf(before) : undefined;
    if (state !== undefined && offset === undefined) {
      slot ??= this.freeSlots.pop() ?? this.objects.length;
      this.objects[slot] = state;
      this.table.set(externalId, known(OBJECT, flags, undefined, slot));
      return;
    }
    if (slot !== undefined) this.freeSlot(slot);
    if (state !== undefined) this.table.set(externalId, known(RECORD, flags, state.status, offset));
    else if (before !== undefined) this.table.set(externalId, known(NOTHING, flags));
  }

  private freeSlot(slot: number): void {
    this.objects[slot] = undefined;
    this.freeSlots.push(slot);
  }

  /** Applies a record that starts at byte `offset` of its shard. */
  private apply(record: LedgerRecord, offset: number): void {
    const current = this.stateOf(record.externalId);
    const state = applyRecord(current, record);
    if (state === current) return;
    this.setState(
      record.externalId,
      state,
      state !== undefined && decidedBy(record, state) ? offset : undefined,
    );
  }

  /** Applies what every process appended to the shard since it was read (for `key`, what a partial read passed over). */
  private refresh(shard: number, key?: string): void {
    const view = this.views.get(shard);
    if (!view) {
      this.readWhole(shard, false);
      return;
    }
    const flags = key === undefined ? READ : flagsOf(this.table.get(key) ?? 0);
    if (view.partial && flags === 0) {
      const until = view.offset;
      this.withShard(shard, false, (fd) =>
        this.eachRecord(shard, this.bytes(fd, 0, until), 0, (id) => id === key, this.applyAt(0)),
      );
      this.table.set(key!, (this.table.get(key!) ?? 0) + READ);
    }
    this.readMore(shard, view, ALL);
  }

  /** Reads a whole shard: the records of every key, or with `prefetchedOnly` those of the keys prefetched. */
  private readWhole(shard: number, prefetchedOnly: boolean): void {
    const view: ShardView = { offset: 0, lines: 0, partial: false };
    this.views.set(shard, view);
    this.readMore(shard, view, prefetchedOnly ? (id) => flagsOf(this.table.get(id) ?? 0) !== 0 : ALL);
    // A shard that does not exist yet has nothing to pass over.
    view.partial = prefetchedOnly && view.offset > 0;
  }

  /** Applies the records appended since `view`; a shard cut or replaced since is read again from the start. */
  private readMore(shard: number, view: ShardView, wanted: (id: string) => boolean): void {
    const cut = this.withShard(shard, true, (fd) => {
      const size = fstatSync(fd).size;
      if (size <= view.offset) return size < view.offset;
      const read = this.eachRecord(
        shard,
        this.bytes(fd, view.offset, size),
        view.lines,
        wanted,
        this.applyAt(view.offset),
      );
      view.offset += read.bytes;
      view.lines += read.lines;
      return false;
    });
    if (!cut) return;
    for (let index = 0; index < this.table.count; index++) {
      const value = this.table.valueAt(index);
      if (value === undefined || (this.table.hashAt(index) & SHARD_MASK) !== shard) continue;
      if (kindOf(value) === OBJECT) this.freeSlot(numberOf(value));
      this.table.setAt(index, known(NOTHING, flagsOf(value)));
    }
    Object.assign(view, { offset: 0, lines: 0, partial: false });
    this.readMore(shard, view, ALL);
  }

  private applyAt(base: number): (record: LedgerRecord, at: number) => void {
    return (record, at) => this.apply(record, base + at);
  }

  /**
   * Visits the records of `data` (from line `firstLine` of the shard) whose key `wanted` takes; a
   * line that is not a record is damage. Returns what it consumed: up to the last newline (a
   * torn last line is left for later).
   */
  private eachRecord(
    shard: number,
    data: Buffer,
    firstLine: number,
    wanted: (id: string) => boolean,
    visit: (record: LedgerRecord, at: number) => void,
  ): { bytes: number; lines: number } {
    let start = 0;
    let lines = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
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
      start = end + 1;
    }
    return { bytes: start, lines };
  }

  /** Bytes `[from, to)` of an open shard (to its end without `to`), in a buffer the next read reuses. */
  private bytes(fd: number, from: number, to = Number.POSITIVE_INFINITY): Buffer {
    let length = 0;
    while (from + length < to) {
      if (this.buffer.length - length < 65536) {
        // Reused: reading 4096 shards into new buffers would leave hundreds of MB to collect.
        const bigger = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, length + 65536));
        this.buffer.copy(bigger, 0, 0, length);
        this.buffer = bigger;
      }
      const room = Math.min(this.buffer.length - length, to - from - length);
      const read = readSync(fd, this.buffer, length, room, from + length);
      if (read === 0) break;
      length += read;
    }
    return this.buffer.subarray(0, length);
  }

  /**
   * Runs `use` on the shard's file: the one kept open, else (with `keep`, for a writer) one opened
   * and kept, else one opened to read it; undefined when there is no such shard.
   */
  private withShard<T>(shard: number, keep: boolean, use: (fd: number) => T): T | undefined {
    const writer = keep && !this.options.readOnly && !this.closed;
    const kept = this.fds.get(shard) ?? (writer ? this.openShard(shard, true) : undefined);
    const fd = kept ?? this.openShard(shard, false);
    if (fd === undefined) return undefined;
    try {
      return use(fd);
    } finally {
      if (kept === undefined) closeQuietly(fd);
    }
  }

  /** Opens a shard, kept open by a writer (created), or to read (undefined when it does not exist). */
  private openShard(shard: number, write: boolean): number | undefined {
    const path = this.shardPath(shard);
    let fd: number;
    try {
      fd = openSync(path, write ? WRITE_FLAGS : READ_FLAGS, 0o600);
    } catch (error) {
      const code = errorCode(error);
      // Fewer descriptors than kept shards here: keep fewer, and open it again.
      if ((code === 'EMFILE' || code === 'ENFILE') && this.fds.shrink()) return this.openShard(shard, write);
      if (write) throw this.fail(error);
      if (code === 'ENOENT') return undefined;
      throw new CliError(
        `Cannot read the order ledger ${path} (${code}), so nothing was sent.`,
        ExitCode.Failure,
        ['Fix its permissions, then run the command again.'],
      );
    }
    const info = fstatSync(fd);
    if (!info.isFile()) {
      closeSync(fd);
      throw new UsageError(
        `The order ledger file ${path} is ${fileKind(info)}, not a regular file; nothing was sent.`,
        ['Remove it: the ledger writes its own files.'],
      );
    }
    if (write) this.fds.add(shard, fd);
    return fd;
  }

  private shardPath(shard: number): string {
    return join(this.folder, shardFileName(shard));
  }

  private async syncShards(written: Set<number>): Promise<void> {
    const shards = [...written];
    written.clear();
    for (let i = 0; i < shards.length; i += 16) {
      await Promise.all(shards.slice(i, i + 16).map((shard) => appendSynced(this.shardPath(shard))));
    }
  }

  /** Starts a new write-ahead log; once the shards written so far are synced, deletes the old one. */
  private async checkpoint(): Promise<void> {
    try {
      const next = await this.openWal();
      const [old, shards] = [this.wal!, this.unsynced];
      this.wal = next;
      this.unsynced = new Set();
      await old.flush().finally(() => old.close());
      await this.syncShards(shards);
      await unlink(old.path);
    } catch (error) {
      this.fail(error);
    } finally {
      this.checkpointing = undefined;
    }
  }

  /** This process's new write-ahead log; its first line names the owner. */
  private async openWal(): Promise<AppendLog> {
    const path = join(this.folder, 'wal', `w-${this.owner.id}-${randomBytes(4).toString('hex')}.ndjson`);
    const log = await AppendLog.open(path, { what: `the order ledger's log ${path}`, synced: true });
    void log.append(JSON.stringify({ wal: 2, owner: this.owner })).catch(() => undefined);
    return log;
  }

  /**
   * Write-ahead logs left behind: one of another boot of this host (the machine restarted) is
   * copied into the shards where lines are missing, then removed; one of this boot is not needed
   * (the shards have its lines) and is removed once its owner is proven dead; any other is left.
   * Logs of ordercli before claims (`<pid>-<id>.ndjson`) are copied when their PID is gone.
   */
  private async recoverLogs(): Promise<void> {
    const folder = join(this.folder, 'wal');
    const me = thisProcess();
    for (const name of await readdir(folder)) {
      const path = join(folder, name);
      const legacy = /^(\d+)(?:-[0-9a-f]+)?\.ndjson$/.exec(name);
      const owner = /^w-[0-9a-f]+-[0-9a-f]+\.ndjson$/.test(name) ? await walOwner(path) : undefined;
      const copy =
        legacy !== null || (owner?.boot !== undefined && owner.boot !== me.boot && owner.host === me.host);
      const gone = legacy
        ? judgeProcess({ ...me, pid: Number(legacy[1]), start: undefined }).kind === 'dead'
        : owner !== undefined && owner.id !== this.owner.id && (copy || judgeProcess(owner).kind === 'dead');
      if (!gone) continue;
      // Taken by renaming, so that two commands opening the ledger at once do not both copy it.
      const taken = `${path}.recovering-${this.owner.id}`;
      if (
        !(await rename(path, taken).then(
          () => true,
          () => false,
        ))
      )
        continue;
      if (copy) await this.copyMissingLines(await readFile(taken));
      await unlink(taken);
    }
  }

  private async copyMissingLines(data: Buffer): Promise<void> {
    const byShard = new Map<number, Buffer[]>();
    for (
      let start = 0, end = data.indexOf(NEWLINE);
      end !== -1;
      start = end + 1, end = data.indexOf(NEWLINE, start)
    ) {
      const line = data.subarray(start, end + 1);
      const id = startsRecord(line, 0, line.length) ? externalIdAt(line, RECORD_START.length) : undefined;
      if (id === undefined) continue;
      const lines = byShard.get(shardOf(id)) ?? [];
      byShard.set(shardOf(id), lines);
      lines.push(line);
    }
    for (const [shard, lines] of byShard) {
      const missing =
        this.withShard(shard, false, (fd) => {
          const existing = this.bytes(fd, 0);
          return lines.filter((line) => existing.indexOf(line) === -1);
        }) ?? lines;
      if (missing.length > 0) await appendSynced(this.shardPath(shard), Buffer.concat(missing));
    }
  }
}

/** Appends `data` (or nothing) to a file and syncs it. */
async function appendSynced(path: string, data?: Buffer): Promise<void> {
  const handle = await open(path, 'a', 0o600);
  try {
    if (data) await handle.appendFile(data);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** The owner a heartbeat file names (one line with its beat, or an earlier release's two lines). */
async function heartbeatAt(path: string): Promise<ClaimOwner | undefined> {
  const read = await readHeartbeat(path).catch(() => undefined);
  const owner = read && heartbeatOwner(read.text);
  if (owner) delete owner.beat;
  return owner;
}

/** The owner the first line of a write-ahead log names. */
async function walOwner(path: string): Promise<ClaimOwner | undefined> {
  try {
    const first = (await readFile(path, 'utf8')).split('\n', 1)[0]!;
    return (JSON.parse(first) as { owner?: ClaimOwner }).owner;
  } catch {
    return undefined;
  }
}

/** The state one settled record gives on its own: what `apply` keeps as the record's offset. */
function settledEntry(record: LedgerRecord): LedgerEntry | undefined {
  const { token, ...rest } = record;
  const entry = applyRecord(undefined, rest);
  if (entry !== undefined && token !== undefined) entry.token = token;
  return entry;
}

const SETTLED_FIELDS =
  'status event at token by input journal bodyHash httpStatus id code message reason evidence resolved'.split(
    ' ',
  );

/** Whether `state` is what `record` gives on its own, so that its offset can stand for it. */
function decidedBy(record: LedgerRecord, state: LedgerEntry): boolean {
  if (state.status === 'claimed' || ['claim', 'sending', 'not-sent'].includes(record.event)) return false;
  const alone = settledEntry(record) as Record<string, unknown> | undefined;
  return (
    alone !== undefined && SETTLED_FIELDS.every((field) => alone[field] === state[field as keyof LedgerEntry])
  );
}

/**
 * The record of the line `[start, end)` if `wanted` takes its key; undefined if not; 'damaged'
 * if the line is not a record. A record written after a torn one (a full disk, a crash) is glued
 * onto it: a line that starts as a record and ends with a whole one is that record.
 */
function recordIn(
  data: Buffer,
  start: number,
  end: number,
  wanted: (id: string) => boolean,
): { record: LedgerRecord; at: number } | undefined | 'damaged' {
  if (!startsRecord(data, start, end) || data[end - 1] !== 0x7d) return 'damaged';
  const glued = data.lastIndexOf(RECORD_START, end - 1);
  for (const at of glued > start ? [start, glued] : [start]) {
    const id = externalIdAt(data, at + RECORD_START.length);
    if (id === undefined) continue;
    // Passed over without a parse (only its shape is checked), unless it may be glued.
    if (!wanted(id) && !(at === start && glued > start)) return undefined;
    try {
      const record = JSON.parse(data.toString('utf8', at, end)) as LedgerRecord;
      if (!wanted(id)) return undefined;
      if (typeof record.event !== 'string' || typeof record.externalId !== 'string') continue;
      if (typeof record.at !== 'string') record.at = '';
      return { record, at };
    } catch {
      // A torn record before a whole one: try the whole one.
    }
  }
  return 'damaged';
}

/** Whether the bytes `[start, end)` begin with `{"externalId":`. */
function startsRecord(data: Buffer, start: number, end: number): boolean {
  const length = RECORD_START.length;
  return end - start > length && data.compare(RECORD_START, 0, length, start, start + length) === 0;
}

/** The JSON string that starts at `start` (a key), or undefined when it is not whole. */
function externalIdAt(data: Buffer, start: number): string | undefined {
  if (data[start] !== 0x22) return undefined;
  let escaped = false;
  for (let i = start + 1; i < data.length && data[i] !== NEWLINE; i++) {
    if (data[i] === 0x5c) {
      escaped = true;
      i++;
    } else if (data[i] === 0x22) {
      if (!escaped) return data.toString('utf8', start + 1, i);
      try {
        return JSON.parse(data.toString('utf8', start, i + 1)) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** The record that starts at `offset` of an open shard. */
function readRecordAt(fd: number, offset: number, shard: number): LedgerRecord {
  for (let length = 1024; ; length *= 4) {
    const buffer = Buffer.allocUnsafe(length);
    const read = readSync(fd, buffer, 0, length, offset);
    const end = buffer.subarray(0, read).indexOf(NEWLINE);
    if (end !== -1) {
      const record = JSON.parse(buffer.toString('utf8', 0, end)) as LedgerRecord;
      if (typeof record.at !== 'string') record.at = '';
      return record;
    }
    if (read < length) throw new Error(`ledger: no whole record at ${offset} of shard ${shard}`);
  }
}

/**
 * The shard files kept open, at most `limit`: the least recently used is closed to make room.
 * Typed arrays rather than a Map reordered at each use, whose tables would churn.
 */
class OpenShards {
  private readonly fds = new Int32Array(LEDGER_SHARDS).fill(-1);
  private readonly used = new Float64Array(LEDGER_SHARDS);
  private clock = 0;
  private open = 0;

  constructor(private limit: number) {}

  /** The shard's open file (marked used), or undefined. */
  get(shard: number): number | undefined {
    const fd = this.fds[shard]!;
    if (fd < 0) return undefined;
    this.used[shard] = ++this.clock;
    return fd;
  }

  add(shard: number, fd: number): void {
    if (this.open >= this.limit) this.closeLeastUsed();
    this.fds[shard] = fd;
    this.used[shard] = ++this.clock;
    this.open++;
  }

  /** Keeps half as many files open from now on (the process ran out of descriptors); false if none closed. */
  shrink(): boolean {
    const before = this.open;
    this.limit = Math.max(16, Math.floor(this.open / 2));
    while (this.open > this.limit) this.closeLeastUsed();
    return this.open < before;
  }

  closeAll(): void {
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) if (this.fds[shard]! >= 0) this.close(shard);
  }

  private closeLeastUsed(): void {
    let oldest = -1;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (this.fds[shard]! >= 0 && (oldest < 0 || this.used[shard]! < this.used[oldest]!)) oldest = shard;
    }
    if (oldest >= 0) this.close(oldest);
  }

  private close(shard: number): void {
    closeQuietly(this.fds[shard]!);
    this.fds[shard] = -1;
    this.open--;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}
