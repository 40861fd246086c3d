/**
 * The order ledger in PostgreSQL (`--ledger postgres://…`): one database shared by a fleet of
 * machines, with the record model of record.ts and the semantics of the local store.
 *
 * Tables (`POSTGRES_LEDGER_DDL`, created on first use):
 * - `ordercli_ledger`: the current state of each key, one row a (service, kind, external_id):
 *   the LedgerEntry as jsonb, with its status, token, owner and `state_key` (= stateKey(entry))
 *   beside it. No row: the key was never sent (or its only claim was not sent).
 * - `ordercli_ledger_records`: append-only history, one row a record that took effect, in the
 *   order it took effect (`seq`). Replaying a key's records with applyRecord gives its row.
 * - `ordercli_ledger_owners`: one row an open store (a claim owner), with its heartbeat.
 *
 * Claims: a fresh key is an `INSERT … ON CONFLICT DO NOTHING`; a key with a row is an UPDATE
 * conditioned on the `state_key` this process last read (compare-and-swap), so that of any number
 * of processes exactly one holds a claim, decided by the database (never by what this process has
 * in memory: that is only the first guess of the state). A claim resolves once committed and on
 * disk (`synchronous_commit` on for its transaction). Claims asked for in one turn of the event
 * loop, or while a round is in flight, go in one statement (the keys as an array, what each needs
 * as one jsonb object), with their history rows and this store's heartbeat: one round trip a
 * round, whatever the concurrency. Outcomes are UPDATEs (or a DELETE, for `not-sent` of a claim
 * over nothing) conditioned on the claim's token, batched the same way; `sync()` waits for them.
 * A claim of a key whose outcome is still being written waits for it (records stay in order).
 *
 * Liveness of a claim's owner: `judgeProcess` first (same kernel and PID namespace: exact);
 * otherwise its row in `ordercli_ledger_owners`, whose `beat_at` the owner sets to the server's
 * `now()` every HEARTBEAT_MS (and with every claim round) and deletes at close: alive iff the row
 * exists and `now() - beat_at < STALE_MS`, evaluated by the server. Only the server's clock is
 * ever compared with itself; the `at` of records (the writer's clock) is for people.
 *
 * The tables are in one schema (`?schema=` in the URL, else ORDERCLI_LEDGER_SCHEMA, else `public`)
 * named in every statement, whatever the role's `search_path`. A base URL without rows that names
 * a service the table holds (service-identity.ts) uses its rows (`sameServiceAs`).
 *
 * Faults: TCP keepalive and a statement timeout (ORDERCLI_LEDGER_STATEMENT_TIMEOUT, 30 s) end a
 * stalled connection; a statement whose connection was lost runs once more on a new pool.
 * Outcomes still not written, and the `not-sent` of claims whose commit is unknown, wait in
 * `<config folder>/ledger-pending/<hash>.ndjson`, which the next writing store applies first (on
 * their claims' tokens, as always). On Ctrl-C (`options.signal`) claims give up at once, and what
 * is in flight after PENDING_GRACE_MS goes to that file, its connections destroyed.
 *
 * `pg` is loaded only here, and this module only when a PostgreSQL ledger is used.
 */
import { hash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, open as openFile, readFile, rename, unlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Pool, PoolClient, QueryConfig, QueryResultRow } from 'pg';
import { parseDuration } from '../config/duration.js';
import { CancelledError, CliError, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { HEARTBEAT_MS, judgeProcess, STALE_MS, thisProcess } from '../core/liveness.js';
import { redactUrlPassword, urlPasswords } from '../core/redact.js';
import { normalizeBaseUrl } from '../core/url.js';
import { isoNow } from '../io/iso-time.js';
import { ClaimedNowError, LedgerWriteError } from './errors.js';
import {
  applyRecord,
  type ClaimOwner,
  type LedgerEntry,
  type LedgerRecord,
  type RecordSource,
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
  LedgerKind,
  LedgerOpener,
  LedgerService,
  LedgerStore,
  ListedEntry,
  OpenLedgerOptions,
} from './store.js';

/** The tables of the PostgreSQL ledger, as created on first use (quoted by the docs). */
export const POSTGRES_LEDGER_DDL = `CREATE TABLE IF NOT EXISTS ordercli_ledger (
  service     text        NOT NULL,  -- the service's normalized base URL
  kind        text        NOT NULL,  -- 'orders' or 'contact-references'
  external_id text        NOT NULL,  -- the key
  status      text        NOT NULL,  -- created | claimed | in-doubt | not-created
  token       text,                  -- the claim this state descends from
  owner       jsonb,                 -- the claim's owner (host, boot, pidns, pid, start, id)
  state_key   text        NOT NULL,  -- stateKey(entry): what a compare-and-swap compares
  entry       jsonb       NOT NULL,  -- the whole state (LedgerEntry)
  updated_at  timestamptz NOT NULL DEFAULT now(),
  -- One row a (service, kind, external_id); the key first, so that every statement, which names
  -- its keys, finds them by the index whatever the planner knows of services and kinds.
  PRIMARY KEY (external_id, service, kind)
);
CREATE INDEX IF NOT EXISTS ordercli_ledger_journal
  ON ordercli_ledger ((entry->>'journal'));
CREATE INDEX IF NOT EXISTS ordercli_ledger_service
  ON ordercli_ledger (service, kind);
CREATE TABLE IF NOT EXISTS ordercli_ledger_records (
  seq         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service     text        NOT NULL,
  kind        text        NOT NULL,
  external_id text        NOT NULL,
  journal     text,                  -- the import's journal that wrote it, if any
  at          text        NOT NULL,  -- the record's time (its writer's clock, for people)
  written_at  timestamptz NOT NULL DEFAULT now(),
  record      jsonb       NOT NULL   -- the record (LedgerRecord)
);
CREATE INDEX IF NOT EXISTS ordercli_ledger_records_key
  ON ordercli_ledger_records (service, kind, external_id, seq);
CREATE TABLE IF NOT EXISTS ordercli_ledger_owners (
  id          text        PRIMARY KEY,  -- ClaimOwner.id of an open store
  identity    jsonb       NOT NULL,     -- the whole ClaimOwner
  beat_at     timestamptz NOT NULL DEFAULT now()  -- the server's clock, set by the owner
);`;

const TABLES = ['ordercli_ledger', 'ordercli_ledger_records', 'ordercli_ledger_owners'];
const INDEXES = ['ordercli_ledger_journal', 'ordercli_ledger_records_key', 'ordercli_ledger_service'];
/** The tables' names in a statement, qualified by the ledger's schema as it runs. */
const TABLE_NAMES = /\bordercli_ledger(?:_records|_owners)?\b/g;

/** Serializes the creation of the tables between processes (any constant shared by all). */
const DDL_LOCK_KEY = 0x6f72_6465_72;
/** Keys a `prefetch` reads a query. */
const PREFETCH_CHUNK = 10_000;
/** Keys a claim or outcome round writes at most (a burst beyond it takes several rounds). */
const MAX_ROUND = 2_000;
/** Rounds a claim may take before giving up (each is a state change by another process). */
const MAX_CLAIM_ROUNDS = 50;
/** Owner rows not beaten for this long are removed by the next store that opens (they are dead anyway). */
const FORGET_OWNERS_AFTER = '1 day';
/** Connections: claims, outcomes, the heartbeat and a lookup can each have one. */
const POOL_SIZE = 4;
const CONNECT_TIMEOUT_MS = 15_000;
/** A statement not answered in this long is cancelled (ORDERCLI_LEDGER_STATEMENT_TIMEOUT). */
const STATEMENT_TIMEOUT_MS = 30_000;
/** The first TCP keepalive probe of a silent connection. */
const KEEPALIVE_DELAY_MS = 10_000;
/** After Ctrl-C, what is in flight has this long before its connections are destroyed. */
const PENDING_GRACE_MS = 500;

/**
 * A live owner's heartbeat: its row exists and was beaten less than STALE_MS (parameter `$n`)
 * ago, by the server's clock.
 */
const ownerBeating = (n: number) => `EXISTS (SELECT 1 FROM ordercli_ledger_owners o
  WHERE o.id = l.owner->>'id' AND now() - o.beat_at < $${n}::integer * interval '1 millisecond')`;

/**
 * A claim must be on disk when it resolves: on a server that commits without waiting for its log
 * (`synchronous_commit` off or local), the claim's transaction waits for it (`set_config(…, true)`
 * lasts the transaction); a stricter setting (remote_write, remote_apply) is kept. Outcomes need
 * not: one lost leaves its claim, which is in doubt once its owner is gone.
 */
const DURABLE_COMMIT = `(CASE WHEN current_setting('synchronous_commit') IN ('off', 'local')
    THEN set_config('synchronous_commit', 'on', true) ELSE 'kept' END)`;

/*
 * The statements of a round take their keys as an array (found by the primary key, whose first
 * column is the key) and what each key needs as one jsonb object keyed by the key, looked up per
 * row (`$n::jsonb -> l.external_id`): no join whose plan would depend on what the planner knows
 * of the tables (a ledger's first minutes have no statistics), so a round costs the same for 8
 * keys of an empty table as of one with millions.
 */

/**
 * One claim round. $1 service, $2 kind, $3 owner id, $4 owner, $5 STALE_MS, $6 the keys, $7 for
 * each key: `expect` (the state_key it replaces; null: the key must have no row), `entry` (the
 * claimed state), `state_key` (its own), `record` (the claim record), `check_owner` (the replaced
 * claim's owner must still be found dead by its heartbeat). Returns the keys claimed (`won`), and
 * every key's row as of the statement's snapshot with whether its owner's heartbeat beats: a key
 * that lost to a row committed after the snapshot has none, and the next round sees it.
 */
const CLAIM_SQL = `WITH beat AS (
  INSERT INTO ordercli_ledger_owners (id, identity, beat_at) SELECT $3, $4::jsonb, now()
  WHERE ${DURABLE_COMMIT} IS NOT NULL
  ON CONFLICT (id) DO UPDATE SET beat_at = now()
), inserted AS (
  INSERT INTO ordercli_ledger (external_id, service, kind, status, token, owner, state_key, entry)
  SELECT c.key, $1, $2, 'claimed', c.value->'entry'->>'token', c.value->'entry'->'owner',
    c.value->>'state_key', c.value->'entry'
  FROM jsonb_each($7::jsonb) AS c WHERE c.value->>'expect' IS NULL ORDER BY c.key
  ON CONFLICT (external_id, service, kind) DO NOTHING
  RETURNING external_id
), updated AS (
  UPDATE ordercli_ledger l
  SET status = 'claimed', token = $7::jsonb->l.external_id->'entry'->>'token',
    owner = $7::jsonb->l.external_id->'entry'->'owner', state_key = $7::jsonb->l.external_id->>'state_key',
    entry = $7::jsonb->l.external_id->'entry', updated_at = now()
  WHERE l.external_id = ANY ($6::text[]) AND l.service = $1 AND l.kind = $2
    AND l.state_key = $7::jsonb->l.external_id->>'expect'
    AND NOT (($7::jsonb->l.external_id->'check_owner')::boolean AND ${ownerBeating(5)})
  RETURNING l.external_id
), won AS (
  SELECT external_id FROM inserted UNION ALL SELECT external_id FROM updated
), history AS (
  INSERT INTO ordercli_ledger_records (service, kind, external_id, journal, at, record)
  SELECT $1, $2, w.external_id, r.record->>'journal', r.record->>'at', r.record
  FROM won w, LATERAL (SELECT $7::jsonb->w.external_id->'record' AS record) r
)
SELECT external_id, true AS won, NULL::text AS state_key, NULL::jsonb AS entry, false AS beating FROM won
UNION ALL
SELECT l.external_id, false, l.state_key, l.entry, ${ownerBeating(5)}
FROM ordercli_ledger l WHERE l.external_id = ANY ($6::text[]) AND l.service = $1 AND l.kind = $2`;

/**
 * One outcome round. $1 service, $2 kind, $3 the keys, $4 for each key: `token` (its claim's),
 * `entry` (the state after it; null: delete the row, a `not-sent` of a claim over nothing),
 * `state_key` (the entry's) and `record`. Only a row still claimed with that token changes.
 * Returns the keys that changed.
 */
const OUTCOME_SQL = `WITH removed AS (
  DELETE FROM ordercli_ledger l
  WHERE l.external_id = ANY ($3::text[]) AND l.service = $1 AND l.kind = $2 AND l.status = 'claimed'
    AND l.token = $4::jsonb->l.external_id->>'token'
    AND jsonb_typeof($4::jsonb->l.external_id->'entry') = 'null'
  RETURNING l.external_id
), updated AS (
  UPDATE ordercli_ledger l
  SET status = $4::jsonb->l.external_id->'entry'->>'status', token = $4::jsonb->l.external_id->'entry'->>'token',
    owner = $4::jsonb->l.external_id->'entry'->'owner', state_key = $4::jsonb->l.external_id->>'state_key',
    entry = $4::jsonb->l.external_id->'entry', updated_at = now()
  WHERE l.external_id = ANY ($3::text[]) AND l.service = $1 AND l.kind = $2 AND l.status = 'claimed'
    AND l.token = $4::jsonb->l.external_id->>'token'
    AND jsonb_typeof($4::jsonb->l.external_id->'entry') = 'object'
  RETURNING l.external_id
), changed AS (
  SELECT external_id FROM removed UNION ALL SELECT external_id FROM updated
)
INSERT INTO ordercli_ledger_records (service, kind, external_id, journal, at, record)
SELECT $1, $2, c.external_id, r.record->>'journal', r.record->>'at', r.record
FROM changed c, LATERAL (SELECT $4::jsonb->c.external_id->'record' AS record) r
RETURNING external_id`;

/**
 * One key's state replaced by compare-and-swap (`orders resolve`). $1 service, $2 kind, $3 key,
 * $4 the state_key it replaces (null: the key must have no row), $5 the entry, $6 its state_key,
 * $7 the record. Returns a row when it took effect.
 */
const REPLACE_SQL = `WITH inserted AS (
  INSERT INTO ordercli_ledger (external_id, service, kind, status, token, owner, state_key, entry)
  SELECT $3, $1, $2, $5::jsonb->>'status', $5::jsonb->>'token', $5::jsonb->'owner', $6, $5::jsonb
  WHERE $4::text IS NULL
  ON CONFLICT (external_id, service, kind) DO NOTHING
  RETURNING external_id
), updated AS (
  UPDATE ordercli_ledger l
  SET status = $5::jsonb->>'status', token = $5::jsonb->>'token', owner = $5::jsonb->'owner',
    state_key = $6, entry = $5::jsonb, updated_at = now()
  WHERE $4::text IS NOT NULL AND l.external_id = $3 AND l.service = $1 AND l.kind = $2 AND l.state_key = $4
  RETURNING l.external_id
), won AS (
  SELECT external_id FROM inserted UNION ALL SELECT external_id FROM updated
)
INSERT INTO ordercli_ledger_records (service, kind, external_id, journal, at, record)
SELECT $1, $2, external_id, $7::jsonb->>'journal', $7::jsonb->>'at', $7::jsonb FROM won
RETURNING external_id`;

/**
 * Adoption of a journal's records: $3 for each key, `entry` (the state its records give),
 * `state_key` and `records` (in order). A state is inserted only where the key has no row, and
 * then its records go to the history.
 */
const ADOPT_SQL = `WITH inserted AS (
  INSERT INTO ordercli_ledger (external_id, service, kind, status, token, owner, state_key, entry)
  SELECT a.key, $1, $2, a.value->'entry'->>'status', a.value->'entry'->>'token', a.value->'entry'->'owner',
    a.value->>'state_key', a.value->'entry'
  FROM jsonb_each($3::jsonb) AS a ORDER BY a.key
  ON CONFLICT (external_id, service, kind) DO NOTHING
  RETURNING external_id
)
INSERT INTO ordercli_ledger_records (service, kind, external_id, journal, at, record)
SELECT $1, $2, i.external_id, r.record->>'journal', coalesce(r.record->>'at', ''), r.record
FROM inserted i, LATERAL jsonb_array_elements($3::jsonb->i.external_id->'records') WITH ORDINALITY AS r(record, n)
ORDER BY i.external_id, r.n`;

const BEAT_SQL = `INSERT INTO ordercli_ledger_owners (id, identity, beat_at) VALUES ($1, $2::jsonb, now())
ON CONFLICT (id) DO UPDATE SET beat_at = now()`;

/** A key's row as read: its state and the state_key a compare-and-swap must name. */
interface Row {
  entry: LedgerEntry;
  stateKey: string;
}

/** What a claim knows of its key before a round: a row, or null for none. */
interface Known {
  row: Row | null;
  /** Read from the database in the last round (a refusal needs that), not from the prefetch. */
  fromDatabase: boolean;
  /** The row's owner beats (the server's verdict), when read from the database. */
  beating?: boolean;
}

interface PendingClaim {
  request: ClaimRequest;
  known: Known | undefined;
  rounds: number;
  resolve(result: ClaimResult): void;
  reject(error: Error): void;
}

/** What a claim writes in a round. */
interface Proposal {
  /** The state_key it replaces; null when the key must have no row. */
  expect: string | null;
  entry: LedgerEntry;
  record: LedgerRecord;
  /** The replaced claim's owner must still be found dead by its heartbeat (the server checks). */
  checkOwner: boolean;
}

interface PendingOutcome {
  externalId: string;
  token: string;
  /** The state after the outcome; undefined: the key has no state (delete its row). */
  entry: LedgerEntry | undefined;
  record: LedgerRecord;
}

/** A line of the pending file: an outcome, with the service and kind of its ledger. */
interface KeptOutcome extends PendingOutcome {
  service: string;
  kind: LedgerKind;
}

type Liveness = 'alive' | 'dead' | 'stale' | 'unknown';

/** A row of a claim round: won, or the state met instead (with whether its owner beats). */
interface ClaimRow {
  external_id: string;
  won: boolean;
  state_key: string | null;
  entry: LedgerEntry | null;
  beating: boolean;
}

/** The errors of the server or the network that mean "not reached" rather than "refused". */
const UNREACHABLE_CODES = new Set(
  'ECONNREFUSED ECONNRESET ENOTFOUND EAI_AGAIN ETIMEDOUT EHOSTUNREACH ENETUNREACH EPIPE ENOENT'.split(' '),
);
/** SQLSTATEs of a refused login: bad password, no such role, pg_hba.conf rejects. */
const LOGIN_REFUSED = new Set(['28P01', '28000']);
/** SQLSTATEs worth one more try of a round (nothing of it was committed). */
const RETRYABLE = new Set(['40P01', '40001']);

/** A PostgreSQL URL as it may be shown: its password (in the user info or the query) as `***`. */
export const redactLedgerUrl = redactUrlPassword;

const ignore = (): void => undefined;

/** The SQLSTATE or errno code of an error, if any. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

/**
 * Lost rather than refused: the connection broke, timed out or was ended by the server (pg's own
 * errors have no code). A statement that failed so may be run again on a new connection.
 */
function isLost(error: unknown): boolean {
  const code = codeOf(error);
  return code === undefined || /^(08|57P0)/.test(code) || code === '57014' || UNREACHABLE_CODES.has(code);
}

/** What each key of a round needs, as the one jsonb object its statement reads (`$n::jsonb -> key`). */
function byKey<T>(items: readonly T[], key: (item: T) => string, value: (item: T) => object): string {
  return JSON.stringify(Object.fromEntries(items.map((item) => [key(item), value(item)])));
}

/** The values of OUTCOME_SQL for a round of outcomes (one a key) of a service and kind. */
function outcomeValues(service: string, kind: LedgerKind, round: readonly PendingOutcome[]): unknown[] {
  const keys = round.map((pending) => pending.externalId);
  const needs = byKey(
    round,
    (pending) => pending.externalId,
    ({ token, entry, record }) => ({
      token,
      entry: entry ?? null,
      state_key: entry && stateKey(entry),
      record,
    }),
  );
  return [service, kind, keys, needs];
}

/** The next round of a queue: the first item of each key (at most MAX_ROUND, none `held`), and the rest. */
function nextRound<T>(queue: readonly T[], keyOf: (item: T) => string, held: (key: string) => boolean) {
  const round: T[] = [];
  const rest: T[] = [];
  const keys = new Set<string>();
  for (const item of queue) {
    const key = keyOf(item);
    if (round.length >= MAX_ROUND || keys.has(key) || held(key)) rest.push(item);
    else {
      keys.add(key);
      round.push(item);
    }
  }
  return { round, rest };
}

/** What a PostgreSQL ledger reads beside its URL. */
export interface PostgresSettings {
  /** ORDERCLI_LEDGER_SCHEMA and ORDERCLI_LEDGER_STATEMENT_TIMEOUT. */
  env?: NodeJS.ProcessEnv;
  /** Where outcomes that could not be written wait for the next store: `<config folder>/ledger-pending`. */
  pendingFolder?: string;
}

/** The URL given to pg (without `schema`) and the schema, or a UsageError that shows no password. */
function parseLedgerUrl(url: string, env: NodeJS.ProcessEnv): { connection: string; schema: string } {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !/^postgres(ql)?:$/i.test(parsed.protocol)) {
    const error = new UsageError(
      `The ledger ${redactUrlPassword(url)} is not a PostgreSQL URL: use the form postgres://user:password@host:5432/database.`,
    );
    error.hint = 'Percent-encode @ : / and % in the user name or password: %40 %3A %2F %25.';
    throw error;
  }
  const schema = parsed.searchParams.get('schema') ?? (env.ORDERCLI_LEDGER_SCHEMA || 'public');
  if (schema === '') throw new UsageError('The ledger URL names an empty schema: write ?schema=<name>.');
  if (!parsed.searchParams.has('schema')) return { connection: url, schema };
  parsed.searchParams.delete('schema');
  return { connection: parsed.href, schema };
}

export class PostgresLedger implements LedgerStore {
  readonly location: string;
  readonly baseUrl: string;
  readonly owner: ClaimOwner;
  /** The base URL whose rows this one uses: another name of the same service (service-identity.ts). */
  sameServiceAs: string | undefined;
  /** The `service` of the rows used: `sameServiceAs`, or the base URL. */
  private service: string;
  private readonly kind: LedgerKind;
  private readonly source: RecordSource;
  private readonly readOnly: boolean;
  private readonly secrets: string[];
  private readonly connection: string;
  /** The schema as named in statements (quoted), and as given. */
  private readonly schema: string;
  private readonly schemaName: string;
  private readonly timeoutMs: number;
  private readonly pendingFile: string | undefined;
  private readonly signal: AbortSignal | undefined;
  private pool: Pool | undefined;
  private poolClass: typeof Pool | undefined;
  /** Every connection's socket, to destroy the stalled ones (Ctrl-C, close). */
  private readonly sockets = new Set<Socket>();
  /** Set once what was in flight at Ctrl-C had its time: the connections are destroyed. */
  private gaveUp = false;
  private giveUpTimer: NodeJS.Timeout | undefined;
  /** False for a read-only store on a database without the tables: it knows no key. */
  private tablesExist = true;
  private heartbeat: NodeJS.Timeout | undefined;
  private beatInFlight = false;
  private closed = false;
  private failure: CliError | undefined;

  /**
   * What `prefetch` read, kept up to date with this store's own writes: a key's row, or null for
   * none. It answers lookups and is a claim's first guess; the database decides every claim.
   */
  private readonly cache = new Map<string, Row | null>();
  private counts = { created: 0, inDoubt: 0 };
  /** The claimed entry of each claim held, by token (what an outcome is applied to). */
  private readonly held = new Map<string, LedgerEntry>();

  private claimQueue: PendingClaim[] = [];
  private roundInFlight: PendingClaim[] = [];
  private claimsRunning = false;
  private claimsScheduled = false;
  private outcomeQueue: PendingOutcome[] = [];
  private outcomesRunning = false;
  private outcomesScheduled = false;
  /** Outcomes queued or in flight by key: a new claim of the key waits for them (record order). */
  private readonly outcomeKeys = new Map<string, number>();
  private syncWaiters: (() => void)[] = [];
  /** `close()` waiting for claims and outcomes to end. */
  private idleWaiters: (() => void)[] = [];

  private constructor(url: string, options: OpenLedgerOptions, settings: PostgresSettings) {
    const env = settings.env ?? {};
    const { connection, schema } = parseLedgerUrl(url, env);
    const timeout = env.ORDERCLI_LEDGER_STATEMENT_TIMEOUT;
    this.timeoutMs = timeout
      ? parseDuration(timeout, { name: 'ORDERCLI_LEDGER_STATEMENT_TIMEOUT', minMs: 100, maxMs: 3_600_000 })
      : STATEMENT_TIMEOUT_MS;
    this.connection = connection;
    this.schemaName = schema;
    this.schema = `"${schema.replace(/"/g, '""')}"`;
    this.location = redactUrlPassword(url);
    // Shorter ones are too short to mask without garbling the rest, and to be real passwords.
    this.secrets = urlPasswords(url)
      .filter((secret) => secret.length >= 3)
      .sort((a, b) => b.length - a.length);
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.service = this.baseUrl;
    this.kind = options.kind;
    this.source = options.source;
    this.readOnly = Boolean(options.readOnly);
    this.signal = options.signal;
    this.owner = { ...thisProcess(), id: randomBytes(8).toString('hex') };
    const ledgerId = hash('sha256', `${redactUrlPassword(connection)}\n${schema}`, 'hex').slice(0, 24);
    this.pendingFile =
      settings.pendingFolder === undefined ? undefined : join(settings.pendingFolder, `${ledgerId}.ndjson`);
  }

  /**
   * Connects, creates the tables if they are missing (unless read-only), applies the outcomes
   * kept by an earlier store, starts this store's heartbeat and finds which service's rows to
   * use. A server that cannot be reached, or refuses the login, is a CliError (exit 1) naming the
   * URL without its password; Ctrl-C meanwhile ends it within PENDING_GRACE_MS (exit 130).
   */
  static async open(
    url: string,
    options: OpenLedgerOptions,
    settings: PostgresSettings = {},
  ): Promise<PostgresLedger> {
    const ledger = new PostgresLedger(url, options, settings);
    await ledger.connect();
    try {
      await ledger.prepareTables();
      if (!ledger.readOnly) {
        await ledger.foldPending();
        await ledger.query({
          text: `DELETE FROM ordercli_ledger_owners WHERE beat_at < now() - interval '${FORGET_OWNERS_AFTER}'`,
        });
        await ledger.query({ text: BEAT_SQL, values: [ledger.owner.id, JSON.stringify(ledger.owner)] });
        ledger.heartbeat = setInterval(() => ledger.beat(), HEARTBEAT_MS);
        ledger.heartbeat.unref();
      }
      await ledger.findService();
    } catch (error) {
      ledger.gaveUp = true;
      await ledger.close().catch(() => undefined);
      throw ledger.openError(error);
    }
    return ledger;
  }

  /** The base URLs and kinds the ledger holds ([] when it has no tables). */
  static services(url: string, settings: PostgresSettings = {}): Promise<LedgerService[]> {
    return PostgresLedger.session(url, settings, [], async (ledger) => {
      const rows = await ledger.query<{ service: string; kind: LedgerKind }>({
        text: 'SELECT DISTINCT service, kind FROM ordercli_ledger ORDER BY service, kind',
      });
      return rows.map((row) => ({ baseUrl: row.service, kind: row.kind }));
    });
  }

  /** Deletes every row of a service (every kind, and its history); resolves with the keys removed. */
  static forget(url: string, baseUrl: string, settings: PostgresSettings = {}): Promise<number> {
    return PostgresLedger.session(url, settings, 0, async (ledger) => {
      const rows = await ledger.query<{ n: number }>({
        text: `WITH history AS (DELETE FROM ordercli_ledger_records WHERE service = $1),
          gone AS (DELETE FROM ordercli_ledger WHERE service = $1 RETURNING 1)
          SELECT count(*)::integer AS n FROM gone`,
        values: [normalizeBaseUrl(baseUrl)],
      });
      return rows[0]?.n ?? 0;
    });
  }

  /** Runs `work` on a store of no service (no heartbeat, nothing created); `none` without tables. */
  private static async session<T>(
    url: string,
    settings: PostgresSettings,
    none: T,
    work: (ledger: PostgresLedger) => Promise<T>,
  ): Promise<T> {
    const options: OpenLedgerOptions = { baseUrl: '', kind: 'orders', source: { by: 'orders resolve' } };
    const ledger = new PostgresLedger(url, { ...options, readOnly: true }, settings);
    try {
      await ledger.connect();
      await ledger.prepareTables();
      return ledger.tablesExist ? await work(ledger) : none;
    } catch (error) {
      ledger.gaveUp = true;
      throw ledger.openError(error);
    } finally {
      await ledger.close().catch(() => undefined);
    }
  }

  /** Loads pg and makes the pool. */
  private async connect(): Promise<void> {
    if (this.signal?.aborted) throw this.abortReason();
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.poolClass = (await import('pg')).Pool;
    this.pool = this.newPool();
  }

  /** Connections with keepalive and the statement timeouts, whose sockets are known (`sockets`). */
  private newPool(): Pool {
    const pool = new this.poolClass!({
      connectionString: this.connection,
      application_name: 'ordercli',
      max: POOL_SIZE,
      connectionTimeoutMillis: Math.min(CONNECT_TIMEOUT_MS, this.timeoutMs * 2),
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
      // The server cancels a statement first; this side gives up on a server that says nothing.
      statement_timeout: this.timeoutMs,
      query_timeout: this.timeoutMs + Math.min(2_000, this.timeoutMs),
      // Idle connections do not keep the process alive; close() ends them all anyway.
      allowExitOnIdle: true,
      stream: () => {
        const socket = new Socket();
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        return socket;
      },
    });
    // A connection lost while idle (a server restart) is replaced by the next query; without a
    // listener the pool's 'error' event would end the process.
    pool.on('error', ignore);
    return pool;
  }

  /** Ctrl-C: claims give up now; what is in flight has PENDING_GRACE_MS (see the module's notes). */
  private readonly onAbort = (): void => {
    const reason = this.abortReason();
    for (const pending of [...this.claimQueue.splice(0), ...this.roundInFlight]) pending.reject(reason);
    this.giveUpTimer ??= setTimeout(() => this.giveUp(), PENDING_GRACE_MS);
  };

  private giveUp(): void {
    this.gaveUp = true;
    for (const socket of this.sockets) socket.destroy();
  }

  private abortReason(): CliError {
    const reason: unknown = this.signal?.reason;
    return reason instanceof CliError ? reason : new CancelledError();
  }

  /** Creates what is missing of the schema and tables, one process at a time (read-only: only looks). */
  private async prepareTables(): Promise<void> {
    const present = async (names: string[]) =>
      (
        await this.query<{ n: number }>({
          text: 'SELECT count(to_regclass($1 || name))::integer AS n FROM unnest($2::text[]) AS name',
          values: [`${this.schema}.`, names],
        })
      )[0]?.n === names.length;
    const names = [...TABLES, ...INDEXES];
    if (await present(names)) return;
    this.tablesExist = await present(TABLES);
    if (this.readOnly) return;
    const client = await this.pool!.connect();
    client.on('error', ignore);
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [DDL_LOCK_KEY]);
      // Another process may have created them meanwhile (possibly another role, whose tables these are).
      if (!(await present(names))) {
        const schema = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schemaName]);
        if (schema.rowCount === 0) await client.query(`CREATE SCHEMA ${this.schema}`);
        await client.query(this.qualified(POSTGRES_LEDGER_DDL));
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      // An index this role may not create (another role's tables) only makes some reads slower.
      if (!this.tablesExist) throw error;
    } finally {
      client.removeListener('error', ignore).release();
    }
    this.tablesExist = true;
  }

  /** A statement with its tables in the ledger's schema. */
  private qualified(text: string): string {
    return text.replace(TABLE_NAMES, (name) => `${this.schema}.${name}`);
  }

  /**
   * Applies the outcomes an earlier store of this ledger could not write (the pending file), each
   * conditioned on its claim's token like any outcome, then deletes the file. Taken by renaming,
   * so that a store writing to it meanwhile starts a new one.
   */
  private async foldPending(): Promise<void> {
    const file = this.pendingFile;
    if (file === undefined) return;
    const taken = `${file}.${this.owner.id}`;
    try {
      await rename(file, taken);
    } catch {
      return;
    }
    const text = await readFile(taken, 'utf8');
    try {
      // A torn last line (a crash while it was written) is passed over.
      for (const line of text.split('\n').filter((line) => line.endsWith('}'))) {
        const kept = JSON.parse(line) as KeptOutcome;
        await this.query({
          name: 'ordercli_ledger_outcome',
          text: OUTCOME_SQL,
          values: outcomeValues(kept.service, kept.kind, [kept]),
        });
      }
    } catch (error) {
      // Back for the next store: an outcome applied twice changes nothing the second time.
      await appendFile(file, text, { mode: 0o600 });
      await unlink(taken);
      throw error;
    }
    await unlink(taken);
  }

  /** Outcomes (or `not-sent`s) that could not be written, kept for the next store (synced). */
  private async keepPending(outcomes: readonly PendingOutcome[]): Promise<void> {
    const file = this.pendingFile;
    if (file === undefined) throw new Error('no folder to keep the outcomes in');
    const lines = outcomes.map(
      (outcome) => `${JSON.stringify({ service: this.service, kind: this.kind, ...outcome })}\n`,
    );
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const handle = await openFile(file, 'a', 0o600);
    try {
      await handle.writeFile(lines.join(''));
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /** Uses the rows of another name of this service when this base URL has none (service-identity.ts). */
  private async findService(): Promise<void> {
    if (!this.tablesExist) return;
    const others = await this.query<{ service: string }>({
      text: `SELECT DISTINCT service FROM ordercli_ledger
        WHERE NOT EXISTS (SELECT 1 FROM ordercli_ledger WHERE service = $1)`,
      values: [this.baseUrl],
    });
    this.sameServiceAs = await findSameService(
      this.baseUrl,
      others.map((row) => row.service),
    );
    this.service = this.sameServiceAs ?? this.baseUrl;
  }

  /** The error of a failed open: one sentence naming the URL without its password (or Ctrl-C's). */
  private openError(error: unknown): CliError {
    if (this.signal?.aborted) return this.abortReason();
    if (error instanceof CliError) return error;
    const code = codeOf(error);
    const message = this.scrub((error as Error | undefined)?.message ?? String(error));
    const hint = `Check that the server is up and that the URL's host, port, database, user and password are right (${this.location}).`;
    let sentence: string;
    if ((code !== undefined && LOGIN_REFUSED.has(code)) || /password|SASL|authentication/i.test(message)) {
      sentence = `The PostgreSQL ledger ${this.location} refused the login (${message}), so nothing was sent.`;
    } else if (
      (code !== undefined && UNREACHABLE_CODES.has(code)) ||
      /timeout|terminated|connect/i.test(message)
    ) {
      sentence = `Cannot reach the PostgreSQL ledger ${this.location} (${code ?? message}), so nothing was sent.`;
    } else {
      sentence = `Cannot open the PostgreSQL ledger ${this.location} (${code !== undefined ? `${code} ` : ''}${message}), so nothing was sent.`;
    }
    return new CliError(sentence, ExitCode.Failure, [hint]);
  }

  /** Text with the URL's password masked (pg's messages do not hold it; this makes sure). */
  private scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('***');
    return out;
  }

  /** A LedgerWriteError for a failure after open, whose cause shows no password (or Ctrl-C's error). */
  private writeError(error: unknown): CliError {
    if (this.signal?.aborted) return this.abortReason();
    if (error instanceof CliError) return error;
    const code = codeOf(error);
    const message = this.scrub((error as Error | undefined)?.message ?? String(error));
    // An errno code says it all (ECONNRESET); a SQLSTATE alone does not: the message goes with it.
    const cause = new Error(code && /^[0-9A-Z]{5}$/.test(code) ? `${code} ${message}` : message);
    if (code && !/^[0-9A-Z]{5}$/.test(code)) (cause as NodeJS.ErrnoException).code = code;
    return new LedgerWriteError(this.location, cause);
  }

  /**
   * Runs a statement in the ledger's schema: once more when the server broke a deadlock or a
   * serialization conflict, or on a new connection when this one was lost (every statement is a
   * compare-and-swap or a read: running it again is safe).
   */
  private async query<T extends QueryResultRow>(config: QueryConfig): Promise<T[]> {
    const statement = { ...config, text: this.qualified(config.text) };
    for (let attempt = 1; ; attempt++) {
      if (this.gaveUp) throw this.abortReason();
      try {
        return await this.runOnce<T>(statement);
      } catch (error) {
        const code = codeOf(error);
        const again =
          code !== undefined && RETRYABLE.has(code) ? attempt < 5 : attempt === 1 && isLost(error);
        if (!again) throw this.gaveUp ? this.abortReason() : error;
      }
    }
  }

  /** One statement on a connection of the pool; one that broke or stalled is destroyed, not reused. */
  /** A statement whose failure is the store's error (a LedgerWriteError without password, or Ctrl-C's). */
  private read<T extends QueryResultRow>(config: QueryConfig): Promise<T[]> {
    return this.query<T>(config).catch((error: unknown) => {
      throw this.writeError(error);
    });
  }

  private async runOnce<T extends QueryResultRow>(config: QueryConfig): Promise<T[]> {
    const pool = this.pool!;
    let client: PoolClient | undefined;
    try {
      client = await pool.connect();
      // A connection lost in a statement also emits 'error', with no listener while checked out.
      client.on('error', ignore);
      const { rows } = await client.query<T>(config);
      client.removeListener('error', ignore).release();
      return rows;
    } catch (error) {
      const lost = isLost(error);
      // The pool's other connections may be stalled too (a dead path): the next statements use new ones.
      if (lost && pool === this.pool && !this.closed) {
        this.pool = this.newPool();
        void pool.end().catch(() => undefined);
      }
      if (lost) client?.connection.stream.destroy();
      client?.removeListener('error', ignore).release(lost ? (error as Error) : undefined);
      throw error;
    }
  }

  private beat(): void {
    if (this.beatInFlight || this.closed || !this.pool) return;
    this.beatInFlight = true;
    // A failed beat says nothing by itself: the next statement that matters fails too, and says so.
    this.query({ text: BEAT_SQL, values: [this.owner.id, JSON.stringify(this.owner)] })
      .catch(() => undefined)
      .finally(() => {
        this.beatInFlight = false;
      });
  }

  private checkWritable(): void {
    if (this.readOnly || this.closed) throw new Error('ledger: write to a read-only or closed ledger');
    if (this.signal?.aborted) throw this.abortReason();
    if (this.failure) throw this.failure;
  }

  private record(
    externalId: string,
    event: LedgerRecord['event'],
    fields: Partial<LedgerRecord>,
  ): LedgerRecord {
    return { externalId, event, at: isoNow(), ...this.source, ...fields };
  }

  // Reads

  async lookup(externalId: string): Promise<LedgerEntry | undefined> {
    const cached = this.cache.get(externalId);
    if (cached !== undefined) return cached?.entry;
    if (!this.tablesExist) return undefined;
    const rows = await this.read<{ entry: LedgerEntry }>({
      name: 'ordercli_ledger_lookup',
      text: 'SELECT entry FROM ordercli_ledger WHERE service = $1 AND kind = $2 AND external_id = $3',
      values: [this.service, this.kind, externalId],
    });
    return rows[0]?.entry;
  }

  async prefetch(keys: Iterable<string>): Promise<void> {
    const wanted = [...new Set(keys)].filter((key) => !this.cache.has(key));
    for (let start = 0; start < wanted.length; start += PREFETCH_CHUNK) {
      const chunk = wanted.slice(start, start + PREFETCH_CHUNK);
      const rows: { external_id: string; state_key: string; entry: LedgerEntry }[] = !this.tablesExist
        ? []
        : await this.read({
            name: 'ordercli_ledger_prefetch',
            text: `SELECT external_id, state_key, entry FROM ordercli_ledger
              WHERE service = $1 AND kind = $2 AND external_id = ANY($3::text[])`,
            values: [this.service, this.kind, chunk],
          });
      for (const key of chunk) if (!this.cache.has(key)) this.cache.set(key, null);
      for (const row of rows) {
        this.cache.set(row.external_id, { entry: row.entry, stateKey: row.state_key });
        if (row.entry.status === 'created') this.counts.created++;
        else if (row.entry.status !== 'not-created') this.counts.inDoubt++;
      }
    }
  }

  knows(externalId: string): boolean {
    return Boolean(this.cache.get(externalId));
  }

  prefetchedCounts(): { created: number; inDoubt: number } {
    return { ...this.counts };
  }

  async list(filter: LedgerFilter = {}): Promise<ListedEntry[]> {
    if (!this.tablesExist) return [];
    const rows = await this.read<{ external_id: string; entry: LedgerEntry; beating: boolean }>({
      text: `SELECT l.external_id, l.entry, ${ownerBeating(4)} AS beating FROM ordercli_ledger l
        WHERE l.service = $1 AND l.kind = $2
          AND ($3::text[] IS NULL OR l.entry->>'input' = ANY ($3) OR l.entry->>'journal' = ANY ($3))
        ORDER BY l.external_id`,
      values: [this.service, this.kind, filter.inputs ?? null, STALE_MS],
    });
    // A claim whose owner is gone is the doubt it leaves.
    return rows.map(({ external_id, entry, beating }) => ({
      externalId: external_id,
      entry:
        entry.status === 'claimed' && this.liveness(entry, beating) !== 'alive'
          ? settledAsUnknown(entry)
          : entry,
    }));
  }

  async openers(): Promise<LedgerOpener[]> {
    if (!this.tablesExist) return [];
    const rows = await this.read<{ identity: ClaimOwner; beating: boolean }>({
      text: `SELECT identity, now() - beat_at < $1::integer * interval '1 millisecond' AS beating
        FROM ordercli_ledger_owners ORDER BY beat_at DESC, id`,
      values: [STALE_MS],
    });
    return rows.map(({ identity, beating }) => {
      const verdict = identity.id === this.owner.id ? 'alive' : judgeProcess(identity).kind;
      return {
        owner: identity,
        alive: verdict === 'unverifiable' ? (beating ? 'alive' : 'dead') : verdict,
      };
    });
  }

  // Claims

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    this.checkWritable();
    return new Promise<ClaimResult>((resolve, reject) => {
      this.claimQueue.push({ request, known: undefined, rounds: 0, resolve, reject });
      this.scheduleClaims();
    });
  }

  private scheduleClaims(): void {
    if (this.claimsRunning || this.claimsScheduled) return;
    this.claimsScheduled = true;
    // The claims of this turn of the event loop go together.
    setImmediate(() => {
      this.claimsScheduled = false;
      void this.runClaims();
    });
  }

  private async runClaims(): Promise<void> {
    if (this.claimsRunning) return;
    this.claimsRunning = true;
    try {
      while (this.claimQueue.length > 0) {
        const stop = this.failure ?? (this.signal?.aborted ? this.abortReason() : undefined);
        if (stop) {
          for (const pending of this.claimQueue.splice(0)) pending.reject(stop);
          break;
        }
        // One claim a key a round, none of a key whose outcome is not written yet: in order.
        const { round, rest } = nextRound(
          this.claimQueue,
          (pending) => pending.request.externalId,
          (key) => this.outcomeKeys.has(key),
        );
        // All wait for outcomes: the end of that outcome round starts claims again.
        if (round.length === 0) break;
        this.claimQueue = rest;
        this.roundInFlight = round;
        const again = await this.claimRound(round).finally(() => {
          this.roundInFlight = [];
        });
        // Claims that lost a race go first in the next round, decided on what they met.
        if (again.length > 0) this.claimQueue = [...again, ...this.claimQueue];
      }
    } finally {
      this.claimsRunning = false;
      this.wakeIdleWaiters();
    }
  }

  /** Writes one round of claims; resolves the decided ones, returns those to try again. */
  private async claimRound(round: PendingClaim[]): Promise<PendingClaim[]> {
    const proposals: { pending: PendingClaim; proposal: Proposal }[] = [];
    for (const pending of round) {
      const decision = this.decide(pending);
      if ('reason' in decision) pending.resolve({ claimed: false, refusal: decision });
      else proposals.push({ pending, proposal: decision });
    }
    if (proposals.length === 0) return [];
    let rows: ClaimRow[];
    try {
      rows = await this.sendClaims(proposals);
    } catch (error) {
      // Claims that may have been committed were not sent: their `not-sent` waits for the next store.
      if (isLost(error) || this.gaveUp) {
        const notSent = proposals.map(({ proposal }) => this.notSentOf(proposal));
        await this.keepPending(notSent).catch(() => undefined);
      }
      const failure = this.signal?.aborted ? this.abortReason() : this.fail(error);
      for (const { pending } of proposals) pending.reject(failure);
      return [];
    }
    const won = new Set<string>();
    const met = new Map<string, ClaimRow>();
    for (const row of rows) {
      if (row.won) won.add(row.external_id);
      else met.set(row.external_id, row);
    }
    const again: PendingClaim[] = [];
    for (const { pending, proposal } of proposals) {
      const key = pending.request.externalId;
      // Its own token met: committed by an attempt whose answer was lost (see query()).
      if (won.has(key) || met.get(key)?.entry?.token === proposal.entry.token)
        this.granted(pending, proposal);
      else if (this.retryAfter(pending, met.get(key))) again.push(pending);
    }
    return again;
  }

  /** One statement for the claims of a round: the rows won, and the states met where lost. */
  private sendClaims(proposals: { pending: PendingClaim; proposal: Proposal }[]): Promise<ClaimRow[]> {
    return this.query<ClaimRow>({
      name: 'ordercli_ledger_claim',
      text: CLAIM_SQL,
      values: [
        this.service,
        this.kind,
        this.owner.id,
        JSON.stringify(this.owner),
        STALE_MS,
        proposals.map(({ pending }) => pending.request.externalId),
        byKey(
          proposals,
          ({ pending }) => pending.request.externalId,
          ({ proposal: { expect, entry, record, checkOwner } }) => ({
            expect,
            entry,
            state_key: stateKey(entry),
            record,
            check_owner: checkOwner,
          }),
        ),
      ],
    });
  }

  private granted(pending: PendingClaim, proposal: Proposal): void {
    const key = pending.request.externalId;
    const token = proposal.entry.token!;
    this.held.set(token, proposal.entry);
    this.remember(key, { entry: proposal.entry, stateKey: stateKey(proposal.entry) });
    const claim: Claim = { externalId: key, token, previous: proposal.entry.previous };
    // Interrupted meanwhile: its caller has given up, so it is not sent.
    if (this.signal?.aborted) this.notSent(claim, 'interrupted before it was sent');
    else pending.resolve({ claimed: true, claim });
  }

  /** The `not-sent` of a claim proposed (what a claim whose commit is unknown leaves). */
  private notSentOf(proposal: Proposal): PendingOutcome {
    const { externalId, token } = proposal.record;
    const record = this.record(externalId, 'not-sent', { token, reason: 'the claim was not confirmed' });
    return { externalId, token: token!, entry: applyRecord(proposal.entry, record), record };
  }

  /** A claim that lost its compare-and-swap: decided again on what it met, a few times at most. */
  private retryAfter(pending: PendingClaim, row: ClaimRow | undefined): boolean {
    const key = pending.request.externalId;
    pending.rounds++;
    if (pending.rounds >= MAX_CLAIM_ROUNDS) {
      pending.reject(
        this.writeError(new Error(`the state of ${key} kept changing under ${MAX_CLAIM_ROUNDS} claims`)),
      );
      return false;
    }
    const current: Row | null =
      row?.entry && row.state_key !== null ? { entry: row.entry, stateKey: row.state_key } : null;
    pending.known = { row: current, fromDatabase: true, beating: row?.beating ?? false };
    this.remember(key, current);
    return true;
  }

  /**
   * What a claim writes, given what it knows of its key, or its refusal. A refusal is only ever
   * given on a state read from the database in the claim's last round; on the prefetch's state
   * the claim asks the database first (a write that cannot take effect over a row, which returns
   * the row).
   */
  private decide(pending: PendingClaim): Proposal | ClaimRefusal {
    const { request } = pending;
    let known = pending.known;
    if (known === undefined) {
      const cached = this.cache.get(request.externalId);
      known = { row: cached ?? null, fromDatabase: false };
    }
    const record = this.record(request.externalId, 'claim', {
      token: randomBytes(9).toString('base64url'),
      owner: this.owner,
      bodyHash: request.bodyHash,
    });
    if (request.line !== undefined) record.line = request.line;
    const fresh = (): Proposal => ({
      expect: null,
      entry: applyRecord(undefined, record)!,
      record,
      checkOwner: false,
    });
    const row = known.row;
    if (row === null) return fresh();
    const over = (checkOwner: boolean, withOver: boolean): Proposal => {
      const claimRecord: LedgerRecord = withOver ? { ...record, over: row.stateKey } : record;
      const entry = applyRecord(row.entry, claimRecord);
      // Cannot happen (the record's model and the row agree); asks the database again otherwise.
      if (entry === undefined || entry.token !== record.token) return fresh();
      return { expect: row.stateKey, entry, record: claimRecord, checkOwner };
    };
    // Only the database's word refuses; on the prefetch's, the database is asked (see above).
    const refuse = (refusal: ClaimRefusal): Proposal | ClaimRefusal =>
      known.fromDatabase ? refusal : fresh();
    const entry = row.entry;
    switch (entry.status) {
      case 'not-created':
        return over(false, false);
      case 'created':
        return request.takeOverAny ? over(false, true) : refuse({ reason: 'created', entry });
      case 'in-doubt':
        return request.takeOverAny || request.takeOverDoubt
          ? over(false, true)
          : refuse({ reason: 'in-doubt', entry });
      default: {
        // Claimed (or a `sending` of ordercli before claims).
        const life = this.liveness(entry, known.fromDatabase ? known.beating : undefined);
        if (life === 'alive') return refuse({ reason: 'claimed', entry });
        if (request.takeOverAny || request.takeOverDoubt) return over(life !== 'dead', true);
        if (life === 'unknown') return fresh();
        return refuse({ reason: 'in-doubt', entry: settledAsUnknown(entry) });
      }
    }
  }

  /**
   * Whether a claim's owner is alive: by its process when that can be checked from here, else by
   * its heartbeat as the server judged it (`beating`; undefined when not asked yet).
   */
  private liveness(entry: LedgerEntry, beating: boolean | undefined): Liveness {
    const owner = entry.owner;
    // A `sending` of ordercli before claims names no owner: in doubt.
    if (!owner) return 'dead';
    if (owner.id === this.owner.id) return 'alive';
    const verdict = judgeProcess(owner);
    if (verdict.kind === 'alive') return 'alive';
    if (verdict.kind === 'dead') return 'dead';
    if (beating === undefined) return 'unknown';
    return beating ? 'alive' : 'stale';
  }

  /** Keeps the prefetch's picture of a key up to date (only keys it holds). */
  private remember(key: string, row: Row | null): void {
    if (this.cache.has(key)) this.cache.set(key, row);
  }

  // Outcomes

  created(claim: Claim, outcome: { httpStatus: number; id?: string | number; code?: string }): void {
    const fields: Partial<LedgerRecord> = { httpStatus: outcome.httpStatus };
    if (outcome.id !== undefined) fields.id = outcome.id;
    if (outcome.code !== undefined) fields.code = outcome.code;
    this.outcome(claim, 'created', fields);
  }

  failed(claim: Claim, outcome: { httpStatus?: number; message: string }): void {
    const fields: Partial<LedgerRecord> = { message: outcome.message };
    if (outcome.httpStatus !== undefined) fields.httpStatus = outcome.httpStatus;
    this.outcome(claim, 'failed', fields);
  }

  unknown(claim: Claim, reason: string): void {
    this.outcome(claim, 'unknown', { reason });
  }

  notSent(claim: Claim, reason: string): void {
    this.outcome(claim, 'not-sent', { reason });
  }

  private outcome(
    claim: Claim,
    event: 'created' | 'failed' | 'unknown' | 'not-sent',
    fields: Partial<LedgerRecord>,
  ): void {
    if (this.readOnly || this.closed) {
      this.fail(new Error('an outcome after the ledger was closed'));
      return;
    }
    const claimed = this.held.get(claim.token);
    // Not a claim this store holds (or already answered): the record would change nothing.
    if (claimed === undefined || claimed.status !== 'claimed') return;
    this.held.delete(claim.token);
    const record = this.record(claim.externalId, event, { token: claim.token, ...fields });
    const entry = applyRecord(claimed, record);
    this.outcomeQueue.push({ externalId: claim.externalId, token: claim.token, entry, record });
    this.outcomeKeys.set(claim.externalId, (this.outcomeKeys.get(claim.externalId) ?? 0) + 1);
    this.scheduleOutcomes();
  }

  private scheduleOutcomes(): void {
    if (this.outcomesRunning || this.outcomesScheduled) return;
    this.outcomesScheduled = true;
    setImmediate(() => {
      this.outcomesScheduled = false;
      void this.runOutcomes();
    });
  }

  private async runOutcomes(): Promise<void> {
    if (this.outcomesRunning) return;
    this.outcomesRunning = true;
    try {
      while (this.outcomeQueue.length > 0) {
        const { round, rest } = nextRound(
          this.outcomeQueue,
          (pending) => pending.externalId,
          () => false,
        );
        this.outcomeQueue = rest;
        await this.outcomeRound(round);
        for (const { externalId } of round) {
          const left = (this.outcomeKeys.get(externalId) ?? 1) - 1;
          if (left <= 0) this.outcomeKeys.delete(externalId);
          else this.outcomeKeys.set(externalId, left);
        }
        // Claims of these keys may go now.
        if (this.claimQueue.length > 0) this.scheduleClaims();
      }
    } finally {
      this.outcomesRunning = false;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const wake of waiters) wake();
      this.wakeIdleWaiters();
    }
  }

  private async outcomeRound(round: PendingOutcome[]): Promise<void> {
    let changed: { external_id: string }[];
    try {
      changed = await this.query({
        name: 'ordercli_ledger_outcome',
        text: OUTCOME_SQL,
        values: outcomeValues(this.service, this.kind, round),
      });
    } catch (error) {
      for (const pending of round) this.cache.delete(pending.externalId);
      // Not written on a new connection either (or given up on Ctrl-C): kept for the next store.
      if (isLost(error) || this.gaveUp) await this.keepPending(round).catch(() => this.fail(error));
      else this.fail(error);
      return;
    }
    const done = new Set(changed.map((row) => row.external_id));
    for (const pending of round) {
      const key = pending.externalId;
      if (!done.has(key)) this.cache.delete(key);
      else
        this.remember(
          key,
          pending.entry === undefined ? null : { entry: pending.entry, stateKey: stateKey(pending.entry) },
        );
    }
  }

  private fail(error: unknown): CliError {
    this.failure ??= this.writeError(error);
    return this.failure;
  }

  // Resolutions and adoption

  async resolved(
    externalId: string,
    resolution: Resolution,
    details: { id?: string | number; code?: string; evidence?: string },
  ): Promise<void> {
    this.checkWritable();
    const record = this.record(externalId, 'resolved', { resolution });
    if (details.id !== undefined) record.id = details.id;
    if (details.code !== undefined) record.code = details.code;
    if (details.evidence !== undefined) record.evidence = details.evidence;
    try {
      for (let attempt = 0; attempt < MAX_CLAIM_ROUNDS; attempt++) {
        const rows = await this.query<{ state_key: string; entry: LedgerEntry; beating: boolean }>({
          text: `SELECT l.state_key, l.entry, ${ownerBeating(4)} AS beating
            FROM ordercli_ledger l WHERE service = $1 AND kind = $2 AND external_id = $3`,
          values: [this.service, this.kind, externalId, STALE_MS],
        });
        const current = rows[0];
        // A person's word never overrides an order that another ordercli is sending right now.
        if (
          current?.entry.status === 'claimed' &&
          this.liveness(current.entry, current.beating) === 'alive'
        ) {
          throw new ClaimedNowError(externalId, current.entry);
        }
        const entry = applyRecord(current?.entry, record);
        if (entry === undefined) return;
        const written = await this.query({
          text: REPLACE_SQL,
          values: [
            this.service,
            this.kind,
            externalId,
            current?.state_key ?? null,
            JSON.stringify(entry),
            stateKey(entry),
            JSON.stringify(record),
          ],
        });
        if (written.length > 0) {
          this.remember(externalId, { entry, stateKey: stateKey(entry) });
          return;
        }
      }
      throw new Error(`the state of ${externalId} kept changing`);
    } catch (error) {
      if (error instanceof ClaimedNowError) throw error;
      throw this.writeError(error);
    }
  }

  /**
   * Records the states a journal's records give keys that have no row (a ledger newer than the
   * journal): each key's records are applied in order (applyRecord), and the state inserted only
   * where the table has no row of the key, with its records in the history.
   */
  async adopt(records: readonly LedgerRecord[]): Promise<void> {
    this.checkWritable();
    const perKey = new Map<string, { entry: LedgerEntry | undefined; records: LedgerRecord[] }>();
    for (const record of records) {
      let key = perKey.get(record.externalId);
      if (!key) {
        key = { entry: undefined, records: [] };
        perKey.set(record.externalId, key);
      }
      key.entry = applyRecord(key.entry, record);
      key.records.push(record);
    }
    const states = [...perKey].filter(
      (pair): pair is [string, { entry: LedgerEntry; records: LedgerRecord[] }] =>
        pair[1].entry !== undefined,
    );
    try {
      for (let start = 0; start < states.length; start += PREFETCH_CHUNK) {
        const chunk = states.slice(start, start + PREFETCH_CHUNK);
        const adopted = byKey(
          chunk,
          ([key]) => key,
          ([, { entry, records: own }]) => ({ entry, state_key: stateKey(entry), records: own }),
        );
        await this.query({ text: ADOPT_SQL, values: [this.service, this.kind, adopted] });
        // What is in the table now is not known here (another writer's row, or these): asked again.
        for (const [key] of chunk) this.cache.delete(key);
      }
    } catch (error) {
      throw this.writeError(error);
    }
  }

  // Durability and the end

  sync(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const settle = () => {
        if (this.failure) reject(this.failure);
        else resolve();
      };
      if (this.outcomeQueue.length === 0 && !this.outcomesRunning && !this.outcomesScheduled) settle();
      else this.syncWaiters.push(settle);
    });
  }

  /**
   * Waits for the claims and outcomes in flight, then ends the heartbeat (its row is deleted: the
   * claims left without outcome are in doubt from now on) and the connections. Rejects only when
   * writing what was pending fails: an earlier failure is for `sync()` and the claims to report.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const earlier = this.failure;
    while (!this.idle()) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.pool) {
      if (!this.readOnly) {
        await this.query({
          text: 'DELETE FROM ordercli_ledger_owners WHERE id = $1',
          values: [this.owner.id],
        }).catch(() => undefined);
      }
      // A connection whose server does not answer would never end: destroyed after a moment.
      const ended = this.pool.end().catch(() => undefined);
      await Promise.race([ended, delay(this.gaveUp ? 0 : PENDING_GRACE_MS, undefined, { ref: false })]);
      this.giveUp();
    }
    clearTimeout(this.giveUpTimer);
    this.signal?.removeEventListener('abort', this.onAbort);
    if (this.failure && this.failure !== earlier) throw this.failure;
  }

  /** No claim or outcome is queued or in flight. */
  private idle(): boolean {
    return (
      this.claimQueue.length === 0 &&
      !this.claimsRunning &&
      !this.claimsScheduled &&
      this.outcomeQueue.length === 0 &&
      !this.outcomesRunning &&
      !this.outcomesScheduled
    );
  }

  private wakeIdleWaiters(): void {
    if (!this.idle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
