/**
 * Upgrades and moves forget nothing, off the sending path: `foldJournal` (the journal an earlier
 * release kept beside an input, folded in once), `copyLedger` (`ledger copy --to`) and
 * `checkLedgerMove` (a new ledger refused while the default one holds the service's keys). Other
 * ledgers are reached through open.ts's functions, given by the caller (open.ts imports this one).
 */
import { createReadStream, existsSync } from 'node:fs';
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { UsageError } from '../core/errors.js';
import { redactUrlPassword } from '../core/redact.js';
import { normalizeBaseUrl } from '../core/url.js';
import { shellWord } from '../io/quote.js';
import type { LedgerPlace } from './open.js';
import { applyRecord, type LedgerEntry, type LedgerRecord, type RecordSource } from './record.js';
import type { LedgerKind, LedgerService, LedgerStore, ListedEntry, OpenLedgerOptions } from './store.js';

/** The suffix a journal gets once folded. */
export const FOLDED_SUFFIX = '.folded';

/** What `foldJournal` did, for the note an import prints. */
export interface FoldedJournal {
  path: string;
  /** Keys recorded in the ledger from it (those it knew of and the ledger did not). */
  adopted: number;
  /** Renamed to `<path>.folded` (not when it also holds other services' orders). */
  renamed: boolean;
}

/**
 * Folds the journal at `path` (`<input>.journal.ndjson`, or a `--journal` file: what ordercli wrote
 * beside the input before the ledger was its only store) into `ledger`, the store of its service:
 * what it records as created or in doubt, of keys the ledger does not know after `prefetch`, is
 * recorded so (created stays created, in doubt stays in doubt); then the file is renamed
 * `<journal>.folded`, so that it is read once. Undefined when there is no such file.
 */
export async function foldJournal(
  ledger: LedgerStore,
  path: string,
  source: RecordSource,
  signal?: AbortSignal,
): Promise<FoldedJournal | undefined> {
  const read = await readJournal(path, ledger.baseUrl, ledger.sameServiceAs, signal);
  // No file there, or a file that is not a journal (`--journal` naming some other file): left alone.
  if (read === undefined || !read.journal) return undefined;
  const records: LedgerRecord[] = [];
  for (const [externalId, state] of read.states) {
    if (ledger.knows(externalId)) continue;
    const record = recordOfState(externalId, state, { ...source, journal: path });
    if (record) records.push(record);
  }
  if (records.length > 0) await ledger.adopt(records);
  const renamed = !read.otherServices;
  if (renamed) await rename(path, `${path}${FOLDED_SUFFIX}`);
  return { path, adopted: records.length, renamed };
}

/** The record that gives a key the state it has elsewhere (undefined for one that may be sent). */
export function recordOfState(
  externalId: string,
  state: LedgerEntry,
  source: Partial<RecordSource>,
): LedgerRecord | undefined {
  if (state.status === 'not-created') return undefined;
  const at = state.at;
  const record: LedgerRecord =
    state.status === 'created'
      ? state.resolved === 'created'
        ? { externalId, event: 'resolved', at, ...source, resolution: 'created' }
        : { externalId, event: 'created', at, ...source }
      : {
          externalId,
          event: 'unknown',
          at,
          ...source,
          reason: state.reason ?? 'the run that sent it stopped before the answer',
        };
  for (const field of ['httpStatus', 'id', 'code', 'bodyHash', 'line', 'evidence', 'input'] as const) {
    if (state[field] !== undefined) (record as unknown as Record<string, unknown>)[field] = state[field];
  }
  return record;
}

/**
 * The states of one service's keys in a journal file, replayed as its runs wrote them (every
 * claim in it was granted by the ledger then); a line that is not a record (a torn last line, a
 * `run` line) is passed over. Undefined when the file does not exist.
 */
async function readJournal(
  path: string,
  baseUrl: string,
  alias: string | undefined,
  signal?: AbortSignal,
): Promise<{ states: Map<string, LedgerEntry>; otherServices: boolean; journal: boolean } | undefined> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const stream = createReadStream(path, { encoding: 'utf8' });
  const opened = await new Promise<boolean>((resolveOpen, reject) => {
    stream.once('ready', () => resolveOpen(true));
    stream.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ENOENT' ? resolveOpen(false) : reject(error),
    );
  });
  if (!opened) return undefined;
  const services = new Set([baseUrl, alias].filter((url) => url !== undefined));
  const states = new Map<string, LedgerEntry>();
  let otherServices = false;
  let journal = false;
  for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
    signal?.throwIfAborted();
    if (line === '') continue;
    const record = parseRecord(line);
    // A journal's first line is a record or its `run` line: anything else is not one.
    if (!journal && !isJournalLine(line)) break;
    if (record?.baseUrl === undefined) continue;
    journal = true;
    if (!services.has(normalizeBaseUrl(record.baseUrl))) {
      otherServices = true;
      continue;
    }
    const state = applyRecord(states.get(record.externalId), record, { granted: true });
    if (state) states.set(record.externalId, state);
    else states.delete(record.externalId);
  }
  stream.destroy();
  return { states, otherServices, journal };
}

function isJournalLine(line: string): boolean {
  try {
    const value = JSON.parse(line) as { event?: unknown; baseUrl?: unknown };
    return typeof value.event === 'string' && typeof value.baseUrl === 'string';
  } catch {
    return false;
  }
}

function parseRecord(line: string): LedgerRecord | undefined {
  try {
    const value = JSON.parse(line) as LedgerRecord;
    return typeof value.externalId === 'string' && typeof value.event === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** How this module opens ledgers: open.ts's `openLedger` and `ledgerServices`, given by the caller. */
export interface LedgerAccess {
  openLedger(place: LedgerPlace, options: OpenLedgerOptions): Promise<LedgerStore>;
  ledgerServices(place: LedgerPlace): Promise<LedgerService[]>;
}

/** What `copyLedger` did for one service and kind. */
export interface CopiedService {
  baseUrl: string;
  kind: LedgerKind;
  /** Keys created or in doubt recorded in the target. */
  copied: number;
  /** Keys the target already had a record of (left as they are). */
  known: number;
  /**
   * Of those, the keys the target has as free to send (refused, or resolved as not created)
   * although the source has them created or in doubt: a person must check them.
   */
  conflicts: string[];
}

/**
 * Records in the ledger `to` what the ledger `from` knows: for every service and kind, each key
 * created or in doubt (a claim being sent right now is copied as in doubt) that `to` has no
 * record of, as the record that gives it that state (`by` `ledger copy`). Keys `to` already knows
 * keep their state there, so a second run copies nothing. Refused and not-created keys may be sent
 * again anyway: they are not copied.
 */
export async function copyLedger(
  from: LedgerPlace,
  to: LedgerPlace,
  access: LedgerAccess,
  signal?: AbortSignal,
): Promise<CopiedService[]> {
  const copied: CopiedService[] = [];
  for (const service of await access.ledgerServices(from)) {
    signal?.throwIfAborted();
    copied.push(await copyService(from, to, service, access, signal));
  }
  return copied;
}

async function copyService(
  from: LedgerPlace,
  to: LedgerPlace,
  { baseUrl, kind }: LedgerService,
  access: LedgerAccess,
  signal: AbortSignal | undefined,
): Promise<CopiedService> {
  const source = { by: 'ledger copy' } as const;
  const reader = await access.openLedger(from, { baseUrl, kind, source, readOnly: true, signal });
  let held: ListedEntry[];
  try {
    held = (await reader.list()).filter(({ entry }) => entry.status !== 'not-created');
  } finally {
    await reader.close();
  }
  const done: CopiedService = { baseUrl, kind, copied: 0, known: 0, conflicts: [] };
  if (held.length === 0) return done;
  // The target is new for this service by design: the move check must not refuse it.
  const target = await access.openLedger(to, { baseUrl, kind, source, signal, allowNewLedger: true });
  try {
    const known = new Map((await target.list()).map(({ externalId, entry }) => [externalId, entry]));
    const records: LedgerRecord[] = [];
    for (const { externalId, entry } of held) {
      const there = known.get(externalId);
      if (there !== undefined) {
        done.known++;
        if (there.status === 'not-created') done.conflicts.push(externalId);
        continue;
      }
      const record = recordOfState(externalId, entry, {
        ...source,
        ...(entry.journal !== undefined ? { journal: entry.journal } : {}),
      });
      if (record) records.push(record);
    }
    if (records.length > 0) await target.adopt(records);
    done.copied = records.length;
  } finally {
    await target.close();
  }
  return done;
}

/** Keys of the default ledger sampled, and looked up in the new one. */
const MOVE_CHECK_SAMPLE = 16;

/**
 * The move check, before a command writes to the ledger `place` names when that is not the
 * default local ledger (`<config folder>/ledger`): when the default ledger holds keys of this
 * service and kind (created, in doubt or being sent) and the new ledger has no record of the
 * service, throws a UsageError (exit 2, nothing sent) saying how to copy them. `openTarget` opens
 * the ledger of `place` read-only (so that this check leaves nothing in the store that sends).
 */
export async function checkLedgerMove(
  place: LedgerPlace,
  options: OpenLedgerOptions,
  openTarget: (options: OpenLedgerOptions) => Promise<LedgerStore>,
): Promise<void> {
  if (place.configFolder === undefined) return;
  const readOnly: OpenLedgerOptions = {
    baseUrl: options.baseUrl,
    kind: options.kind,
    source: options.source,
    readOnly: true,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  };
  const defaultRoot = join(place.configFolder, 'ledger');
  const held = await heldByDefaultLedger(defaultRoot, readOnly);
  if (held.length === 0) return;
  const target = await openTarget(readOnly);
  try {
    if (await knowsService(target, held)) return;
    const what = options.kind === 'orders' ? 'orders' : 'contact references';
    const given = redactUrlPassword(place.ledger ?? '');
    const error = new UsageError(
      `The order ledger ${target.location} has no record of ${target.baseUrl}, but the default ledger ${defaultRoot} holds ${what} of it (created or in doubt, such as ${held[0]}): sending through the new ledger could send them again, so nothing was sent.`,
    );
    error.hint = `Copy them first with ordercli --ledger ${shellWord(defaultRoot)} ledger copy --to ${shellWord(given)}, or pass --force to start the new ledger empty.`;
    throw error;
  } finally {
    await target.close();
  }
}

/** The keys of a service and kind the default local ledger holds that must not be sent again. */
async function heldByDefaultLedger(root: string, options: OpenLedgerOptions): Promise<string[]> {
  if (!existsSync(root)) return [];
  const { LocalLedger } = await import('./local.js');
  const store = await LocalLedger.open(root, options);
  try {
    if (!existsSync(store.location)) return [];
    // A sample is enough to tell (a whole ledger of a million orders would be read at every command).
    const entries = await store.list({ limit: MOVE_CHECK_SAMPLE });
    return entries.filter(({ entry }) => entry.status !== 'not-created').map(({ externalId }) => externalId);
  } finally {
    await store.close();
  }
}

/**
 * Whether a ledger has a record of a service: one of the default ledger's sampled keys (a copy),
 * or any key at all (a ledger started with `--force`, or shared with others).
 */
async function knowsService(store: LedgerStore, held: readonly string[]): Promise<boolean> {
  const found = await Promise.all(held.map((externalId) => store.lookup(externalId)));
  if (found.some((entry) => entry !== undefined)) return true;
  return (await store.list({ limit: 1 })).length > 0;
}
