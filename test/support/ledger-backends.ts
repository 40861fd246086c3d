/**
 * The stores of the order ledger, as the contract suite (test/ledger/store.contract.test.ts) runs
 * them: one entry a backend in LEDGER_BACKENDS. A new backend is its store module (src/ledger/)
 * plus one entry here: how to tell whether it can run, how to start a throwaway ledger, open a
 * store of it, and damage a key's stored state the way that backend can be damaged.
 *
 * `spawnClaimer` runs another process on the same ledger (test/support/ledger-child.ts), opened
 * by its `--ledger` value as a command opens it, optionally in a PID namespace of its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import pg from 'pg';
import { LocalLedger } from '../../src/ledger/local.js';
import { PostgresLedger } from '../../src/ledger/postgres.js';
import type { ClaimOwner, RecordSource } from '../../src/ledger/record.js';
import type { LedgerStore, OpenLedgerOptions } from '../../src/ledger/store.js';
import { ROOT, tempDir } from './cli.js';
import { requirePostgres, startPostgres } from './postgres.js';

/** A throwaway ledger of one backend, started for a test file. */
export interface RunningLedger {
  /** The `--ledger` value naming it (a folder, a PostgreSQL URL): what another process opens. */
  ledger: string;
  open(options: OpenLedgerOptions): Promise<LedgerStore>;
  /**
   * Makes the stored state of `externalId` (which `store`, of this ledger, has recorded)
   * unreadable, the way this backend can be damaged: a line of NUL bytes in a shard file, a row
   * whose entry is not a state.
   */
  damage(store: LedgerStore, externalId: string): Promise<void>;
  stop(): Promise<void>;
}

export interface LedgerBackend {
  name: string;
  /**
   * In a describe: whether its tests can run here. Else it has printed a SKIPPED line or, in CI
   * for a backend CI must have, added a failing test (test/support/requirements.ts).
   */
  available(what: string): boolean;
  start(): Promise<RunningLedger>;
}

/** The local store: shard files in a temporary folder. */
export const localBackend: LedgerBackend = {
  name: 'local',
  available: () => true,
  async start() {
    const root = tempDir('ordercli-ledger-contract-');
    return {
      ledger: root,
      open: (options) => LocalLedger.open(root, options),
      damage: async (store, externalId) => {
        // The shard holding the key's records (the layout is the local store's own).
        const needle = `{"externalId":${JSON.stringify(externalId)},`;
        for (const name of (await readdir(store.location)).filter((file) => file.endsWith('.ndjson'))) {
          const path = join(store.location, name);
          if (!(await readFile(path, 'utf8')).includes(needle)) continue;
          await appendFile(path, `${'\0'.repeat(64)}\n`);
          return;
        }
        throw new Error(`no shard of ${store.location} holds ${externalId}`);
      },
      stop: () => rm(root, { recursive: true, force: true }),
    };
  },
};

/** The PostgreSQL store: a throwaway cluster (test/support/postgres.ts). */
export const postgresBackend: LedgerBackend = {
  name: 'postgres',
  available: (what) => requirePostgres(what),
  async start() {
    const server = await startPostgres();
    if (!server) throw new Error('startPostgres: no PostgreSQL server binaries');
    const sql = new pg.Client({ connectionString: server.url });
    await sql.connect();
    return {
      ledger: server.url,
      open: (options) => PostgresLedger.open(server.url, options),
      damage: async (store, externalId) => {
        const { rowCount } = await sql.query(
          `UPDATE ordercli_ledger SET entry = '"not a state"'::jsonb
           WHERE service = $1 AND kind = 'orders' AND external_id = $2`,
          [store.sameServiceAs ?? store.baseUrl, externalId],
        );
        if (rowCount !== 1) throw new Error(`no row of ${externalId} in ${store.baseUrl}`);
      },
      stop: async () => {
        await sql.end();
        await server.stop();
      },
    };
  },
};

export const LEDGER_BACKENDS: readonly LedgerBackend[] = [localBackend, postgresBackend];

/** What a claimer process did with one `claim` command. */
export interface ChildClaims {
  won: string[];
  refused: Record<string, number>;
  /** Date.now() when it began claiming, and when its first claim was granted. */
  startedAt: number;
  firstWonAt?: number;
}

/** Another process with the ledger open (test/support/ledger-child.ts). */
export interface Claimer {
  owner: ClaimOwner;
  /** The ledger's process, as this process sees it (inside a namespace: not its own PID). */
  pid: number;
  claim(
    keys: readonly string[],
    options?: { concurrency?: number; outcome?: 'created' | 'none'; line?: number; startAt?: number },
  ): Promise<ChildClaims>;
  /** Closes its store (its heartbeat ends); the process stays. */
  close(): Promise<void>;
  /** Sends a signal to the ledger's process (SIGSTOP: it stops beating). */
  signal(signal: NodeJS.Signals): void;
  /** Kills it with SIGKILL and waits for its end. */
  kill(): Promise<void>;
}

let bundled: Promise<string> | undefined;

/** The claimer bundled once (this source's stores) into a script that node runs without TypeScript. */
function claimerScript(): Promise<string> {
  bundled ??= (async () => {
    const script = join(tempDir('ordercli-ledger-child-'), 'ledger-child.mjs');
    await build({
      entryPoints: [join(ROOT, 'test/support/ledger-child.ts')],
      outfile: script,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external: ['pg-native'],
      // pg is CommonJS: its require() of Node's modules needs a real require in an ES module.
      banner: {
        js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      },
      logLevel: 'silent',
    });
    return script;
  })();
  return bundled;
}

/** The PIDs (in this namespace) of the children of `pid`. */
async function childrenOf(pid: number): Promise<number[]> {
  const text = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

const running = new Set<ChildProcess>();

/** Kills every claimer still running (afterEach). */
export async function killClaimers(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((done) => {
          child.once('close', () => done());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/**
 * Starts a process with the ledger `ledger` open for `baseUrl`; resolves once it is open. With
 * `namespace`, it runs in a PID namespace of its own (`unshare -p -f --mount-proc`): its PID means
 * nothing here, so its liveness is its heartbeat's.
 */
export async function spawnClaimer(
  ledger: string,
  baseUrl: string,
  options: { source?: RecordSource; namespace?: boolean } = {},
): Promise<Claimer> {
  const script = await claimerScript();
  const args = [script, ledger, baseUrl, JSON.stringify(options.source ?? { by: 'orders import' })];
  const child = options.namespace
    ? spawn('unshare', ['-p', '-f', '--mount-proc', '--kill-child=SIGKILL', process.execPath, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<void>((done) =>
    child.once('close', () => {
      running.delete(child);
      done();
    }),
  );
  // Each answer, in order; a process that ends fails whoever waits.
  const answers: Record<string, unknown>[] = [];
  const waiting: { resolve(answer: Record<string, unknown>): void; reject(error: Error): void }[] = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const answer = JSON.parse(buffered.slice(0, end)) as Record<string, unknown>;
      buffered = buffered.slice(end + 1);
      const waiter = waiting.shift();
      if (waiter) waiter.resolve(answer);
      else answers.push(answer);
    }
  });
  void closed.then(() => {
    for (const waiter of waiting.splice(0)) waiter.reject(new Error(`the claimer ended: ${stderr}`));
  });
  const next = (): Promise<Record<string, unknown>> => {
    const answer = answers.shift();
    if (answer) return Promise.resolve(answer);
    if (child.exitCode !== null || child.signalCode !== null)
      return Promise.reject(new Error(`the claimer ended: ${stderr}`));
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  const ask = (command: unknown) => {
    child.stdin!.write(`${JSON.stringify(command)}\n`);
    return next();
  };
  const { open: owner } = (await next()) as { open: ClaimOwner };
  // Inside a namespace, the ledger's process is unshare's child.
  const pid = options.namespace ? (await childrenOf(child.pid!))[0]! : child.pid!;
  return {
    owner,
    pid,
    claim: async (keys, claimOptions = {}) =>
      ((await ask({ claim: keys, ...claimOptions })) as { claimed: ChildClaims }).claimed,
    close: async () => {
      await ask({ close: true });
    },
    signal: (signal) => {
      process.kill(pid, signal);
    },
    kill: async () => {
      // The ledger's process first: unshare's end would kill it too, but later.
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
      await closed;
    },
  };
}

/** Runs `work` over `items`, `concurrency` at a time (an import's workers). */
export async function pooled<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}
