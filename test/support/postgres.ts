/**
 * A throwaway PostgreSQL server for the tests of the PostgreSQL ledger: one cluster a test file,
 * in a temporary folder, listening on 127.0.0.1 only (and a socket inside that folder), with
 * password authentication for a role made for the test, so that a test can check that the
 * password never shows.
 *
 * `findPostgresBinaries()` uses `ORDERCLI_POSTGRES_BINDIR` when it is set (and only it), else
 * looks at `pg_config --bindir`, `/usr/lib/postgresql/<version>/bin` (newest first), then `initdb`
 * on PATH. A test file asks `requirePostgres(what)` first (test/support/requirements.ts): without
 * server binaries its tests do not run and it prints a SKIPPED line (`npm test` repeats it in its
 * summary), or, with `CI` set, it fails, saying how to install them. `startPostgres()` resolves to
 * undefined without them.
 *
 * As root (initdb refuses to run as root), the cluster belongs to the `postgres` user that
 * Debian's package creates, and its commands run through `runuser` (or `su`).
 */
import { execFileSync, type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  chownSync,
  constants,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { freeLoopbackPort as freePort } from '../../src/io/free-port.js';
import { requireTool } from './requirements.js';
import { waitFor } from './wait.js';

/** How to get the server binaries, in the words of a SKIPPED line or a failure. */
export const HOW_TO_GET_POSTGRES =
  'apt-get install -y postgresql, or set ORDERCLI_POSTGRES_BINDIR to the folder of its initdb';

export interface RunningPostgres {
  /** `postgres://<role>:<password>@127.0.0.1:<port>/ledger`: the test role owns the database. */
  url: string;
  /** The test role's password, to check that no message shows it. */
  password: string;
  /** The cluster's superuser, on the same database: for tests that create roles and schemas. */
  adminUrl: string;
  stop(): Promise<void>;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function hasServer(bindir: string | undefined): bindir is string {
  return (
    bindir !== undefined &&
    bindir !== '' &&
    ['initdb', 'pg_ctl', 'postgres', 'pg_isready'].every((name) => isExecutable(join(bindir, name)))
  );
}

let found: string | null | undefined;

/** The folder of the server binaries (initdb, pg_ctl, postgres, pg_isready), or undefined. */
export function findPostgresBinaries(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (found !== undefined) return found ?? undefined;
  // A folder given on purpose is used or reported, never silently replaced by another one.
  const given = env.ORDERCLI_POSTGRES_BINDIR;
  if (given !== undefined && given !== '') {
    found = hasServer(given) ? given : null;
    return found ?? undefined;
  }
  const candidates: (string | undefined)[] = [];
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: 'pipe' }).trim());
  } catch {
    // No pg_config (the client package alone has none either): the usual places below.
  }
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  } catch {
    // Not Debian's layout.
  }
  for (const folder of (env.PATH ?? '').split(delimiter)) {
    if (folder !== '' && isExecutable(join(folder, 'initdb'))) {
      // A link to initdb on PATH (as some images have): the real folder holds the rest.
      try {
        candidates.push(dirname(realpathSync(join(folder, 'initdb'))));
      } catch {
        candidates.push(folder);
      }
    }
  }
  found = candidates.find(hasServer) ?? null;
  return found ?? undefined;
}

/** Why there are no server binaries (see findPostgresBinaries), or undefined when there are. */
export function whyNoPostgres(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (findPostgresBinaries(env) !== undefined) return undefined;
  const given = env.ORDERCLI_POSTGRES_BINDIR;
  if (given !== undefined && given !== '')
    return `ORDERCLI_POSTGRES_BINDIR=${given} does not hold initdb, pg_ctl, postgres and pg_isready`;
  return 'no PostgreSQL server binaries (initdb, pg_ctl, postgres, pg_isready: not in pg_config --bindir, /usr/lib/postgresql/<version>/bin or on PATH)';
}

/**
 * At a test file's top level or in a describe: true when `what` (the tests that start a server)
 * can run; else a SKIPPED line, or with `CI` set a failing test (test/support/requirements.ts).
 */
export function requirePostgres(what: string): boolean {
  return requireTool('PostgreSQL', {
    what,
    missing: whyNoPostgres(),
    how: HOW_TO_GET_POSTGRES,
    ciRequired: true,
  });
}

/** Runs a server binary, as `owner` (`postgres` when this is root, see startPostgres). */
function spawnAs(owner: string | undefined, command: string, args: string[]): SpawnSyncReturns<string> {
  const [file, argv] =
    owner === undefined
      ? [command, args]
      : isExecutable('/usr/sbin/runuser') || isExecutable('/sbin/runuser')
        ? ['runuser', ['-u', owner, '--', command, ...args]]
        : ['su', [owner, '-s', '/bin/sh', '-c', [command, ...args].map(shellQuote).join(' ')]];
  return spawnSync(file, argv, { encoding: 'utf8', stdio: 'pipe', timeout: 60_000 });
}

/** Like spawnAs; throws with the command's output when it fails (unless `allowFailure`). */
function runAs(owner: string | undefined, command: string, args: string[], allowFailure = false): void {
  const result = spawnAs(owner, command, args);
  if ((result.status !== 0 || result.error) && !allowFailure) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`}): ${result.stderr}${result.stdout}`,
    );
  }
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function userIds(name: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

function serverLog(folder: string): string {
  try {
    return readFileSync(join(folder, 'server.log'), 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    return '(no server.log)';
  }
}

/**
 * Starts the cluster in `folder` on `port` and waits until it accepts connections; false when it
 * stopped instead because the port was taken meanwhile. Throws when it fails otherwise.
 */
async function startServer(
  owner: string | undefined,
  bindir: string,
  folder: string,
  port: number,
  durable: boolean,
): Promise<boolean> {
  const data = join(folder, 'data');
  const settings = [
    `-k ${folder}`,
    '-h 127.0.0.1',
    `-p ${port}`,
    '-c max_connections=40',
    '-c shared_buffers=16MB',
    // Fast and forgetful unless asked (a benchmark of commits wants them on disk).
    ...(durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ].join(' ');
  const log = join(folder, 'server.log');
  runAs(owner, join(bindir, 'pg_ctl'), ['start', '-D', data, '-W', '-s', '-l', log, '-o', settings]);
  let poll = 0;
  const outcome = await waitFor(
    () => {
      poll++;
      const ready = spawnSync(join(bindir, 'pg_isready'), [
        '-q',
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-t',
        '1',
      ]);
      if (ready.status === 0) return 'ready';
      // Every half second: has the server stopped (pg_ctl status: 3)?
      if (poll % 10 === 0 && spawnAs(owner, join(bindir, 'pg_ctl'), ['status', '-D', data]).status === 3) {
        if (/already in use|could not bind|could not create listen socket/i.test(serverLog(folder)))
          return 'port taken';
        throw new Error(`startPostgres: the server stopped: ${serverLog(folder)}`);
      }
      return undefined;
    },
    30_000,
    `the PostgreSQL server on port ${port}`,
    50,
  ).catch((error: Error) => {
    if (error.message.startsWith('startPostgres:')) throw error;
    throw new Error(`startPostgres: the server on port ${port} never got ready: ${serverLog(folder)}`);
  });
  return outcome === 'ready';
}

const running = new Set<() => void>();
process.once('exit', () => {
  for (const stop of running) stop();
});

/**
 * Creates and starts a cluster (a second or two), with a role and a database for the test;
 * resolves once it accepts connections. Undefined when there are no server binaries. Commits are
 * not flushed to disk (fsync off) unless `durable`.
 */
export async function startPostgres(
  options: { durable?: boolean } = {},
): Promise<RunningPostgres | undefined> {
  const bindir = findPostgresBinaries();
  if (bindir === undefined) return undefined;
  const bin = (name: string) => join(bindir, name);
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? 'postgres' : undefined;
  const folder = mkdtempSync(join(tmpdir(), 'ordercli-pg-'));
  const data = join(folder, 'data');
  const superPassword = randomBytes(12).toString('hex');
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const passwordFile = join(folder, 'superuser-password');
  writeFileSync(passwordFile, `${superPassword}\n`, { mode: 0o600 });
  if (owner !== undefined) {
    const ids = userIds(owner);
    if (ids === undefined) {
      rmSync(folder, { recursive: true, force: true });
      throw new Error(
        `startPostgres: running as root needs the ${owner} user (apt-get install postgresql creates it)`,
      );
    }
    chownSync(folder, ids.uid, ids.gid);
    chownSync(passwordFile, ids.uid, ids.gid);
  }
  const superuser = owner ?? userInfo().username;
  let started = false;
  const stopNow = () => {
    if (started) runAs(owner, bin('pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-s'], true);
    started = false;
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    runAs(owner, bin('initdb'), [
      '-D',
      data,
      '-U',
      superuser,
      `--pwfile=${passwordFile}`,
      '--auth-local=scram-sha-256',
      '--auth-host=scram-sha-256',
      '--no-sync',
      '--no-instructions',
      '-E',
      'UTF8',
      '--locale=C',
    ]);
    // Another process may take the free port before the server binds it: then another port.
    started = true;
    running.add(stopNow);
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      if (await startServer(owner, bindir, folder, port, Boolean(options.durable))) break;
      if (attempt === 3) throw new Error(`startPostgres: the server did not start: ${serverLog(folder)}`);
    }
    // The test's own role and database: password login over TCP, like a fleet's ledger.
    const { Client } = await import('pg');
    const admin = new Client({
      host: '127.0.0.1',
      port,
      user: superuser,
      password: superPassword,
      database: 'postgres',
    });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ci LOGIN PASSWORD '${password}'`);
      await admin.query('CREATE DATABASE ledger OWNER ci');
    } finally {
      await admin.end();
    }
    return {
      url: `postgres://ci:${password}@127.0.0.1:${port}/ledger`,
      password,
      adminUrl: `postgres://${encodeURIComponent(superuser)}:${superPassword}@127.0.0.1:${port}/ledger`,
      stop: async () => {
        running.delete(stopNow);
        stopNow();
      },
    };
  } catch (error) {
    running.delete(stopNow);
    stopNow();
    throw error;
  }
}
