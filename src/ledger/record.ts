/**
 * The one record model of what was sent: the order ledger (local shards or PostgreSQL) writes
 * these records (and the journals of earlier releases held them), and one function (`applyRecord`) says how a record
 * changes the state of its key (an order's `externalId`, a contact reference's
 * `contact.externalReference`).
 *
 * Events:
 * - `claim` (`token`, `owner`, `bodyHash`, optional `over`): the key is about to be sent by the
 *   process `owner`. It takes effect only as a compare-and-swap: when the key is free (never sent,
 *   refused, or resolved as not created) and `over` is absent, or when `over` names the current
 *   state (`stateKey`), which is how `--retry-unknown` or `--force` take over a known state. Of
 *   two claims of the same key, the first in the store's order wins; the other is ignored, and its
 *   writer does not send.
 * - `created`, `failed`, `unknown`, `not-sent` (each with the `token` of its claim): the outcome.
 *   One whose token is not the current claim's changes nothing. `not-sent` restores the state
 *   before the claim (the request never left).
 * - `resolved` (`resolution`, optional `id`, `code`, `evidence`): a person checked at the service.
 * - `validated` (`validatedAt`): the service's `sales_order_validated` notification of a created
 *   order arrived (`--await validated`); it changes nothing of another state.
 * - Read, never written (ordercli before claims): `sending` (a claim without token or owner),
 *   outcomes without token (they apply to whatever the state is), and the journal's
 *   `resolved-created` / `resolved-not-created`.
 */
import { hash } from 'node:crypto';
import type { Owner } from '../core/liveness.js';
import type { ClaimRefusal, ClaimRequest } from './store.js';

export type RecordEvent =
  | 'claim'
  | 'created'
  | 'failed'
  | 'unknown'
  | 'not-sent'
  | 'resolved'
  | 'validated'
  | 'sending'
  | 'resolved-created'
  | 'resolved-not-created';

/** Which command wrote a record, and for what. */
export interface RecordSource {
  by:
    | 'orders create'
    | 'orders new'
    | 'orders import'
    | 'orders resolve'
    | 'refs contacts import'
    | 'ledger copy'
    | 'ledger init'
    | 'ledger forget';
  /** The input's identity (input-identity.ts; an absolute path in records of earlier releases), or `(stdin)`. */
  input?: string;
  /** The `--journal` name of the input's history (an absolute journal path in earlier releases' records). */
  journal?: string;
}

/** The process that holds a claim: the one owner type of core/liveness.ts (its `id` names its heartbeat). */
export type ClaimOwner = Owner;

/** What a record says of a send, and a state keeps of it. */
interface SendDetails extends Partial<RecordSource> {
  at: string;
  /** The claim (absent for records written before claims). */
  token?: string;
  owner?: ClaimOwner;
  bodyHash?: string;
  httpStatus?: number;
  id?: string | number;
  code?: string;
  message?: string;
  reason?: string;
  evidence?: string;
  /** The record's line in the input of the run that sent it. */
  line?: number;
  /** A created order's `sales_order_validated` notification arrived then (`--await validated`). */
  validatedAt?: string;
}

/** One record, as stored (a line of an earlier release's journal adds `baseUrl`). */
export interface LedgerRecord extends SendDetails {
  externalId: string;
  event: RecordEvent;
  over?: string;
  resolution?: Resolution;
  baseUrl?: string;
}

export type Resolution = 'created' | 'not-created';

/**
 * What the records say of one key: `created`; `claimed` (a claim without outcome: being sent by
 * its owner, or in doubt if the owner is gone); `in-doubt` (the outcome is unknown);
 * `not-created` (refused, or resolved so: it may be sent again).
 */
export type LedgerStatus = 'created' | 'claimed' | 'in-doubt' | 'not-created';

export interface LedgerEntry extends SendDetails {
  status: LedgerStatus;
  /** The record that decided it. */
  event: Exclude<RecordEvent, 'not-sent'>;
  /** When the key was last claimed (an outcome keeps it). */
  sentAt?: string;
  /** Set when a person's `orders resolve` decided this state. */
  resolved?: Resolution;
  /** For a claim: the state before it, which `not-sent` restores. */
  previous?: LedgerEntry;
}

/** A hash of the exact body sent, so a later run can tell that a record changed. */
export function bodyHash(json: string): string {
  return hash('sha256', json, 'base64url').slice(0, 22);
}

/** Names the current state of a key, for a claim's `over` (compare-and-swap). */
export function stateKey(entry: LedgerEntry): string {
  return `${entry.event}:${entry.token ?? ''}:${entry.at}`;
}

/** Whether a state lets a new claim in without `over`. */
export function isFree(entry: LedgerEntry | undefined): boolean {
  return entry === undefined || entry.status === 'not-created';
}

/** The fields of a record that are set (a spread of it must not unset what it lacks). */
function definedOf(record: LedgerRecord): Partial<LedgerRecord> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

function sourceOf(record: Partial<RecordSource>): Partial<RecordSource> {
  const source: Partial<RecordSource> = {};
  if (record.by !== undefined) source.by = record.by;
  if (record.input !== undefined) source.input = record.input;
  if (record.journal !== undefined) source.journal = record.journal;
  return source;
}

/** An outcome keeps the details of the claim it answers. */
function keepClaimDetails(entry: LedgerEntry, current: LedgerEntry | undefined): void {
  if (current === undefined) return;
  const sentAt = current.status === 'claimed' ? current.at : current.sentAt;
  if (sentAt !== undefined) entry.sentAt = sentAt;
  if (current.line !== undefined && entry.line === undefined) entry.line = current.line;
  if (current.bodyHash !== undefined && entry.bodyHash === undefined) entry.bodyHash = current.bodyHash;
  if (current.token !== undefined && entry.token === undefined) entry.token = current.token;
}

/**
 * The one definition of how a record changes the state of its key.
 * `granted`: the records are an earlier release's journal's, whose claims its ledger granted: each applies.
 */
export function applyRecord(
  current: LedgerEntry | undefined,
  record: LedgerRecord,
  options: { granted?: boolean } = {},
): LedgerEntry | undefined {
  switch (record.event) {
    case 'claim': {
      const applies =
        options.granted === true ||
        (record.over === undefined
          ? isFree(current)
          : current !== undefined && stateKey(current) === record.over);
      if (!applies || record.token === undefined) return current;
      return claimEntry(record, current);
    }
    case 'sending':
      // Before claims: every `sending` applied; one left without an outcome is in doubt.
      return claimEntry(record, current?.status === 'claimed' ? settledAsUnknown(current) : current);
    case 'created':
    case 'failed':
    case 'unknown':
      return answers(record, current)
        ? outcomeEntry(record as LedgerRecord & { event: typeof record.event }, current)
        : current;
    case 'not-sent':
      if (current?.status !== 'claimed' || !answers(record, current)) return current;
      return current.previous;
    case 'resolved':
    case 'resolved-created':
    case 'resolved-not-created':
      return resolvedEntry(record, current);
    case 'validated':
      if (current?.status !== 'created' || current.validatedAt !== undefined) return current;
      return { ...current, validatedAt: record.validatedAt ?? record.at };
    default:
      // A record of a later version of ordercli: ignored, as it changes nothing this one knows.
      return current;
  }
}

/** The state an outcome of the current claim gives (`created`, `failed`, `unknown`). */
function outcomeEntry(
  record: LedgerRecord & { event: 'created' | 'failed' | 'unknown' },
  current: LedgerEntry | undefined,
): LedgerEntry {
  const entry: LedgerEntry = {
    status: record.event === 'created' ? 'created' : record.event === 'failed' ? 'not-created' : 'in-doubt',
    event: record.event,
    at: record.at,
    ...sourceOf(record),
  };
  if (record.httpStatus !== undefined) entry.httpStatus = record.httpStatus;
  if (record.id !== undefined) entry.id = record.id;
  if (record.code !== undefined) entry.code = record.code;
  if (record.message !== undefined) entry.message = record.message;
  if (record.reason !== undefined) entry.reason = record.reason;
  if (record.line !== undefined) entry.line = record.line;
  if (record.token !== undefined) entry.token = record.token;
  // An outcome adopted from a journal carries the body's hash itself.
  if (record.bodyHash !== undefined) entry.bodyHash = record.bodyHash;
  keepClaimDetails(entry, current);
  return entry;
}

/** The state a person's resolution gives (or the current one, when it does not apply). */
function resolvedEntry(record: LedgerRecord, current: LedgerEntry | undefined): LedgerEntry | undefined {
  const resolution: Resolution | undefined =
    record.event === 'resolved-created'
      ? 'created'
      : record.event === 'resolved-not-created'
        ? 'not-created'
        : record.resolution;
  if (resolution !== 'created' && resolution !== 'not-created') return current;
  // Written over a known state (`over`): it applies only if that state still stands.
  if (record.over !== undefined && (current === undefined || stateKey(current) !== record.over)) {
    return current;
  }
  const entry: LedgerEntry = {
    status: resolution,
    event: 'resolved',
    at: record.at,
    // A person's word stays in the history of the input that sent the key.
    ...sourceOf({ input: current?.input, journal: current?.journal, ...definedOf(record) }),
    resolved: resolution,
  };
  if (resolution === 'created') {
    const id = record.id ?? current?.id;
    if (id !== undefined) entry.id = id;
    const code = record.code ?? (record.id === undefined ? current?.code : undefined);
    if (code !== undefined) entry.code = code;
  } else {
    entry.message = 'checked at the service: not created';
  }
  if (record.evidence !== undefined) entry.evidence = record.evidence;
  if (record.bodyHash !== undefined) entry.bodyHash = record.bodyHash;
  keepClaimDetails(entry, current);
  return entry;
}

/** An outcome answers the current claim when its token is the claim's (or it has none: older records). */
function answers(record: LedgerRecord, current: LedgerEntry | undefined): boolean {
  if (record.token === undefined) return true;
  return current?.status === 'claimed' && current.token === record.token;
}

function claimEntry(record: LedgerRecord, current: LedgerEntry | undefined): LedgerEntry {
  const event = record.event === 'sending' ? 'sending' : 'claim';
  const entry: LedgerEntry = { status: 'claimed', event, at: record.at, ...sourceOf(record) };
  if (record.token !== undefined) entry.token = record.token;
  if (record.owner !== undefined) entry.owner = record.owner;
  if (record.bodyHash !== undefined) entry.bodyHash = record.bodyHash;
  if (record.line !== undefined) entry.line = record.line;
  entry.sentAt = record.at;
  // A previous claim is never restored as a claim: that is a doubt.
  if (current !== undefined)
    entry.previous = current.status === 'claimed' ? settledAsUnknown(current) : current;
  return entry;
}

/**
 * The one rule of both stores for claiming over `entry`: the refusal, or undefined when the claim
 * may be made. `ownerAlive` says whether a claim's owner is alive (asked only for a claim).
 */
export async function refusalOf(
  entry: LedgerEntry | undefined,
  request: Pick<ClaimRequest, 'takeOverDoubt' | 'takeOverAny'>,
  ownerAlive: () => boolean | Promise<boolean>,
): Promise<ClaimRefusal | undefined> {
  if (isFree(entry)) return undefined;
  const [any, doubt] = [request.takeOverAny === true, request.takeOverAny || request.takeOverDoubt];
  if (entry!.status === 'claimed') {
    if (await ownerAlive()) return { reason: 'claimed', entry: entry! };
    return doubt ? undefined : { reason: 'in-doubt', entry: settledAsUnknown(entry!) };
  }
  if (entry!.status === 'created') return any ? undefined : { reason: 'created', entry: entry! };
  return doubt ? undefined : { reason: 'in-doubt', entry: entry! };
}

/** A claim whose owner is gone, as the doubt it leaves. */
export function settledAsUnknown(claim: LedgerEntry): LedgerEntry {
  const entry: LedgerEntry = {
    ...claim,
    status: 'in-doubt',
    event: 'unknown',
    reason: claim.reason ?? 'the command that sent it stopped before the answer',
  };
  // The owner stays named: who left it in doubt (a runner of a fleet) is what a person asks first.
  delete entry.previous;
  return entry;
}

/** `pid 4242 on build-7 since 2026-11-26T10:00:00.000Z` */
export function describeOwner(entry: LedgerEntry): string {
  const owner = entry.owner;
  if (!owner) return `since ${entry.at}`;
  return `pid ${owner.pid} on ${owner.host} since ${entry.at}`;
}
