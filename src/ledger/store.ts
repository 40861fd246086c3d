/**
 * The order ledger: the one place that says whether a key (an order's `externalId`, a contact
 * reference's `contact.externalReference`) may be sent to a service. Every command that sends
 * (`orders create`, `orders new`, `orders import`, `refs contacts import`) claims the key
 * immediately before its request leaves; of any number of processes, exactly one holds a claim,
 * and the claim is durable before the request leaves. Outcomes follow the claim.
 *
 * Two stores implement it with the same record model (record.ts):
 * - local (default): shard files in the config folder, or in the folder `--ledger <dir>` names
 *   (local.ts): every process on this machine, any profile, any input;
 * - PostgreSQL (`--ledger postgres://…`): one table shared by a fleet (postgres.ts).
 */
import type { KeyTable } from '../core/key-table.js';
import type { ClaimOwner, LedgerEntry, LedgerRecord, RecordSource, Resolution } from './record.js';

/** What a ledger holds: orders, or contact references (kept apart: their keys are not orders'). */
export type LedgerKind = 'orders' | 'contact-references';

export interface OpenLedgerOptions {
  /** The service the keys are sent to (its base URL, normalized by the store). */
  baseUrl: string;
  kind: LedgerKind;
  /** Who writes: recorded with every record. */
  source: RecordSource;
  /** Only read (a dry run, `orders journal`): nothing is created or written. */
  readOnly?: boolean;
  /** Ends waits (a claim owner being observed, a lock) on Ctrl-C. */
  signal?: AbortSignal;
  /**
   * Write to a ledger that has no record of the service although the default local ledger has
   * some (`--force`, `ledger copy`): skips the move check of `openLedger` (upgrade.ts).
   */
  allowNewLedger?: boolean;
}

/** A claim this process holds: the request may leave. */
export interface Claim {
  externalId: string;
  token: string;
  /** The state before the claim (what `notSent` restores). */
  previous: LedgerEntry | undefined;
  /** The hash of the body claimed for, and the record's line: repeated in its outcome records. */
  bodyHash?: string;
  line?: number;
}

export type ClaimRefusal =
  /** Created (by anyone, or resolved so). */
  | { reason: 'created'; entry: LedgerEntry }
  /** Sent with an unknown outcome, or claimed by a process that is gone: only a person can tell. */
  | { reason: 'in-doubt'; entry: LedgerEntry }
  /** Claimed by another process that is alive: it is being sent right now. */
  | { reason: 'claimed'; entry: LedgerEntry };

export type ClaimResult = { claimed: true; claim: Claim } | { claimed: false; refusal: ClaimRefusal };

export interface ClaimRequest {
  externalId: string;
  bodyHash: string;
  /** The record's line in the input, for `orders journal`. */
  line?: number;
  /** Take over a state in doubt (the user checked it was not created): `--retry-unknown`. */
  takeOverDoubt?: boolean;
  /** Take over any state but a live claim (`orders create --force`). */
  takeOverAny?: boolean;
}

/** Which keys `list` returns. */
export interface LedgerFilter {
  /**
   * Input identities (src/import/input-identity.ts) and, for records written by earlier releases,
   * absolute input and journal paths: a key is listed when its state's `input` or `journal` is one.
   */
  inputs?: readonly string[];
  /** At most this many keys (a sample: which ones is up to the store). */
  limit?: number;
}

/** One key as listed. */
export interface ListedEntry {
  externalId: string;
  entry: LedgerEntry;
}

/** A process that has the ledger open. `unknown`: another host or PID namespace, heartbeat not watched. */
export interface LedgerOpener {
  owner: ClaimOwner;
  alive: 'alive' | 'dead' | 'unknown';
}

/** What a whole ledger (every service) holds: `ledger status`, `ledger forget`, `ledger copy`. */
export interface LedgerService {
  baseUrl: string;
  kind: LedgerKind;
}

export interface LedgerStore {
  /** Where it is, for messages (a folder, or a PostgreSQL URL without its password). */
  readonly location: string;
  /** How records are scoped: the service's normalized base URL. */
  readonly baseUrl: string;
  /** The base URL of the ledger used because this one may name the same service (local only). */
  readonly sameServiceAs?: string;
  /** This process, as its claims name it. */
  readonly owner: ClaimOwner;

  /** The current state of one key (every writer's records). */
  lookup(externalId: string): Promise<LedgerEntry | undefined>;
  /**
   * Reads ahead what the ledger knows of many keys (an import's), so that their claims and
   * lookups need no further round trip for keys nobody touches meanwhile. Optional speed-up: a
   * claim always sees what other processes wrote since. A KeyTable given may be taken over (its
   * values replaced, not copied): the caller must not use it afterwards.
   */
  prefetch(keys: Iterable<string> | KeyTable): Promise<void>;
  /**
   * After `prefetch`: whether the ledger has a record of the key (without a round trip; false
   * for a key not prefetched). What the ledger knows need not be folded in from an old journal.
   */
  knows(externalId: string): boolean;
  /** After `prefetch`: how many of the keys are created, and how many in doubt or claimed. */
  prefetchedCounts(): { created: number; inDoubt: number };
  /**
   * Claims the key for sending. Resolves once the claim is durable, or with the refusal. A claim
   * whose owner is gone without an outcome is refused as `in-doubt` (never silently re-sent).
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /** Outcomes of a claim: not waited for; `sync()` resolves once they are durable. */
  created(claim: Claim, outcome: { httpStatus: number; id?: string | number; code?: string }): void;
  failed(claim: Claim, outcome: { httpStatus?: number; message: string }): void;
  unknown(claim: Claim, reason: string): void;
  /** The request never left: the state before the claim stands. */
  notSent(claim: Claim, reason: string): void;
  /**
   * A created order's validation arrived (`--await validated`): recorded on its state, not waited
   * for (`sync()` does); nothing for a key that is not created.
   */
  validated(externalId: string, validatedAt: string): void;
  /** What a person checked at the service (`orders resolve`); resolves once durable. */
  resolved(
    externalId: string,
    resolution: Resolution,
    details: { id?: string | number; code?: string; evidence?: string },
  ): Promise<void>;
  /**
   * Records states of keys the ledger has no record of (an earlier release's journal folded in,
   * `ledger copy` from another ledger), so that the ledger refuses them too. Resolves once durable.
   */
  adopt(records: readonly LedgerRecord[]): Promise<void>;
  /**
   * Every key of this service and kind with its state, as `ledger list`, `orders journal` and
   * `orders resolve` see it: a claim whose owner is gone is listed as the doubt it leaves
   * (`settledAsUnknown`), so `claimed` means being sent right now by a live ordercli. With
   * `filter.inputs`, only the keys whose state names one of them as its `input` or `journal`.
   */
  list(filter?: LedgerFilter): Promise<ListedEntry[]>;
  /** The processes that have this ledger open (their heartbeats), each judged alive or not. */
  openers(): Promise<LedgerOpener[]>;
  /** Resolves once every record so far is durable; rejects with the first write failure. */
  sync(): Promise<void>;
  /** Writes what is pending and releases what the store holds (files, connections, heartbeat). */
  close(): Promise<void>;
}
