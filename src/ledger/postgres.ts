/**
 * The order ledger in PostgreSQL (`--ledger postgres://…`): one database shared by a fleet, with the
 * record model of record.ts. Its tables (`POSTGRES_LEDGER_DDL`, created on first use) are in one schema
 * (`?schema=`, else ORDERCLI_LEDGER_SCHEMA, else `public`) named in every statement:
 * - `ordercli_ledger`: each (service, kind, key)'s current state (LedgerEntry) and `state_key`;
 * - `ordercli_ledger_records`: the history earlier releases wrote: kept, emptied by `forget`, not written;
 * - `ordercli_ledger_owners`: one row an open store, whose `beat_at` it sets to the server's `now()`
 *   every HEARTBEAT_MS. A claim's owner that judgeProcess cannot check is alive while its row is
 *   younger than STALE_MS by the server's clock.
 *
 * Claims and outcomes asked for in one turn of the event loop, or while a round is in flight, go in
 * one statement (WRITE_SQL) of compare-and-swaps, one a key: `INSERT … ON CONFLICT DO NOTHING` where
 * no row is expected, else an UPDATE (or DELETE) conditioned on the `state_key` replaced, so the
 * database decides which of any number of processes holds a claim. A round with claims is on disk
 * when it resolves; outcomes are not waited for (`sync()` does). A claim first expects no row; one
 * that lost is decided again on the row met. A lost connection is replaced; writes still not made
 * wait in `<config folder>/ledger-pending/<hash>.ndjson` for the next store; on Ctrl-C claims give
 * up at once and connections still busy after PENDING_GRACE_MS are destroyed.
 */
import { hash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, readFile, rename, unlink } from 'node:fs/promises';
import { Socket } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay, setImmediate as immediate } from 'node:timers/promises';
import type { Pool, PoolClient, QueryConfig, QueryResultRow } from 'pg';
import { parseDuration } from '../config/duration.js';
import { CancelledError, CliError, UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { KeyTable } from '../core/key-table.js';
import { HEARTBEAT_MS, judgeProcess, newOwner, STALE_MS } from '../core/liveness.js';
import { redactUrlPassword, urlPasswords } from '../core/redact.js';
import { normalizeBaseUrl } from '../core/url.js';
import { isoNow } from '../io/iso-time.js';
import { ClaimedNowError, LedgerWriteError } from './errors.js';
import type { ClaimOwner, LedgerEntry, LedgerRecord, Resolution } from './record.js';
import { applyRecord, refusalOf, settledAsUnknown, stateKey } from './record.js';
import { findSameService } from './service-identity.js';
import type * as store from './store.js';

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
CREATE INDEX IF NOT EXISTS ordercli_ledger_service
  ON ordercli_ledger (service, kind);
CREATE TABLE IF NOT EXISTS ordercli_ledger_records (  -- written by earlier releases only
  seq         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  service     text        NOT NULL,
  kind        text        NOT NULL,
  external_id text        NOT NULL,
  journal     text,                  -- the import's journal that wrote it, if any
  at          text        NOT NULL,  -- the record's time (its writer's clock, for people)
  written_at  timestamptz NOT NULL DEFAULT now(),
  record      jsonb       NOT NULL   -- the record (LedgerRecord)
);
CREATE TABLE IF NOT EXISTS ordercli_ledger_owners (
  id          text        PRIMARY KEY,  -- ClaimOwner.id of an open store
  identity    jsonb       NOT NULL,     -- the whole ClaimOwner
  beat_at     timestamptz NOT NULL DEFAULT now()  -- the server's clock, set by the owner
);`;

const TABLES = ['ordercli_ledger', 'ordercli_ledger_records', 'ordercli_ledger_owners'];
/** Keys a `prefetch` reads, or `adopt` writes, a statement; a round writes at most MAX_ROUND. */
const CHUNK = 10_000;
const MAX_ROUND = 2_000;
/** Rounds a claim may take before giving up (each is a state change by another process). */
const MAX_CLAIM_ROUNDS = 50;
/** After Ctrl-C, what is in flight has this long before its connections are destroyed. */
const PENDING_GRACE_MS = 500;
/** What `prefetch` found of a key (its value in a KeyTable): no row, or a row (the database tells). */
const FREE = -1;
const KNOWN = -2;
const STATUSES = new Set(['created', 'claimed', 'in-doubt', 'not-created']);
const isState = (entry: unknown) => STATUSES.has((entry as { status?: string } | null)?.status ?? '');

/** The owner of row `l`'s claim beats: its row was beaten less than STALE_MS ago (server's clock). */
const BEATING = `EXISTS (SELECT 1 FROM ordercli_ledger_owners o
  WHERE o.id = l.owner->>'id' AND now() - o.beat_at < interval '${STALE_MS} milliseconds')`;
/** This store's heartbeat; owners not beaten for a day are dead anyway, and go. */
const BEAT_SQL = `WITH gone AS (DELETE FROM ordercli_ledger_owners WHERE beat_at < now() - interval '1 day')
INSERT INTO ordercli_ledger_owners (id, identity, beat_at) VALUES ($1, $2::jsonb, now())
ON CONFLICT (id) DO UPDATE SET beat_at = now()`;
/** What `probe` tries of a claim ($1 a key of its own), in a transaction rolled back. */
const PROBE_SQL = [
  `INSERT INTO ordercli_ledger (external_id, service, kind, status, state_key, entry)
    VALUES ($1, $2, $3, 'claimed', '', '{}')`,
  `UPDATE ordercli_ledger SET status = 'not-created' WHERE external_id = $1 AND service = $2 AND kind = $3`,
  'DELETE FROM ordercli_ledger WHERE external_id = $1 AND service = $2 AND kind = $3',
];

/**
 * Compare-and-swaps (`Swap`, with `sk` = stateKey(entry)), one a key: $1 service, $2 kind, $6 the
 * swaps. With $5 (a round of claims) it beats the heartbeat of owner $3 ($4), commits on disk (on a
 * server that does not, `synchronous_commit` is set on for the transaction) and returns, beside the
 * keys that changed (`won`), every key's row as of the statement's snapshot with whether its owner
 * beats (one committed after the snapshot is not there: the next round sees it).
 */
const WRITE_SQL = `WITH c AS (
  SELECT * FROM jsonb_to_recordset($6::jsonb) AS c(key text, expect text, entry jsonb, sk text, check_owner boolean)
), beat AS (
  INSERT INTO ordercli_ledger_owners (id, identity, beat_at) SELECT $3, $4::jsonb, now()
  WHERE CASE WHEN $5::boolean THEN (CASE WHEN current_setting('synchronous_commit') IN ('off', 'local')
    THEN set_config('synchronous_commit', 'on', true) ELSE 'kept' END) IS NOT NULL END
  ON CONFLICT (id) DO UPDATE SET beat_at = now()
), inserted AS (
  INSERT INTO ordercli_ledger (external_id, service, kind, status, token, owner, state_key, entry)
  SELECT key, $1, $2, entry->>'status', entry->>'token', entry->'owner', sk, entry FROM c
  WHERE expect IS NULL ORDER BY key ON CONFLICT (external_id, service, kind) DO NOTHING RETURNING external_id
), updated AS (
  UPDATE ordercli_ledger l SET status = c.entry->>'status', token = c.entry->>'token',
    owner = c.entry->'owner', state_key = c.sk, entry = c.entry, updated_at = now()
  FROM c WHERE c.entry IS NOT NULL AND l.external_id = c.key AND l.service = $1 AND l.kind = $2
    AND l.state_key = c.expect AND NOT (c.check_owner AND ${BEATING})
  RETURNING l.external_id
), removed AS (
  DELETE FROM ordercli_ledger l USING c WHERE c.entry IS NULL AND l.external_id = c.key
    AND l.service = $1 AND l.kind = $2 AND l.state_key = c.expect RETURNING l.external_id
)
SELECT external_id, true AS won, NULL::text AS state_key, NULL::jsonb AS entry, false AS beating FROM inserted
UNION ALL SELECT external_id, true, NULL, NULL, false FROM updated
UNION ALL SELECT external_id, true, NULL, NULL, false FROM removed
UNION ALL SELECT l.external_id, false, l.state_key, l.entry, ${BEATING}
FROM c JOIN ordercli_ledger l ON l.external_id = c.key AND l.service = $1 AND l.kind = $2 WHERE $5`;

/** One compare-and-swap: the key's row goes from `expect` (null: none) to `entry` (null: none). */
interface Swap {
  key: string;
  expect: string | null;
  entry: LedgerEntry | null;
  /** The replaced claim's owner must not beat (the server checks). */
  check?: boolean;
}

/** A row of WRITE_SQL: a key that changed, or the row met (with whether its owner beats). */
interface WriteRow {
  external_id: string;
  won: boolean;
  state_key: string | null;
  entry: LedgerEntry | null;
  beating: boolean;
}

interface PendingClaim {
  key: string;
  request: store.ClaimRequest;
  /** The row its last round met (null: none); undefined before its first round (it expects none). */
  met?: WriteRow | null;
  rounds: number;
  resolve(result: store.ClaimResult): void;
  reject(error: Error): void;
}

/** What a PostgreSQL ledger reads beside its URL. */
export interface PostgresSettings {
  /** ORDERCLI_LEDGER_SCHEMA and ORDERCLI_LEDGER_STATEMENT_TIMEOUT. */
  env?: NodeJS.ProcessEnv;
  /** Where writes that could not be made wait for the next store: `<config folder>/ledger-pending`. */
  pendingFolder?: string;
}

/** A PostgreSQL URL as it may be shown: its password (in the user info or the query) as `***`. */
export const redactLedgerUrl = redactUrlPassword;

const ignore = (): void => undefined;
/** A name as SQL quotes it. */
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** `text` with its tables in `schema` (quoted). */
const qualify = (text: string, schema: string) =>
  text.replace(/\bordercli_ledger(?:_records|_owners)?\b/g, (name) => `${schema}.${name}`);
const UNREACHABLE =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|ENOENT)$/;

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

/** Lost, not refused (pg's own errors have no code): it may run again on a new connection. */
function isLost(error: unknown): boolean {
  const code = codeOf(error);
  return code === '' || /^(08|57P0|57014)/.test(code) || UNREACHABLE.test(code);
}

/** The URL given to pg (without `schema`) and the schema, or a UsageError that shows no password. */
function parseLedgerUrl(url: string, env: NodeJS.ProcessEnv): { connection: string; schema: string } {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
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

export class PostgresLedger implements store.LedgerStore {
  readonly location: string;
  readonly baseUrl: string;
  readonly owner: ClaimOwner = newOwner();
  private readonly beatSql = { text: BEAT_SQL, values: [this.owner.id, JSON.stringify(this.owner)] };
  /** The base URL whose rows this one uses: another name of the same service (service-identity.ts). */
  sameServiceAs: string | undefined;
  /** The `service` of the rows used: `sameServiceAs`, or the base URL. */
  private service: string;
  /** The URL's passwords, longest first (shorter than 3: too short to mask, and to be real ones). */
  private readonly secrets: string[];
  private readonly connection: string;
  /** The schema, quoted as statements name it. */
  private readonly schema: string;
  private readonly timeoutMs: number;
  private readonly pendingFile: string | undefined;
  private pool: Pool | undefined;
  /** Every connection's socket, to destroy the stalled ones (Ctrl-C, close). */
  private readonly sockets = new Set<Socket>();
  /** Set once what was in flight at Ctrl-C had its time: the connections are destroyed. */
  private gaveUp = false;
  private giveUpTimer: NodeJS.Timeout | undefined;
  /** False for a read-only store on a database without the tables: it knows no key. */
  private tablesExist = true;
  private heartbeat: NodeJS.Timeout | undefined;
  /** The beat in flight: close() waits for it, so that it cannot bring back the row close deletes. */
  private beating: Promise<unknown> | undefined;
  private closed = false;
  private failure: CliError | undefined;
  /** What `prefetch` found of each key (FREE or KNOWN; another value: being read). */
  private prefetched = new KeyTable();
  private counts = { created: 0, inDoubt: 0 };
  /** The claimed entry of each claim held, by token (what an outcome is applied to). */
  private readonly held = new Map<string, LedgerEntry>();
  /** Claims and outcomes to write, the round in flight, and the rounds' writing (while any is queued). */
  private queue: (PendingClaim | Swap)[] = [];
  private round: (PendingClaim | Swap)[] = [];
  private writing: Promise<void> | undefined;
  /** The reads of `validated` before their write (sync() waits for them). */
  private readonly lookups = new Set<Promise<void>>();

  private constructor(
    url: string,
    private readonly options: store.OpenLedgerOptions,
    settings: PostgresSettings,
  ) {
    const env = settings.env ?? {};
    const { connection, schema } = parseLedgerUrl(url, env);
    const timeout = env.ORDERCLI_LEDGER_STATEMENT_TIMEOUT;
    const name = 'ORDERCLI_LEDGER_STATEMENT_TIMEOUT';
    this.timeoutMs = timeout ? parseDuration(timeout, { name, minMs: 100, maxMs: 3_600_000 }) : 30_000;
    this.connection = connection;
    this.schema = quoted(schema);
    this.location = redactUrlPassword(url);
    this.secrets = urlPasswords(url)
      .filter((secret) => secret.length >= 3)
      .sort((a, b) => b.length - a.length);
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.service = this.baseUrl;
    const ledgerId = hash('sha256', `${redactUrlPassword(connection)}\n${schema}`, 'hex').slice(0, 24);
    const folder = settings.pendingFolder;
    this.pendingFile = folder === undefined ? undefined : join(folder, `${ledgerId}.ndjson`);
  }

  /**
   * Connects, creates the tables if they are missing (unless read-only), makes the writes an earlier
   * store could not, starts the heartbeat and finds which service's rows to use. A server that cannot
   * be reached, or refuses the login, is exit 1 naming the URL without its password; Ctrl-C meanwhile
   * ends it within PENDING_GRACE_MS (exit 130).
   */
  static async open(url: string, options: store.OpenLedgerOptions, settings: PostgresSettings = {}) {
    const ledger = new PostgresLedger(url, options, settings);
    try {
      if (options.signal?.aborted) throw ledger.abortReason();
      options.signal?.addEventListener('abort', ledger.onAbort, { once: true });
      ledger.pool = ledger.newPool((await import('pg')).Pool);
      await ledger.prepareTables();
      if (!options.readOnly) {
        await ledger.foldPending();
        await ledger.query(ledger.beatSql);
        ledger.heartbeat = setInterval(() => ledger.beat(), HEARTBEAT_MS).unref();
      }
      await ledger.findService();
    } catch (error) {
      ledger.gaveUp = true;
      await ledger.close().catch(ignore);
      throw ledger.errorOf(error, true);
    }
    return ledger;
  }

  /**
   * What a dry run checks of a PostgreSQL ledger, without keeping anything: the server reached, the
   * login accepted, the schema and tables there or creatable, and a claim insertable, updatable and
   * deletable, all in one transaction rolled back. Fails with the error the real run would give.
   */
  static async probe(url: string, options: store.OpenLedgerOptions, settings: PostgresSettings = {}) {
    const ledger = new PostgresLedger(url, { ...options, readOnly: true }, settings);
    try {
      ledger.pool = ledger.newPool((await import('pg')).Pool);
      await ledger.transaction(false, async (client) => {
        // As the real run: the tables are created only when missing (they may be another role's).
        await ledger.createMissing(client, TABLES);
        const values = [`ordercli-dry-run-${ledger.owner.id}`, ledger.baseUrl, options.kind];
        for (const text of PROBE_SQL) await client.query(qualify(text, ledger.schema), values);
        await client.query({ ...ledger.beatSql, text: qualify(BEAT_SQL, ledger.schema) });
      });
    } catch (error) {
      throw ledger.errorOf(error, true);
    } finally {
      await ledger.pool?.end().catch(ignore);
    }
  }

  /** The SQL that creates the ledger's schema and tables (`ledger init --print-sql`), for an owner to run once. */
  static creationSql(url: string | undefined, env: NodeJS.ProcessEnv = {}): string {
    const name = url === undefined ? env.ORDERCLI_LEDGER_SCHEMA || 'public' : parseLedgerUrl(url, env).schema;
    const schema = quoted(name);
    return `CREATE SCHEMA IF NOT EXISTS ${schema};\n${qualify(POSTGRES_LEDGER_DDL, schema)}\n`;
  }

  /** The base URLs and kinds the ledger holds ([] when it has no tables). */
  static services(url: string, settings: PostgresSettings = {}): Promise<store.LedgerService[]> {
    const text = 'SELECT DISTINCT service AS "baseUrl", kind FROM ordercli_ledger ORDER BY 1, 2';
    return PostgresLedger.session(url, settings, { text });
  }

  /** Deletes every row of a service (every kind, and its history); resolves with the keys removed. */
  static async forget(url: string, baseUrl: string, settings: PostgresSettings = {}): Promise<number> {
    const [row] = await PostgresLedger.session<{ n: number }>(url, settings, {
      text: `WITH history AS (DELETE FROM ordercli_ledger_records WHERE service = $1),
        gone AS (DELETE FROM ordercli_ledger WHERE service = $1 RETURNING 1)
        SELECT count(*)::integer AS n FROM gone`,
      values: [normalizeBaseUrl(baseUrl)],
    });
    return row?.n ?? 0;
  }

  /** Runs one statement on a read-only store of no service ([] without tables). */
  private static async session<T extends QueryResultRow>(
    url: string,
    settings: PostgresSettings,
    statement: QueryConfig,
  ) {
    const source = { by: 'orders resolve' } as const;
    const options = { baseUrl: '', kind: 'orders', source, readOnly: true } as const;
    const ledger = await PostgresLedger.open(url, options, settings);
    try {
      return ledger.tablesExist ? await ledger.query<T>(statement) : [];
    } catch (error) {
      throw ledger.errorOf(error, true);
    } finally {
      await ledger.close().catch(ignore);
    }
  }

  /** Connections with keepalive and the statement timeouts, whose sockets are known (`sockets`). */
  private newPool(PoolClass: typeof Pool): Pool {
    const pool = new PoolClass({
      connectionString: this.connection,
      application_name: 'ordercli',
      // Claims and outcomes, the heartbeat and a read can each have one.
      max: 4,
      connectionTimeoutMillis: Math.min(15_000, this.timeoutMs * 2),
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // The server cancels a statement first; this side gives up on a server that says nothing.
      statement_timeout: this.timeoutMs,
      query_timeout: this.timeoutMs + Math.min(2_000, this.timeoutMs),
      allowExitOnIdle: true,
      stream: () => {
        const socket = new Socket();
        this.sockets.add(socket);
        return socket.once('close', () => this.sockets.delete(socket));
      },
    });
    // A connection lost while idle is replaced by the next query; unheard, 'error' would end the process.
    return pool.on('error', ignore);
  }

  /** Ctrl-C: claims give up now; what is in flight has PENDING_GRACE_MS (see the module's notes). */
  private readonly onAbort = (): void => {
    for (const item of [...this.queue, ...this.round]) if ('request' in item) item.reject(this.abortReason());
    this.queue = this.queue.filter((item) => !('request' in item));
    this.giveUpTimer ??= setTimeout(() => this.giveUp(), PENDING_GRACE_MS);
  };

  private giveUp(): void {
    this.gaveUp = true;
    for (const socket of this.sockets) socket.destroy();
  }

  private abortReason(): CliError {
    const reason: unknown = this.options.signal?.reason;
    return reason instanceof CliError ? reason : new CancelledError();
  }

  /** Creates what is missing of the schema and tables, one process at a time (read-only: only looks). */
  private async prepareTables(): Promise<void> {
    const all = [...TABLES, 'ordercli_ledger_service'];
    if (await this.present(all)) return;
    this.tablesExist = await this.present(TABLES);
    if (this.options.readOnly) return;
    try {
      await this.transaction(true, async (client) => {
        // One process at a time (any constant shared by all).
        await client.query('SELECT pg_advisory_xact_lock($1)', [0x6f72_6465_72]);
        // Another process may have created them meanwhile (possibly another role, whose tables these are).
        await this.createMissing(client, all);
      });
    } catch (error) {
      // An index this role may not create (another role's tables) only makes some reads slower.
      if (!this.tablesExist) throw error;
    }
    this.tablesExist = true;
  }

  /** Runs `work` in a transaction on one connection, committed (`commit`) or rolled back. */
  private async transaction(commit: boolean, work: (client: PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool!.connect();
    client.on('error', ignore);
    let committed = false;
    try {
      await client.query('BEGIN');
      await work(client);
      if (commit) await client.query('COMMIT');
      committed = commit;
    } finally {
      if (!committed) await client.query('ROLLBACK').catch(ignore);
      client.removeListener('error', ignore).release();
    }
  }

  /** Whether each of `names` is in the ledger's schema. */
  private async present(names: string[]): Promise<boolean> {
    const text = 'SELECT count(to_regclass($1 || name))::integer AS n FROM unnest($2::text[]) AS name';
    const [row] = await this.query<{ n: number }>({ text, values: [`${this.schema}.`, names] });
    return row?.n === names.length;
  }

  /** In a transaction: creates the schema and tables when any of `names` is missing. */
  private async createMissing(client: PoolClient, names: string[]): Promise<void> {
    if (await this.present(names)) return;
    // Not `IF NOT EXISTS`: that needs the right to create schemas even when the schema exists.
    const schema = await client.query('SELECT to_regnamespace($1) AS oid', [this.schema]);
    if (schema.rows[0]?.oid === null) await client.query(`CREATE SCHEMA ${this.schema}`);
    await client.query(qualify(POSTGRES_LEDGER_DDL, this.schema));
  }

  /**
   * Makes the writes an earlier store of this ledger could not (the pending file), each a
   * compare-and-swap as always, then deletes the file, taken by renaming (a store writing to it
   * meanwhile starts a new one).
   */
  private async foldPending(): Promise<void> {
    const file = this.pendingFile;
    const taken = `${file}.${this.owner.id}`;
    if (file === undefined || !(await rename(file, taken).then(() => true, ignore))) return;
    const text = await readFile(taken, 'utf8');
    try {
      // A torn last line (a crash while it was written) is passed over.
      for (const line of text.split('\n').filter((line) => line.endsWith('}'))) {
        const kept = JSON.parse(line) as Swap & { service: string; kind: store.LedgerKind };
        if (typeof kept.key === 'string') await this.swap([kept], false, kept.service, kept.kind);
      }
    } catch (error) {
      // Back for the next store: a swap made twice changes nothing the second time.
      await appendFile(file, text, { mode: 0o600 });
      await unlink(taken);
      throw error;
    }
    await unlink(taken);
  }

  /** Writes that could not be made, kept for the next store (synced). */
  private async keepPending(swaps: readonly Swap[]): Promise<void> {
    if (this.pendingFile === undefined) throw new Error('no folder to keep the outcomes in');
    const [service, kind] = [this.service, this.options.kind];
    const lines = swaps.map((swap) => `${JSON.stringify({ service, kind, ...swap })}\n`);
    await mkdir(dirname(this.pendingFile), { recursive: true, mode: 0o700 });
    await appendFile(this.pendingFile, lines.join(''), { mode: 0o600, flush: true });
  }

  /** Uses the rows of another name of this service when this base URL has none (service-identity.ts). */
  private async findService(): Promise<void> {
    if (!this.tablesExist || this.baseUrl === '') return;
    const others = await this.query<{ service: string }>({
      text: `SELECT DISTINCT service FROM ordercli_ledger
        WHERE NOT EXISTS (SELECT 1 FROM ordercli_ledger WHERE service = $1)`,
      values: [this.baseUrl],
    });
    const names = others.map(({ service }) => service);
    this.sameServiceAs = await findSameService(this.baseUrl, names);
    this.service = this.sameServiceAs ?? this.baseUrl;
  }

  /**
   * The store's error for a failure, showing no password: Ctrl-C's when interrupted; at open, one
   * sentence saying whether the server was reached; after, a LedgerWriteError (nothing more is sent).
   */
  private errorOf(error: unknown, opening = false): CliError {
    if (this.options.signal?.aborted) return this.abortReason();
    if (error instanceof CliError) return error;
    const code = codeOf(error);
    // pg's messages do not hold the password; this makes sure.
    const text = (error as Error | undefined)?.message ?? String(error);
    const message = this.secrets.reduce((out, secret) => out.split(secret).join('***'), text);
    if (!opening) {
      // An errno code says it all (ECONNRESET); a SQLSTATE alone does not: the message goes with it.
      const sqlState = /^[0-9A-Z]{5}$/.test(code);
      const cause: NodeJS.ErrnoException = new Error(sqlState ? `${code} ${message}` : message);
      if (code && !sqlState) cause.code = code;
      return new LedgerWriteError(this.location, cause);
    }
    const ledger = `PostgreSQL ledger ${this.location}`;
    if (code === '42501') {
      // A role that may not create the tables (PostgreSQL 15 gives no one CREATE on `public`): the
      // URL's user, else PGUSER, else the system user's name, as pg does.
      const name = decodeURIComponent(new URL(this.connection).username);
      const [user, schema] = [quoted(name || process.env.PGUSER || userInfo().username), this.schema];
      const hint = `Ask an owner of the schema for GRANT CREATE ON SCHEMA ${schema} TO ${user}, or to create the tables once (ordercli ledger init --print-sql | psql <url>) and GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${user}.`;
      const sentence = `The ${ledger} refused what the ledger needs (42501 ${message}), so nothing was sent.`;
      return new CliError(sentence, ExitCode.Failure, [hint]);
    }
    const sentence =
      // A refused login: bad password, no such role, pg_hba.conf rejects.
      /^28(P01|000)$/.test(code) || /password|SASL|authentication/i.test(message)
        ? `The ${ledger} refused the login (${message})`
        : UNREACHABLE.test(code) || /timeout|terminated|connect/i.test(message)
          ? `Cannot reach the ${ledger} (${code || message})`
          : `Cannot open the ${ledger} (${code ? `${code} ` : ''}${message})`;
    return new CliError(`${sentence}, so nothing was sent.`, ExitCode.Failure, [
      `Check that the server is up and that the URL's host, port, database, user and password are right (${this.location}).`,
    ]);
  }

  private fail(error: unknown): CliError {
    this.failure ??= this.errorOf(error);
    return this.failure;
  }

  /** A row that holds no state is damage (exit 2): never read as a state, nothing sent. */
  private damaged(key: string): UsageError {
    return new UsageError(
      `The order ledger ${this.location} is damaged: the row of ${JSON.stringify(key)} (${this.service}) holds no state, so it cannot tell whether that order was sent; nothing was sent.`,
      [
        'Restore that row from a backup, or delete it once you have checked at the service whether the order exists.',
      ],
    );
  }

  /**
   * Runs a statement in the ledger's schema: again (4 times at most) when the server broke a
   * deadlock or a serialization conflict, or once on a new connection when this one was lost (every
   * statement is a compare-and-swap or a read: running it again is safe); `read`: see read().
   */
  private async query<T extends QueryResultRow>(config: QueryConfig, read = false): Promise<T[]> {
    const statement = { ...config, text: qualify(config.text, this.schema) };
    for (let attempt = 1; ; attempt++) {
      if (this.gaveUp) throw this.abortReason();
      const pool = this.pool!;
      let client: PoolClient | undefined;
      try {
        client = await pool.connect();
        // A connection lost in a statement also emits 'error', with no listener while checked out.
        client.on('error', ignore);
        const { rows } = await client.query<T>(statement);
        client.removeListener('error', ignore).release();
        return rows;
      } catch (error) {
        const lost = isLost(error);
        // A broken or stalled connection is destroyed, not reused; the pool's others may be stalled
        // too (a dead path): the next statements use new ones.
        if (lost && pool === this.pool && !this.closed) {
          this.pool = this.newPool(pool.constructor as typeof Pool);
          void pool.end().catch(ignore);
        }
        if (lost) client?.connection.stream.destroy();
        client?.removeListener('error', ignore).release(lost ? (error as Error) : undefined);
        const again = /^40(P01|001)$/.test(codeOf(error)) ? attempt < 5 : attempt === 1 && lost;
        if (!again) throw this.gaveUp ? this.abortReason() : read ? this.errorOf(error) : error;
      }
    }
  }

  /** A statement whose failure is the store's error (errorOf). */
  private read<T extends QueryResultRow>(config: QueryConfig): Promise<T[]> {
    return this.query<T>(config, true);
  }

  /** One WRITE_SQL statement (see there). */
  private swap(swaps: readonly Swap[], claims: boolean, service = this.service, kind = this.options.kind) {
    const items = swaps.map(({ key, expect, entry, check }) => {
      return { key, expect, entry, sk: entry && stateKey(entry), check_owner: check === true };
    });
    return this.query<WriteRow>({
      name: 'ordercli_ledger_write',
      text: WRITE_SQL,
      values: [service, kind, this.owner.id, JSON.stringify(this.owner), claims, JSON.stringify(items)],
    });
  }

  /** One beat at a time; a failed one says nothing by itself (the next statement that matters fails too). */
  private beat(): void {
    if (this.closed || this.beating) return;
    this.beating = this.query(this.beatSql)
      .catch(ignore)
      .finally(() => {
        this.beating = undefined;
      });
  }

  private checkWritable(): void {
    if (this.options.readOnly || this.closed)
      throw new Error('ledger: write to a read-only or closed ledger');
    if (this.options.signal?.aborted) throw this.abortReason();
    if (this.failure) throw this.failure;
  }

  /** A record of this store (a field left undefined is absent: applyRecord copies only those set). */
  private record(externalId: string, event: LedgerRecord['event'], fields: Partial<LedgerRecord>) {
    return { externalId, event, at: isoNow(), ...this.options.source, ...fields } as LedgerRecord;
  }

  /** A claim's owner: its process when that can be checked from here, else its heartbeat (`beating`). */
  private liveness(owner: ClaimOwner | undefined, beating: boolean): 'alive' | 'dead' | 'stale' {
    // A `sending` of ordercli before claims names no owner: in doubt.
    if (!owner) return 'dead';
    if (owner.id === this.owner.id) return 'alive';
    const verdict = judgeProcess(owner).kind;
    return verdict !== 'unverifiable' ? verdict : beating ? 'alive' : 'stale';
  }

  async lookup(externalId: string): Promise<LedgerEntry | undefined> {
    if (!this.tablesExist || this.prefetched.get(externalId) === FREE) return undefined;
    const [row] = await this.read<{ entry: LedgerEntry }>({
      name: 'ordercli_ledger_lookup',
      text: 'SELECT entry FROM ordercli_ledger WHERE service = $1 AND kind = $2 AND external_id = $3',
      values: [this.service, this.options.kind, externalId],
    });
    if (row && !isState(row.entry)) throw this.damaged(externalId);
    return row?.entry;
  }

  /**
   * Reads whether each key has a row, and counts their states. A KeyTable is taken over when nothing
   * was prefetched yet (its values replaced): a million keys are not copied. A key without a row
   * answers lookups from here (until this store writes it); the database tells of the others.
   */
  async prefetch(keys: Iterable<string> | KeyTable): Promise<void> {
    const unread: number[] = [];
    const table = keys instanceof KeyTable && this.prefetched.count === 0 ? keys : this.prefetched;
    if (table === keys) {
      for (let index = 0; index < table.count; index++)
        if (table.valueAt(index) !== undefined) unread.push(index);
    } else for (const key of keys) if (!table.has(key)) unread.push(table.set(key, 0));
    this.prefetched = table;
    for (let start = 0; start < unread.length; start += CHUNK) {
      const chunk = unread.slice(start, start + CHUNK);
      const rows = !this.tablesExist
        ? []
        : await this.read<{ external_id: string; status: string }>({
            name: 'ordercli_ledger_prefetch',
            text: `SELECT external_id, status FROM ordercli_ledger
              WHERE service = $1 AND kind = $2 AND external_id = ANY($3::text[])`,
            values: [this.service, this.options.kind, chunk.map((index) => table.keyAt(index))],
          });
      for (const index of chunk) table.setAt(index, FREE);
      for (const { external_id, status } of rows) {
        table.set(external_id, KNOWN);
        if (status === 'created') this.counts.created++;
        else if (status !== 'not-created') this.counts.inDoubt++;
      }
    }
  }

  knows(externalId: string): boolean {
    return this.prefetched.get(externalId) === KNOWN;
  }

  prefetchedCounts(): { created: number; inDoubt: number } {
    return { ...this.counts };
  }

  /** A key this store wrote has a row now: lookups ask the database. */
  private remember(key: string): void {
    const index = this.prefetched.indexOf(key);
    if (index >= 0 && this.prefetched.valueAt(index) === FREE) this.prefetched.setAt(index, KNOWN);
  }

  async list(filter: store.LedgerFilter = {}): Promise<store.ListedEntry[]> {
    if (!this.tablesExist) return [];
    const rows = await this.read<{ external_id: string; entry: LedgerEntry; beating: boolean }>({
      text: `SELECT l.external_id, l.entry, ${BEATING} AS beating FROM ordercli_ledger l
        WHERE l.service = $1 AND l.kind = $2
          AND ($3::text[] IS NULL OR l.entry->>'input' = ANY ($3) OR l.entry->>'journal' = ANY ($3))
        ORDER BY l.external_id LIMIT $4`,
      values: [this.service, this.options.kind, filter.inputs ?? null, filter.limit ?? null],
    });
    return rows.map(({ external_id, entry, beating }) => {
      if (!isState(entry)) throw this.damaged(external_id);
      // A claim whose owner is gone is the doubt it leaves.
      const gone = entry.status === 'claimed' && this.liveness(entry.owner, beating) !== 'alive';
      return { externalId: external_id, entry: gone ? settledAsUnknown(entry) : entry };
    });
  }

  async openers(): Promise<store.LedgerOpener[]> {
    if (!this.tablesExist) return [];
    const rows = await this.read<{ identity: ClaimOwner; beating: boolean }>({
      text: `SELECT identity, now() - beat_at < interval '${STALE_MS} milliseconds' AS beating
        FROM ordercli_ledger_owners ORDER BY beat_at DESC, id`,
    });
    return rows.map(({ identity, beating }) => {
      const alive = this.liveness(identity, beating);
      return { owner: identity, alive: alive === 'stale' ? 'dead' : alive };
    });
  }

  async claim(request: store.ClaimRequest): Promise<store.ClaimResult> {
    this.checkWritable();
    return new Promise((resolve, reject) => {
      this.write({ key: request.externalId, request, rounds: 0, resolve, reject });
    });
  }

  private write(item: PendingClaim | Swap): void {
    this.queue.push(item);
    // What is asked for in this turn of the event loop goes together.
    this.writing ??= immediate().then(() => this.drain());
  }

  /** Writes rounds while anything is queued, one item a key a round (records keep their order). */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const keys = new Set<string>();
        const rest: (PendingClaim | Swap)[] = [];
        for (const item of this.queue) {
          const now = keys.size < MAX_ROUND && !keys.has(item.key);
          if (now) keys.add(item.key);
          (now ? this.round : rest).push(item);
        }
        this.queue = rest;
        // Claims that lost a race go first in the next round, decided on what they met.
        this.queue.unshift(...(await this.writeRound(this.round)));
        this.round = [];
      }
    } finally {
      this.writing = undefined;
    }
  }

  /** Writes one round: outcomes as they are, claims as they decide; returns the claims to try again. */
  private async writeRound(round: (PendingClaim | Swap)[]): Promise<PendingClaim[]> {
    const stop = this.failure ?? (this.options.signal?.aborted ? this.abortReason() : undefined);
    const claims = new Map<Swap, PendingClaim>();
    const swaps: Swap[] = [];
    for (const item of round) {
      const decision = 'request' in item ? (stop ?? (await this.decide(item))) : item;
      if (!('request' in item)) swaps.push(item);
      else if (decision instanceof Error) item.reject(decision);
      else if ('reason' in decision) item.resolve({ claimed: false, refusal: decision });
      else {
        swaps.push(decision);
        claims.set(decision, item);
      }
    }
    if (swaps.length === 0) return [];
    try {
      return this.settle(claims, await this.swap(swaps, claims.size > 0));
    } catch (error) {
      // Not made on a new connection either (or given up on Ctrl-C): kept for the next store, with
      // the claims as their `not-sent` (they may have been committed, and were not sent).
      const kept = swaps.map((swap) => {
        const claimed = claims.has(swap) ? swap.entry! : undefined;
        return claimed ? { key: swap.key, expect: stateKey(claimed), entry: claimed.previous ?? null } : swap;
      });
      if (!((isLost(error) || this.gaveUp) && (await this.keepPending(kept).then(() => true, ignore))))
        this.fail(error);
      for (const pending of claims.values())
        pending.reject(this.options.signal?.aborted ? this.abortReason() : this.fail(error));
      return [];
    }
  }

  /** Grants the claims that won; returns those that lost, with the row they met (a few rounds at most). */
  private settle(claims: Map<Swap, PendingClaim>, rows: WriteRow[]): PendingClaim[] {
    const won = new Set(rows.filter((row) => row.won).map((row) => row.external_id));
    const met = new Map(rows.filter((row) => !row.won).map((row) => [row.external_id, row]));
    const again: PendingClaim[] = [];
    for (const [{ key, entry }, pending] of claims) {
      const row = met.get(key);
      // Its own token met: committed by an attempt whose answer was lost (see query()).
      if (won.has(key) || row?.entry?.token === entry!.token) {
        const claim = { externalId: key, token: entry!.token!, previous: entry!.previous };
        this.held.set(claim.token, entry!);
        this.remember(key);
        // Interrupted meanwhile: its caller has given up, so it is not sent.
        if (this.options.signal?.aborted) this.notSent(claim, 'interrupted before it was sent');
        else pending.resolve({ claimed: true, claim });
      } else if (++pending.rounds >= MAX_CLAIM_ROUNDS) {
        const error = new Error(`the state of ${key} kept changing under ${MAX_CLAIM_ROUNDS} claims`);
        pending.reject(this.errorOf(error));
      } else {
        pending.met = row ?? null;
        again.push(pending);
      }
    }
    return again;
  }

  /**
   * What a claim writes, given the row its last round met (none before its first), or its refusal
   * (refusalOf). Over a claim whose owner's heartbeat alone says it is gone, the server checks again.
   */
  private async decide({ key, request, met }: PendingClaim): Promise<Swap | store.ClaimRefusal | CliError> {
    const entry = met?.entry ?? undefined;
    if (entry !== undefined && !isState(entry)) return this.damaged(key);
    let stale = false;
    const refusal = await refusalOf(entry, request, () => {
      const life = this.liveness(entry!.owner, met!.beating);
      stale = life === 'stale';
      return life === 'alive';
    });
    if (refusal) return refusal;
    const { bodyHash, line } = request;
    const token = randomBytes(9).toString('base64url');
    const record = this.record(key, 'claim', { token, owner: this.owner, bodyHash, line });
    const claimed = applyRecord(entry, record, { granted: true })!;
    return { key, expect: met?.state_key ?? null, entry: claimed, check: stale };
  }

  readonly created = this.outcome('created');
  readonly failed = this.outcome('failed');
  readonly unknown = this.outcome('unknown');
  readonly notSent = this.outcome('not-sent');

  /** The outcomes of claims with `event` (`details` a string: the reason), written over the claim. */
  private outcome(event: 'created' | 'failed' | 'unknown' | 'not-sent') {
    return (claim: store.Claim, details: Partial<LedgerRecord> | string): void => {
      if (this.options.readOnly || this.closed)
        return void this.fail(new Error('an outcome after the ledger was closed'));
      const { externalId: key, token } = claim;
      const claimed = this.held.get(token);
      // Not a claim this store holds (or already answered): the record would change nothing.
      if (claimed === undefined) return;
      this.held.delete(token);
      const fields = typeof details === 'string' ? { reason: details } : details;
      const entry = applyRecord(claimed, this.record(key, event, { token, ...fields })) ?? null;
      this.write({ key, expect: stateKey(claimed), entry });
    };
  }

  validated(externalId: string, validatedAt: string): void {
    if (this.options.readOnly || this.closed) return;
    const record = this.record(externalId, 'validated', { validatedAt });
    const recorded = this.lookup(externalId).then((current) => {
      const entry = current && applyRecord(current, record);
      if (current && entry && entry !== current)
        this.write({ key: externalId, expect: stateKey(current), entry });
    });
    this.lookups.add(recorded);
    recorded.catch((error: unknown) => this.fail(error)).finally(() => this.lookups.delete(recorded));
  }

  /** A person's word: a compare-and-swap over the current state, refused while a live owner claims it. */
  async resolved(key: string, resolution: Resolution, details: Parameters<store.LedgerStore['resolved']>[2]) {
    this.checkWritable();
    const record = this.record(key, 'resolved', { resolution, ...details });
    let met: WriteRow | undefined;
    try {
      for (let attempt = 0; attempt < MAX_CLAIM_ROUNDS; attempt++) {
        const current = met?.entry ?? undefined;
        if (current !== undefined && !isState(current)) throw this.damaged(key);
        if (current?.status === 'claimed' && this.liveness(current.owner, met!.beating) === 'alive')
          throw new ClaimedNowError(key, current);
        const entry = applyRecord(current, record);
        if (entry === undefined) return;
        const rows = await this.swap([{ key, expect: met?.state_key ?? null, entry }], true);
        if (rows.some((row) => row.won)) return this.remember(key);
        met = rows[0];
      }
      throw new Error(`the state of ${key} kept changing`);
    } catch (error) {
      throw error instanceof UsageError ? error : this.errorOf(error);
    }
  }

  /**
   * Records the states records give keys that have no row (a journal of an earlier release, `ledger
   * copy`): each key's records applied in order, its state inserted only where it has no row.
   */
  async adopt(records: readonly LedgerRecord[]): Promise<void> {
    this.checkWritable();
    const states = new Map<string, LedgerEntry | undefined>();
    for (const record of records)
      states.set(record.externalId, applyRecord(states.get(record.externalId), record));
    const swaps = [...states].flatMap(([key, entry]) => (entry ? [{ key, expect: null, entry }] : []));
    try {
      for (let start = 0; start < swaps.length; start += CHUNK) {
        const chunk = swaps.slice(start, start + CHUNK);
        await this.swap(chunk, true);
        for (const { key } of chunk) this.remember(key);
      }
    } catch (error) {
      throw this.errorOf(error);
    }
  }

  async sync(): Promise<void> {
    while (this.lookups.size > 0) await Promise.allSettled([...this.lookups]);
    while (this.writing) await this.writing;
    if (this.failure) throw this.failure;
  }

  /**
   * Waits for the claims and outcomes in flight, then ends the heartbeat (its row is deleted: the
   * claims left without outcome are in doubt from now on) and the connections. Rejects only when
   * writing what was pending fails: an earlier failure is for `sync()` and the claims to report.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const earlier = this.failure;
    await this.sync().catch(ignore);
    this.closed = true;
    clearInterval(this.heartbeat);
    await this.beating;
    const forget = { text: 'DELETE FROM ordercli_ledger_owners WHERE id = $1', values: [this.owner.id] };
    if (this.pool && !this.options.readOnly) await this.query(forget).catch(ignore);
    // A connection whose server does not answer would never end: destroyed after a moment.
    const ended = this.pool?.end().catch(ignore);
    await Promise.race([ended, delay(this.gaveUp ? 0 : PENDING_GRACE_MS, undefined, { ref: false })]);
    this.giveUp();
    clearTimeout(this.giveUpTimer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    if (this.failure && this.failure !== earlier) throw this.failure;
  }
}
