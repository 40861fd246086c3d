/**
 * The local order ledger: shard files in a folder of this machine (the config folder's `ledger/`,
 * or the folder `--ledger <dir>` names), shared by every process, profile and journal.
 *
 * Layout: `<root>/<service>/<shard>.ndjson` — one folder per service (its normalized base URL,
 * readable plus a hash; `service.json` names it), contact references in its
 * `contact-references/` subfolder, 4096 shard files chosen by a hash of the key (FNV-1a of its
 * UTF-8 bytes, low 12 bits, as 3 hex digits). A base URL that may name a service this machine
 * already has a ledger of (`localhost` after `127.0.0.1`: same scheme, port and path, hosts
 * resolving to a common address) uses that ledger.
 *
 * Each line is one record (record.ts) whose first key is `externalId`. A shard is appended to
 * with O_APPEND, one write() per record, so records never interleave and every process sees
 * them in one order: the file's. That order decides a claim (a compare-and-swap in record.ts):
 * a process appends its claim, reads the shard from where it last read up to its own line, and
 * holds the claim only if the claim took effect there. No lock, no clock.
 *
 * Durability: every record also goes to this process's write-ahead log (`wal/`), an AppendLog
 * whose synced writes all the claims of a round share (group commit), so a claim is on disk
 * before its request leaves at the price of one sync a round. A shard write is in the page cache
 * at once (other processes see it, a kill cannot lose it); only a machine crash can lose it,
 * and the log is there for that: the first command after the machine restarted (another boot
 * id, same host) copies the missing lines back. A log of this boot is never needed, and is
 * removed only when its owner is proven dead.
 *
 * Damage: a line that is not a whole record anywhere but at the end of a shard (a torn last line,
 * still being written or cut by a crash) stops every command with exit 2 naming file and line.
 *
 * Liveness of claim owners (core/liveness.ts): PID and start time in this PID namespace; else
 * the owner's heartbeat file `owners/<id>`, a counter it rewrites every second, watched on this
 * process's own clock.
 */
import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns/promises';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readSync,
  type Stats,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, errorCode, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { hashBytes, KeyTable } from '../core/key-table.js';
import { HEARTBEAT_MS, judgeProcess, observeHeartbeat, thisProcess } from '../core/liveness.js';
import { normalizeBaseUrl, serviceKey } from '../core/url.js';
import { AppendLog } from '../io/append-log.js';
import { fdatasyncFd } from '../io/fd.js';
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
  type RecordSource,
  type Resolution,
  settledAsUnknown,
  stateKey,
} from './record.js';
import type {
  Claim,
  ClaimRefusal,
  ClaimRequest,
  ClaimResult,
  LedgerFilter,
  LedgerKind,
  LedgerOpener,
  LedgerService,
  LedgerStore,
  ListedEntry,
  OpenLedgerOptions,
} from './store.js';

export const LEDGER_SHARDS = 4096;
const SHARD_MASK = LEDGER_SHARDS - 1;
/** Read and append: a claim reads back the shard it appended to. */
const SHARD_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_APPEND;
/**
 * Shard files kept open between claims (an outcome goes to the shard its claim went to): opening
 * one costs more than its record (Node raises the descriptors' limit to the hard one; fewer,
 * and the set shrinks).
 */
const OPEN_SHARDS = 2048;
/** At most this many shards written are synced at close (so that the log can go). */
const CLOSE_SYNC_SHARDS = 16;
/** Past this size of the write-ahead log, the shards written since are synced and a new one starts. */
const WAL_CHECKPOINT_BYTES = 64 << 20;
const RECORD_START = Buffer.from('{"externalId":');
const NEWLINE = 0x0a;
const CLOSING_BRACE = 0x7d;
const SERVICE_FILE = 'service.json';
/** An alive verdict on another namespace's owner is trusted this long before it is watched again. */
const ALIVE_VERDICT_MS = 5_000;

/** The folder of one service's ledger under a ledger root (`<config>/ledger` by default). */
export function ledgerFolder(root: string, baseUrl: string): string {
  return join(root, serviceFolderName(normalizeBaseUrl(baseUrl)));
}

/** `http_127.0.0.1_4010-1a2b3c4d`: readable enough to find, exact by the hash of the whole URL. */
function serviceFolderName(baseUrl: string): string {
  const readable = baseUrl
    .replace(/^[a-z]+:\/\//i, (scheme) => `${scheme.slice(0, -3)}_`)
    .replace(/[^A-Za-z0-9.-]+/g, '_')
    .replace(/_+$/, '')
    .slice(0, 80);
  const bytes = Buffer.from(baseUrl, 'utf8');
  return `${readable}-${hashBytes(bytes, 0, bytes.length).toString(16).padStart(8, '0')}`;
}

/** The owner a heartbeat file names (its first line), or undefined when it cannot be read. */
async function readOwner(path: string): Promise<ClaimOwner | undefined> {
  const owner = await readFile(path, 'utf8')
    .then((text) => JSON.parse(text.slice(0, text.indexOf('\n'))) as ClaimOwner)
    .catch(() => undefined);
  return owner && typeof owner.pid === 'number' ? owner : undefined;
}

/** The base URL a service folder's `service.json` names. */
async function readServiceFile(folder: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(folder, SERVICE_FILE), 'utf8')) as { baseUrl: string }).baseUrl;
  } catch {
    return undefined;
  }
}

/** The shard file number of a key: FNV-1a of its UTF-8 bytes, the low 12 bits. */
export function shardOf(externalId: string): number {
  const bytes = Buffer.from(externalId, 'utf8');
  return hashBytes(bytes, 0, bytes.length) & SHARD_MASK;
}

export function shardFileName(shard: number): string {
  return `${shard.toString(16).padStart(3, '0')}.ndjson`;
}

/**
 * The ledger of another base URL that may name the same service as `baseUrl` (same scheme, port
 * and path; hosts with an address in common), when the root has no ledger of `baseUrl` itself.
 */
async function sameServiceLedger(
  root: string,
  baseUrl: string,
): Promise<{ folder: string; baseUrl: string } | undefined> {
  const own = ledgerFolder(root, baseUrl);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return undefined;
  }
  if (names.includes(own.slice(root.length + 1))) return undefined;
  const wanted = serviceKey(baseUrl);
  if (!wanted) return undefined;
  let wantedAddresses: Set<string> | undefined;
  for (const name of names.sort()) {
    const folder = join(root, name);
    const other = await readServiceFile(folder);
    if (other === undefined) continue;
    const key = serviceKey(other);
    if (!key || key.rest !== wanted.rest) continue;
    wantedAddresses ??= await addressesOf(wanted.host);
    const otherAddresses = await addressesOf(key.host);
    if ([...otherAddresses].some((address) => wantedAddresses!.has(address)))
      return { folder, baseUrl: other };
  }
  return undefined;
}

async function addressesOf(host: string): Promise<Set<string>> {
  try {
    return new Set((await dnsLookup(host, { all: true })).map((entry) => entry.address));
  } catch {
    return new Set();
  }
}

/** Refuses a ledger path that is not a folder (a file, a pipe, a device): exit 2 at once. */
function checkFolder(path: string): boolean {
  let info: Stats;
  try {
    info = statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new UsageError(`Cannot open the order ledger ${path} (${errorCode(error)}); nothing was sent.`);
  }
  if (!info.isDirectory()) {
    throw new UsageError(
      `The order ledger ${path} is ${fileKind(info)}, not a folder, so it cannot keep the record of what was sent; nothing was sent.`,
      ['Name a folder with --ledger <dir>: the ledger keeps its own files there.'],
    );
  }
  return true;
}

/** Per shard: how far this process has read it, and whether `table` holds all its keys of interest. */
interface ShardView {
  /** Bytes read: the end of the last complete line seen. */
  offset: number;
  /** Complete lines read, for the line numbers of messages. */
  lines: number;
  /**
   * Read for the prefetched keys only (an import's): the records before `offset` of other keys
   * were passed over, except for those in `extra` (read since, one by one). Records after
   * `offset` are applied for every key.
   */
  partial?: boolean;
  extra?: Set<string>;
}

export class LocalLedger implements LedgerStore {
  readonly location: string;
  readonly baseUrl: string;
  sameServiceAs: string | undefined;
  readonly owner: ClaimOwner;
  private readonly folder: string;
  private readonly source: RecordSource;
  private readonly readOnly: boolean;
  private readonly signal: AbortSignal | undefined;
  /**
   * What this process knows of each key seen, from the shards' records (the files decide), as a
   * number (see `known`): whether it was prefetched, and its last known state. A state that one
   * record decides alone (created, refused, in doubt, resolved) is that record's byte offset in
   * its shard, read back when asked: an import of a million known orders holds a million
   * numbers in typed arrays, not a million objects. Other states are in `objects`.
   */
  private table = new KeyTable();
  /**
   * The states no single record decides (a claim, an outcome that keeps its claim's details), in
   * slots whose number the table keeps. Not a Map: a Map that empties and fills again at every
   * record of a prefetch allocates a new table each time, in the old generation.
   */
  private readonly objects: (LedgerEntry | undefined)[] = [];
  private readonly freeSlots: number[] = [];
  private readonly views = new Map<number, ShardView>();
  /** Open shard files, least recently used first. */
  private readonly fds = new OpenShards(OPEN_SHARDS);
  private wal: AppendLog | undefined;
  private unsynced = new Set<number>();
  private checkpointing: Promise<void> | undefined;
  private failure: Error | undefined;
  private closed = false;
  private heartbeat: { path: string; timer: NodeJS.Timeout; beat: number } | undefined;
  private readonly verdicts = new Map<string, { verdict: Promise<'alive' | 'dead'>; at: number }>();
  private counts = { created: 0, inDoubt: 0 };
  private claimCount = 0;

  /** Prefetched: a shard read for the prefetch has the key's whole history. */
  private wasPrefetched(key: string): boolean {
    return isPrefetched(this.table.get(key) ?? 0);
  }
  private readBuffer = Buffer.alloc(0);

  private constructor(folder: string, baseUrl: string, options: OpenLedgerOptions) {
    this.folder = folder;
    this.location = folder;
    this.baseUrl = baseUrl;
    this.source = options.source;
    this.readOnly = Boolean(options.readOnly);
    this.signal = options.signal;
    this.owner = { ...thisProcess(), id: randomBytes(8).toString('hex') };
  }

  /** Opens (creating it unless read-only) the ledger of the service at `baseUrl` under `root`. */
  static async open(root: string, options: OpenLedgerOptions): Promise<LocalLedger> {
    const baseUrl = normalizeBaseUrl(options.baseUrl);
    const rootExists = checkFolder(root);
    const alias = rootExists ? await sameServiceLedger(root, baseUrl) : undefined;
    const serviceFolder = alias?.folder ?? ledgerFolder(root, baseUrl);
    const folder = options.kind === 'orders' ? serviceFolder : join(serviceFolder, kindFolder(options.kind));
    const ledger = new LocalLedger(folder, baseUrl, options);
    ledger.sameServiceAs = alias?.baseUrl;
    checkFolder(folder);
    if (options.readOnly) return ledger;
    try {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      if (!alias) {
        await writeFile(join(serviceFolder, SERVICE_FILE), `${JSON.stringify({ baseUrl })}\n`, {
          mode: 0o600,
          flag: 'wx',
        }).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
      }
      await ledger.recoverLogs();
      await ledger.startHeartbeat();
      ledger.wal = await ledger.openWal();
    } catch (error) {
      await ledger.stopHeartbeat();
      if (error instanceof CliError) throw error;
      throw new UsageError(
        `Cannot open the order ledger ${folder} for writing (${errorCode(error)}); nothing was sent.`,
        ['Make it writable, or name another folder with --ledger <dir>.'],
      );
    }
    return ledger;
  }

  async lookup(externalId: string): Promise<LedgerEntry | undefined> {
    this.refresh(shardOf(externalId), externalId);
    return this.stateOf(externalId);
  }

  /** The state of a key as far as read, its record read back if it is kept as an offset. */
  private stateOf(externalId: string): LedgerEntry | undefined {
    const known = this.table.get(externalId);
    if (known === undefined) return undefined;
    switch (kindOf(known)) {
      case KNOWN_NOTHING:
        return undefined;
      case KNOWN_OBJECT:
        return this.objects[offsetOf(known)];
      default:
        return settledEntry(this.recordAt(shardOf(externalId), offsetOf(known)));
    }
  }

  /** Records a key's state (undefined: none), keeping whether it was prefetched. */
  private setState(externalId: string, state: LedgerEntry | undefined, decidingOffset?: number): void {
    const before = this.table.get(externalId);
    const prefetched = before !== undefined && isPrefetched(before);
    const slot = before !== undefined && kindOf(before) === KNOWN_OBJECT ? offsetOf(before) : undefined;
    if (state === undefined || decidingOffset !== undefined) {
      if (slot !== undefined) this.freeObject(slot);
      if (state !== undefined)
        this.table.set(externalId, known(KNOWN_RECORD, prefetched, state.status, decidingOffset));
      else if (before !== undefined) this.table.set(externalId, known(KNOWN_NOTHING, prefetched));
      return;
    }
    const kept = slot ?? this.freeSlots.pop() ?? this.objects.length;
    this.objects[kept] = state;
    this.table.set(externalId, known(KNOWN_OBJECT, prefetched, undefined, kept));
  }

  private freeObject(slot: number): void {
    this.objects[slot] = undefined;
    this.freeSlots.push(slot);
  }

  /** The record that starts at `offset` of the shard. */
  private recordAt(shard: number, offset: number): LedgerRecord {
    const open = this.fds.get(shard);
    const fd = open ?? this.openForReading(shard);
    if (fd === undefined) throw new Error(`ledger: shard ${shard} is gone`);
    try {
      return readRecordAt(fd, offset, shard);
    } finally {
      if (open === undefined) closeQuietly(fd);
    }
  }

  /** The shard opened to read it (not kept), or undefined when it does not exist. */
  private openForReading(shard: number): number | undefined {
    try {
      return openSync(join(this.folder, shardFileName(shard)), constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new CliError(
        `Cannot read the order ledger ${join(this.folder, shardFileName(shard))} (${errorCode(error)}), so nothing was sent.`,
        ExitCode.Failure,
        ['Fix its permissions, then run the command again.'],
      );
    }
  }

  async prefetch(keys: Iterable<string> | KeyTable): Promise<void> {
    const indexes = this.markPrefetched(keys);
    // The keys grouped by shard with a counting sort of their indexes: typed arrays, no strings.
    const shardOfKey = new Uint16Array(indexes.length);
    const starts = new Uint32Array(LEDGER_SHARDS + 1);
    for (let i = 0; i < indexes.length; i++) {
      const shard = this.table.hashAt(indexes[i]!) & SHARD_MASK;
      shardOfKey[i] = shard;
      starts[shard + 1]!++;
    }
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) starts[shard + 1]! += starts[shard]!;
    const order = new Uint32Array(indexes.length);
    const next = starts.slice(0, LEDGER_SHARDS);
    for (let i = 0; i < indexes.length; i++) order[next[shardOfKey[i]!]!++] = indexes[i]!;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (starts[shard] === starts[shard + 1]) continue;
      // A turn of the event loop now and then, so that a Ctrl-C is seen during a long read.
      if (shard % 64 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.signal?.throwIfAborted();
      const wanted = order.subarray(starts[shard]!, starts[shard + 1]!);
      if (!this.views.has(shard)) this.readWhole(shard, true);
      else for (const index of wanted) this.refresh(shard, this.table.keyAt(index));
      for (const index of wanted) this.countPrefetched(index);
    }
  }

  /**
   * Marks the keys prefetched; returns the table indexes of those that were not yet. An import's
   * KeyTable is taken over when nothing is known yet: a million keys are not copied.
   */
  private markPrefetched(keys: Iterable<string> | KeyTable): Uint32Array {
    if (keys instanceof KeyTable && this.table.count === 0) {
      this.table = keys;
      const indexes = new Uint32Array(keys.count);
      let taken = 0;
      for (let index = 0; index < keys.count; index++) {
        if (keys.valueAt(index) === undefined) continue;
        keys.setAt(index, known(KNOWN_NOTHING, true));
        indexes[taken++] = index;
      }
      return indexes.subarray(0, taken);
    }
    const indexes: number[] = [];
    for (const key of keys) {
      const before = this.table.get(key) ?? known(KNOWN_NOTHING, false);
      if (isPrefetched(before)) continue;
      indexes.push(this.table.set(key, asPrefetched(before)));
    }
    return Uint32Array.from(indexes);
  }

  private countPrefetched(index: number): void {
    const value = this.table.valueAt(index);
    if (value === undefined) return;
    const kind = kindOf(value);
    if (kind === KNOWN_NOTHING) return;
    const status = kind === KNOWN_RECORD ? statusOf(value) : this.objects[offsetOf(value)]?.status;
    if (status === 'created') this.counts.created++;
    else if (status !== undefined && status !== 'not-created') this.counts.inDoubt++;
  }

  knows(externalId: string): boolean {
    const value = this.table.get(externalId);
    return value !== undefined && kindOf(value) !== KNOWN_NOTHING;
  }

  prefetchedCounts(): { created: number; inDoubt: number } {
    return { ...this.counts };
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.checkWritable();
    const { externalId } = request;
    const shard = shardOf(externalId);
    // Opened for appending now, so that reading the shard up to date uses the same file.
    try {
      this.shardFd(shard);
    } catch (error) {
      throw error instanceof CliError ? error : this.fail(error);
    }
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
        const same = after !== undefined && current !== undefined && stateKey(after) === stateKey(current);
        if (!same) continue;
        return { claimed: false, refusal };
      }
      // Unique across processes (the owner's random id) and within this one (a counter).
      const token = `${this.owner.id.slice(0, 10)}-${(++this.claimCount).toString(36)}`;
      const record: LedgerRecord = {
        externalId,
        event: 'claim',
        at: isoNow(),
        token,
        ...this.source,
        owner: this.owner,
        bodyHash: request.bodyHash,
      };
      if (!isFree(current)) record.over = stateKey(current!);
      if (request.line !== undefined) record.line = request.line;
      const line = JSON.stringify(record);
      this.appendToShard(shard, line);
      this.refresh(shard, externalId);
      const now = this.stateOf(externalId);
      if (now?.status === 'claimed' && now.token === token) {
        await this.toWal(line);
        return {
          claimed: true,
          claim: {
            externalId,
            token,
            previous: now.previous,
            bodyHash: request.bodyHash,
            line: request.line,
          },
        };
      }
      this.signal?.throwIfAborted();
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
    const record: LedgerRecord = { externalId, event: 'resolved', at: isoNow(), ...this.source, resolution };
    // Takes effect only on the state judged here: a claim that came in meanwhile stands.
    if (current !== undefined) record.over = stateKey(current);
    if (details.id !== undefined) record.id = details.id;
    if (details.code !== undefined) record.code = details.code;
    if (details.evidence !== undefined) record.evidence = details.evidence;
    await this.write(record);
    this.refresh(shard, externalId);
    const now = this.stateOf(externalId);
    if (now?.event !== 'resolved' || now.at !== record.at) {
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
      if (this.knows(record.externalId)) continue;
      void this.write(record);
    }
    await this.sync();
  }

  async list(filter: LedgerFilter = {}): Promise<ListedEntry[]> {
    const inputs = filter.inputs === undefined ? undefined : new Set(filter.inputs);
    const listed: ListedEntry[] = [];
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (shard % 64 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.signal?.throwIfAborted();
      const states = new Map<string, LedgerEntry>();
      const data = this.readShardFile(shard);
      if (data === undefined) continue;
      this.eachRecord(
        shard,
        data,
        0,
        () => true,
        (record) => {
          const state = applyRecord(states.get(record.externalId), record);
          if (state) states.set(record.externalId, state);
          else states.delete(record.externalId);
        },
      );
      for (const [externalId, entry] of states) {
        if (inputs && !inputs.has(entry.input ?? '') && !inputs.has(entry.journal ?? '')) continue;
        listed.push({ externalId, entry: await this.judged(entry) });
      }
    }
    return listed;
  }

  /** A claim as it stands: being sent by a live owner, or the doubt a dead one left. */
  private async judged(entry: LedgerEntry): Promise<LedgerEntry> {
    if (entry.status !== 'claimed') return entry;
    return (await this.ownerVerdict(entry)) === 'alive' ? entry : settledAsUnknown(entry);
  }

  async openers(): Promise<LedgerOpener[]> {
    const folder = this.heartbeatFolder();
    const names = await readdir(folder).catch(() => [] as string[]);
    const openers: LedgerOpener[] = [];
    for (const name of names) {
      const owner = await readOwner(join(folder, name));
      if (!owner) continue;
      const verdict = owner.id === this.owner.id ? { kind: 'alive' as const } : judgeProcess(owner);
      openers.push({ owner, alive: verdict.kind === 'unverifiable' ? 'unknown' : verdict.kind });
    }
    return openers;
  }

  /** The services (and kinds) a local ledger root holds records of. */
  static async services(root: string): Promise<LedgerService[]> {
    if (!checkFolder(root)) return [];
    const services: LedgerService[] = [];
    for (const name of (await readdir(root)).sort()) {
      const baseUrl = await readServiceFile(join(root, name));
      if (baseUrl === undefined) continue;
      services.push({ baseUrl, kind: 'orders' });
      const contacts = join(root, name, kindFolder('contact-references'));
      if (checkFolder(contacts)) services.push({ baseUrl, kind: 'contact-references' });
    }
    return services;
  }

  /** Removes a service's ledger (every kind) from a local ledger root; how many keys it held. */
  static async forget(root: string, baseUrl: string): Promise<number> {
    const folder = ledgerFolder(root, baseUrl);
    let keys = 0;
    for (const kind of ['orders', 'contact-references'] as const) {
      if (!checkFolder(kind === 'orders' ? folder : join(folder, kindFolder(kind)))) continue;
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
        // A few shards are synced and the log deleted; after many, syncing each would cost more
        // than the command did: the log stays for the next command of this boot to delete (the
        // shards then hold its lines), or to copy in after a crash of the machine.
        if (this.unsynced.size <= CLOSE_SYNC_SHARDS) {
          await this.syncShards(this.unsynced);
          await unlink(this.wal.path);
        }
      }
    } finally {
      this.closed = true;
      this.fds.closeAll();
      await this.wal?.close();
      await this.stopHeartbeat();
    }
  }

  /** Why a key may not be claimed now, or undefined when it may. */
  private async refusal(
    current: LedgerEntry | undefined,
    request: ClaimRequest,
  ): Promise<ClaimRefusal | undefined> {
    if (isFree(current)) return undefined;
    const entry = current!;
    if (entry.status === 'claimed') {
      if ((await this.ownerVerdict(entry)) === 'alive') return { reason: 'claimed', entry };
      const doubt = settledAsUnknown(entry);
      if (request.takeOverDoubt || request.takeOverAny) return undefined;
      return { reason: 'in-doubt', entry: doubt };
    }
    if (request.takeOverAny) return undefined;
    if (entry.status === 'created') return { reason: 'created', entry };
    if (request.takeOverDoubt) return undefined;
    return { reason: 'in-doubt', entry };
  }

  /** Whether the owner of a claim without outcome is alive, as seen from here. */
  private ownerVerdict(entry: LedgerEntry): Promise<'alive' | 'dead'> {
    const owner = entry.owner;
    // A `sending` of ordercli before claims names no owner: in doubt.
    if (!owner) return Promise.resolve('dead');
    if (owner.id === this.owner.id) return Promise.resolve('alive');
    const verdict = judgeProcess(owner);
    if (verdict.kind !== 'unverifiable') return Promise.resolve(verdict.kind);
    const known = this.verdicts.get(owner.id);
    if (!known) return this.watch(owner.id);
    if (performance.now() - known.at < ALIVE_VERDICT_MS) return known.verdict;
    // A dead verdict stands; an alive one is watched again after a while.
    return known.verdict.then((seen) => (seen === 'dead' ? 'dead' : this.watch(owner.id)));
  }

  private watch(ownerId: string): Promise<'alive' | 'dead'> {
    const path = join(this.heartbeatFolder(), ownerId);
    const verdict = observeHeartbeat(() => readFile(path, 'utf8').catch(() => undefined), {
      signal: this.signal,
    });
    this.verdicts.set(ownerId, { verdict, at: performance.now() });
    return verdict;
  }

  private heartbeatFolder(): string {
    return join(this.folder, 'owners');
  }

  private async startHeartbeat(): Promise<void> {
    const folder = this.heartbeatFolder();
    await mkdir(folder, { recursive: true, mode: 0o700 });
    // Heartbeats of processes proven dead (killed before their close) would only cost a wait.
    for (const name of await readdir(folder)) {
      const path = join(folder, name);
      const owner = await readOwner(path);
      if (owner && judgeProcess(owner).kind === 'dead') {
        await rm(path, { force: true });
      }
    }
    const path = join(folder, this.owner.id);
    const state = { path, beat: 0, timer: undefined as unknown as NodeJS.Timeout };
    writeFileSync(path, `${JSON.stringify(this.owner)}\n0\n`, { mode: 0o600 });
    state.timer = setInterval(() => {
      state.beat++;
      writeFile(path, `${JSON.stringify(this.owner)}\n${state.beat}\n`, { mode: 0o600 }).catch(
        () => undefined,
      );
    }, HEARTBEAT_MS);
    state.timer.unref();
    this.heartbeat = state;
  }

  private async stopHeartbeat(): Promise<void> {
    if (!this.heartbeat) return;
    clearInterval(this.heartbeat.timer);
    await rm(this.heartbeat.path, { force: true }).catch(() => undefined);
    this.heartbeat = undefined;
  }

  private checkWritable(): void {
    if (this.readOnly || this.closed) throw new Error('ledger: write to a read-only or closed ledger');
    if (this.failure) throw this.failure;
  }

  private outcome(claim: Claim, fields: Partial<LedgerRecord> & { event: LedgerRecord['event'] }): void {
    const record: LedgerRecord = {
      externalId: claim.externalId,
      at: isoNow(),
      token: claim.token,
      ...this.source,
      ...fields,
    };
    // Its outcome says alone what the order became: a reader need not keep the claim for it.
    if (claim.bodyHash !== undefined) record.bodyHash = claim.bodyHash;
    if (claim.line !== undefined) record.line = claim.line;
    // Not synced: one lost in a crash of the machine leaves its claim, in doubt once its owner is
    // gone; only claims must be on disk before their request leaves.
    if (this.failure) return;
    try {
      this.appendToShard(shardOf(record.externalId), JSON.stringify(record));
    } catch (error) {
      this.fail(error);
    }
  }

  /** Appends a record to its shard and the write-ahead log; resolves once it is on disk. */
  private write(record: LedgerRecord): Promise<void> {
    if (this.failure) return rejected(this.failure);
    const line = JSON.stringify(record);
    try {
      this.appendToShard(shardOf(record.externalId), line);
    } catch (error) {
      return rejected(this.failure ?? this.fail(error));
    }
    return this.toWal(line);
  }

  private toWal(line: string): Promise<void> {
    const onDisk = this.wal!.append(line).then(
      () => undefined,
      (error: unknown) => Promise.reject(this.fail(error)),
    );
    onDisk.catch(() => undefined);
    if (this.wal!.size > WAL_CHECKPOINT_BYTES && !this.checkpointing) this.checkpointing = this.checkpoint();
    return onDisk;
  }

  private appendToShard(shard: number, line: string): void {
    const buffer = Buffer.from(`${line}\n`, 'utf8');
    let written: number;
    try {
      written = writeSync(this.shardFd(shard), buffer, 0, buffer.length, null);
    } catch (error) {
      throw this.fail(error);
    }
    if (written < buffer.length) {
      throw this.fail(Object.assign(new Error('short write (disk full?)'), { code: 'ENOSPC' }));
    }
    this.unsynced.add(shard);
  }

  private fail(error: unknown): Error {
    this.failure ??= error instanceof CliError ? error : new LedgerWriteError(this.folder, error as Error);
    return this.failure;
  }

  /**
   * Brings `states` up to date with what every process appended to the shard since this one read
   * it; `key`: a key whose state is wanted, read from the start if the shard was read for others.
   */
  private refresh(shard: number, key?: string): void {
    const view = this.views.get(shard);
    if (!view) {
      this.readWhole(shard, false);
      return;
    }
    if (key !== undefined && view.partial && !this.wasPrefetched(key) && !view.extra?.has(key)) {
      // Its records before the view's offset were passed over: read them now, for it alone.
      const whole = this.readShardFile(shard);
      if (whole !== undefined) {
        this.eachRecord(
          shard,
          whole.subarray(0, view.offset),
          0,
          (id) => id === key,
          (record, at) => this.apply(record, at),
        );
      }
      view.extra ??= new Set();
      view.extra.add(key);
    }
    // Only what was appended since: the shard's open file, or one opened to read it.
    const open = this.fds.get(shard);
    const fd = open ?? this.openForReading(shard);
    if (fd === undefined) return;
    let data: Buffer;
    try {
      const size = fstatSync(fd).size;
      if (size === view.offset) return;
      if (size < view.offset) {
        // Cut or replaced since: read it again from the start.
        this.views.delete(shard);
        this.forgetShard(shard);
        this.readWhole(shard, false);
        return;
      }
      data = Buffer.allocUnsafe(size - view.offset);
      data = data.subarray(0, readSync(fd, data, 0, data.length, view.offset));
    } finally {
      if (open === undefined) closeQuietly(fd);
    }
    const base = view.offset;
    const consumed = this.eachRecord(
      shard,
      data,
      view.lines,
      () => true,
      (record, at) => this.apply(record, base + at),
    );
    view.offset += consumed.bytes;
    view.lines += consumed.lines;
  }

  /**
   * Reads a whole shard and starts its view: the records of every key, or with `prefetchedOnly`
   * those of the prefetched keys (a shard that does not exist yet has nothing to pass over).
   */
  private readWhole(shard: number, prefetchedOnly: boolean): void {
    // A store that writes keeps the shard open: its claim and outcome need it next.
    const data = this.readOnly ? this.readShardFile(shard) : this.readOpenShard(shard);
    const view: ShardView = { offset: 0, lines: 0 };
    if (data !== undefined && data.length > 0) {
      const wanted = prefetchedOnly ? (id: string) => this.wasPrefetched(id) : () => true;
      const consumed = this.eachRecord(shard, data, 0, wanted, (record, at) => this.apply(record, at));
      view.offset = consumed.bytes;
      view.lines = consumed.lines;
      if (prefetchedOnly) view.partial = true;
    }
    this.views.set(shard, view);
  }

  /** Applies a record that starts at byte `offset` of its shard. */
  private apply(record: LedgerRecord, offset: number): void {
    const id = record.externalId;
    const current = this.stateOf(id);
    const state = applyRecord(current, record);
    if (state === current) return;
    this.setState(id, state, state !== undefined && decidedBy(record, state) ? offset : undefined);
  }

  /** Forgets the states of a shard's keys (it was cut or replaced: it is read again). */
  private forgetShard(shard: number): void {
    for (let index = 0; index < this.table.count; index++) {
      if ((this.table.hashAt(index) & SHARD_MASK) !== shard) continue;
      const value = this.table.valueAt(index);
      if (value === undefined || kindOf(value) === KNOWN_NOTHING) continue;
      if (kindOf(value) === KNOWN_OBJECT) this.freeObject(offsetOf(value));
      this.table.setAt(index, known(KNOWN_NOTHING, isPrefetched(value)));
    }
  }

  /**
   * Visits the complete records of `data` (bytes of the shard from `offset`, line `firstLine`)
   * whose key `wanted` accepts; a line that is not a record is damage. Returns what it consumed
   * (up to the last newline: a torn last line is left for later).
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
      if (end > start) {
        const lineNumber = firstLine + lines;
        const found = this.recordIn(data, start, end, wanted);
        if (found === 'damaged') throw this.damaged(shard, lineNumber, data, start, end);
        if (found !== undefined) visit(found.record, found.at);
      }
      start = end + 1;
    }
    return { bytes: start, lines };
  }

  /**
   * The record of the line `[start, end)` if `wanted` takes its key; undefined if not; 'damaged'
   * if the line is not a record. A record written after a torn one (a disk that was full, a
   * crash) is glued onto it: a line that starts as a record and holds a whole record after the
   * torn part is that record.
   */
  private recordIn(
    data: Buffer,
    start: number,
    end: number,
    wanted: (id: string) => boolean,
  ): { record: LedgerRecord; at: number } | undefined | 'damaged' {
    if (!startsRecord(data, start, end) || data[end - 1] !== CLOSING_BRACE) return 'damaged';
    const glued = data.lastIndexOf(RECORD_START, end - 1);
    const candidates = glued > start ? [start, glued] : [start];
    for (const at of candidates) {
      const id = externalIdAt(data, at + RECORD_START.length);
      if (id === undefined) continue;
      try {
        if (!wanted(id)) {
          // Passed over without a parse: only its shape is checked, unless it is glued.
          if (at === start && glued > start) JSON.parse(data.toString('utf8', start, end));
          return undefined;
        }
        const record = JSON.parse(data.toString('utf8', at, end)) as LedgerRecord;
        if (typeof record.event !== 'string' || typeof record.externalId !== 'string') continue;
        if (typeof record.at !== 'string') record.at = '';
        return { record, at };
      } catch {
        // A torn record before a whole one: try the whole one.
      }
    }
    return 'damaged';
  }

  private damaged(shard: number, line: number, data: Buffer, start: number, end: number): LedgerDamagedError {
    const text = data.subarray(start, Math.min(end, start + 40));
    const what = text.every((byte) => byte === 0)
      ? 'a line of NUL bytes'
      : `not a ledger record: ${JSON.stringify(text.toString('utf8'))}${end - start > 40 ? '…' : ''}`;
    return new LedgerDamagedError(join(this.folder, shardFileName(shard)), line, what);
  }

  /** A shard's bytes, or undefined when it does not exist yet; what is not a file is exit 2. */
  private readShardFile(shard: number): Buffer | undefined {
    const path = join(this.folder, shardFileName(shard));
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new CliError(
        `Cannot read the order ledger ${path} (${errorCode(error)}), so nothing was sent.`,
        ExitCode.Failure,
        ['Fix its permissions, then run the command again.'],
      );
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile()) {
        throw new UsageError(
          `The order ledger file ${path} is ${fileKind(info)}, not a regular file; nothing was sent.`,
          ['Remove it: the ledger writes its own files.'],
        );
      }
      return this.readAll(fd, info.size);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The bytes of an open shard, in a buffer this ledger reuses: valid until the next read (the
   * callers parse what they need at once). Reading 4096 shards into new buffers would leave
   * hundreds of megabytes for the garbage collector to find.
   */
  private readAll(fd: number, size: number): Buffer {
    let length = 0;
    for (;;) {
      if (this.readBuffer.length < Math.max(size, length) + 65536) {
        const bigger = Buffer.allocUnsafe(Math.max(size, length) * 2 + 65536);
        this.readBuffer.copy(bigger, 0, 0, length);
        this.readBuffer = bigger;
      }
      const read = readSync(fd, this.readBuffer, length, this.readBuffer.length - length, length);
      if (read === 0) return this.readBuffer.subarray(0, length);
      length += read;
    }
  }

  /** A shard's bytes through its kept file (created if it does not exist yet). */
  private readOpenShard(shard: number): Buffer {
    let fd: number;
    try {
      fd = this.shardFd(shard);
    } catch (error) {
      throw error instanceof CliError ? error : this.fail(error);
    }
    return this.readAll(fd, fstatSync(fd).size);
  }

  /** The shard's open file, opened for reading and appending if it is not open yet. */
  private shardFd(shard: number): number {
    const open = this.fds.get(shard);
    if (open !== undefined) return open;
    const path = join(this.folder, shardFileName(shard));
    let fd: number;
    try {
      fd = openSync(path, SHARD_FLAGS | constants.O_NONBLOCK, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EMFILE' && code !== 'ENFILE') throw error;
      // Fewer descriptors than kept shards here: keep half as many, and open it again.
      this.fds.shrink();
      fd = openSync(path, SHARD_FLAGS | constants.O_NONBLOCK, 0o600);
    }
    const info = fstatSync(fd);
    if (!info.isFile()) {
      closeSync(fd);
      throw new UsageError(
        `The order ledger file ${path} is ${fileKind(info)}, not a regular file; nothing was sent.`,
      );
    }
    // Outcomes not yet synced in a shard closed to make room stay in `unsynced`: synced by reopening.
    this.fds.add(shard, fd);
    return fd;
  }

  private async syncShards(written: Set<number>): Promise<void> {
    const shards = [...written];
    written.clear();
    for (let i = 0; i < shards.length; i += 16) {
      await Promise.all(
        shards.slice(i, i + 16).map(async (shard) => {
          const fd = openSync(join(this.folder, shardFileName(shard)), SHARD_FLAGS, 0o600);
          try {
            await fdatasyncFd(fd);
          } finally {
            closeQuietly(fd);
          }
        }),
      );
    }
  }

  /** Starts a new write-ahead log; once the shards written so far are synced, deletes the old one. */
  private async checkpoint(): Promise<void> {
    try {
      const next = await this.openWal();
      const old = this.wal!;
      const shards = this.unsynced;
      this.wal = next;
      this.unsynced = new Set();
      try {
        await old.flush();
      } finally {
        await old.close();
      }
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
    const folder = join(this.folder, 'wal');
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const path = join(folder, `w-${this.owner.id}-${randomBytes(4).toString('hex')}.ndjson`);
    // A round starts as soon as the one before ends: the claims queued meanwhile share its sync.
    const log = await AppendLog.open(path, {
      what: `the order ledger's log ${path}`,
      synced: true,
    });
    void log.append(JSON.stringify({ wal: 2, owner: this.owner })).catch(() => undefined);
    return log;
  }

  /**
   * Write-ahead logs left behind: one of another boot of this host (the machine restarted) is
   * copied into the shards where lines are missing, then removed; one of this boot is not needed
   * (the shards have its lines) and is removed once its owner is proven dead; any other is left.
   * Logs of ordercli before claims (`<pid>-<id>.ndjson`) are recovered when their PID is gone.
   */
  private async recoverLogs(): Promise<void> {
    const folder = join(this.folder, 'wal');
    let names: string[];
    try {
      names = await readdir(folder);
    } catch {
      return;
    }
    const me = thisProcess();
    for (const name of names) {
      const path = join(folder, name);
      let owner: ClaimOwner | undefined;
      let legacyPid: number | undefined;
      const legacy = /^(\d+)(?:-[0-9a-f]+)?\.ndjson$/.exec(name);
      if (legacy) legacyPid = Number(legacy[1]);
      else if (/^w-[0-9a-f]+-[0-9a-f]+\.ndjson$/.test(name)) owner = await walOwner(path);
      else continue;
      if (owner?.id === this.owner.id) continue;
      let recover: boolean;
      if (legacyPid !== undefined) {
        if (judgeProcess({ ...me, pid: legacyPid, start: undefined }).kind !== 'dead') continue;
        recover = true;
      } else if (owner === undefined) {
        continue;
      } else if (owner.boot !== undefined && owner.boot !== me.boot && owner.host === me.host) {
        recover = true;
      } else {
        if (judgeProcess(owner).kind !== 'dead') continue;
        recover = false;
      }
      // Taken by renaming, so that two commands opening the ledger at once do not both copy it.
      const taken = `${path}.recovering-${this.owner.id}`;
      try {
        await rename(path, taken);
      } catch {
        continue;
      }
      if (recover) await this.copyMissingLines(taken);
      await unlink(taken);
    }
  }

  private async copyMissingLines(path: string): Promise<void> {
    const data = await readFile(path);
    const byShard = new Map<number, Buffer[]>();
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end !== -1; end = data.indexOf(NEWLINE, start)) {
      const line = data.subarray(start, end + 1);
      start = end + 1;
      if (!startsRecord(line, 0, line.length)) continue;
      const id = externalIdAt(line, RECORD_START.length);
      if (id === undefined) continue;
      const shard = shardOf(id);
      const lines = byShard.get(shard);
      if (lines) lines.push(line);
      else byShard.set(shard, [line]);
    }
    for (const [shard, lines] of byShard) {
      const existing = this.readShardFile(shard) ?? Buffer.alloc(0);
      const missing = lines.filter((line) => existing.indexOf(line) === -1);
      if (missing.length === 0) continue;
      const fd = openSync(join(this.folder, shardFileName(shard)), SHARD_FLAGS, 0o600);
      try {
        const buffer = Buffer.concat(missing);
        if (writeSync(fd, buffer, 0, buffer.length, null) < buffer.length) {
          throw Object.assign(new Error('short write (disk full?)'), { code: 'ENOSPC' });
        }
        await fdatasyncFd(fd);
      } finally {
        closeQuietly(fd);
      }
    }
  }
}

/**
 * The state one settled record gives on its own (a created, failed or unknown outcome, or a
 * person's resolution): what `apply` keeps as the record's offset.
 */
function settledEntry(record: LedgerRecord): LedgerEntry | undefined {
  const { token, ...rest } = record;
  const entry = applyRecord(undefined, rest);
  if (entry !== undefined && token !== undefined) entry.token = token;
  return entry;
}

const SETTLED_FIELDS = [
  'status',
  'event',
  'at',
  'token',
  'by',
  'input',
  'journal',
  'bodyHash',
  'httpStatus',
  'id',
  'code',
  'message',
  'reason',
  'evidence',
  'resolved',
] as const;

/** Whether `state` is what `record` gives on its own, so that its offset can stand for it. */
function decidedBy(record: LedgerRecord, state: LedgerEntry): boolean {
  if (state.status === 'claimed' || record.event === 'claim' || record.event === 'sending') return false;
  if (record.event === 'not-sent') return false;
  const alone = settledEntry(record);
  return alone !== undefined && SETTLED_FIELDS.every((field) => alone[field] === state[field]);
}

/*
 * What `table` holds of a key, one number: bit 0, whether it was prefetched; bits 1-2, what is
 * known (nothing, a state in a slot of `objects`, or a state one record decides); for the last,
 * its status in bits 3-4; above them, the record's byte offset in its shard (exact up to 2^48
 * bytes) or the slot's number.
 */
const KNOWN_NOTHING = 0;
const KNOWN_OBJECT = 1;
const KNOWN_RECORD = 2;
const STATUS_CODES: readonly LedgerStatus[] = ['created', 'in-doubt', 'not-created', 'claimed'];

function known(kind: number, prefetched: boolean, status?: LedgerStatus, offset = 0): number {
  const code = status === undefined ? 0 : STATUS_CODES.indexOf(status);
  return ((offset * 4 + code) * 4 + kind) * 2 + (prefetched ? 1 : 0);
}

function isPrefetched(value: number): boolean {
  return value % 2 === 1;
}

/** The same knowledge, marked prefetched. */
function asPrefetched(value: number): number {
  return isPrefetched(value) ? value : value + 1;
}

function kindOf(value: number): number {
  return Math.floor(value / 2) % 4;
}

function statusOf(value: number): LedgerStatus {
  return STATUS_CODES[Math.floor(value / 8) % 4]!;
}

function offsetOf(value: number): number {
  return Math.floor(value / 32);
}

function kindFolder(kind: LedgerKind): string {
  return kind;
}

async function walOwner(path: string): Promise<ClaimOwner | undefined> {
  try {
    const data = await readFile(path);
    const end = data.indexOf(NEWLINE);
    const first = JSON.parse(data.toString('utf8', 0, end === -1 ? data.length : end)) as {
      owner?: ClaimOwner;
    };
    return first.owner;
  } catch {
    return undefined;
  }
}

/**
 * The shard files kept open, at most `limit`: the least recently used is closed to make room.
 * Typed arrays rather than a Map reordered at each use, whose tables would churn.
 */
class OpenShards {
  private readonly fdOf = new Int32Array(LEDGER_SHARDS).fill(-1);
  private readonly lastUse = new Float64Array(LEDGER_SHARDS);
  private clock = 0;
  private open = 0;

  constructor(private limit: number) {}

  /** Keeps half as many files open from now on (the process ran out of descriptors). */
  shrink(): void {
    this.limit = Math.max(16, Math.floor(this.open / 2));
    while (this.open > this.limit) this.closeLeastUsed();
  }

  /** The shard's open file (marked used), or undefined. */
  get(shard: number): number | undefined {
    const fd = this.fdOf[shard]!;
    if (fd < 0) return undefined;
    this.lastUse[shard] = ++this.clock;
    return fd;
  }

  add(shard: number, fd: number): void {
    if (this.open >= this.limit) this.closeLeastUsed();
    this.fdOf[shard] = fd;
    this.lastUse[shard] = ++this.clock;
    this.open++;
  }

  closeAll(): void {
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) if (this.fdOf[shard]! >= 0) this.close(shard);
  }

  private closeLeastUsed(): void {
    let oldest = -1;
    for (let shard = 0; shard < LEDGER_SHARDS; shard++) {
      if (this.fdOf[shard]! >= 0 && (oldest < 0 || this.lastUse[shard]! < this.lastUse[oldest]!))
        oldest = shard;
    }
    if (oldest >= 0) this.close(oldest);
  }

  private close(shard: number): void {
    closeQuietly(this.fdOf[shard]!);
    this.fdOf[shard] = -1;
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

function rejected(error: Error): Promise<never> {
  const promise = Promise.reject(error);
  promise.catch(() => undefined);
  return promise;
}

/** Whether the bytes `[start, end)` begin with `{"externalId":`. */
function startsRecord(data: Buffer, start: number, end: number): boolean {
  return (
    end - start > RECORD_START.length &&
    data.compare(RECORD_START, 0, RECORD_START.length, start, start + RECORD_START.length) === 0
  );
}

/** The JSON string that starts at `start` (a key), or undefined when it is not whole. */
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

/** The record that starts at `offset` of an open shard. */
function readRecordAt(fd: number, offset: number, shard: number): LedgerRecord {
  let length = 1024;
  for (;;) {
    const buffer = Buffer.allocUnsafe(length);
    const read = readSync(fd, buffer, 0, length, offset);
    const end = buffer.subarray(0, read).indexOf(NEWLINE);
    if (end !== -1) {
      const record = JSON.parse(buffer.toString('utf8', 0, end)) as LedgerRecord;
      if (typeof record.at !== 'string') record.at = '';
      return record;
    }
    if (read < length) throw new Error(`ledger: no whole record at ${offset} of shard ${shard}`);
    length *= 4;
  }
}
