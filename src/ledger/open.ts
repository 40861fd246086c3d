/**
 * Opens the order ledger the settings name: `--ledger` / `ORDERCLI_LEDGER` / the profile's
 * `ledger` — a `postgres://` or `postgresql://` URL (PostgreSQL, loaded only then), a folder
 * (a local ledger kept where a CI job keeps its state), or nothing: the config folder's ledger.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { configDir, knownConfigDir } from '../config/profiles.js';
import type { PostgresSettings } from './postgres.js';
import type { LedgerService, LedgerStore, OpenLedgerOptions } from './store.js';

export interface LedgerPlace {
  /** The setting as given, or undefined for the config folder's ledger. */
  ledger: string | undefined;
  /**
   * The config folder; undefined when it would be relative (an empty or relative HOME): then no
   * default ledger exists, and only a ledger given by the setting can be used.
   */
  configFolder: string | undefined;
  cwd: string;
  /** The environment: a PostgreSQL ledger reads ORDERCLI_LEDGER_SCHEMA and ORDERCLI_LEDGER_STATEMENT_TIMEOUT. */
  env?: NodeJS.ProcessEnv;
}

/** Where a command's ledger is, from its settings (flag > env > profile) and its config folder. */
export async function ledgerPlaceOf(environment: {
  env: NodeJS.ProcessEnv;
  cwd: string;
  settings(): Promise<{ ledger?: string | undefined }>;
}): Promise<LedgerPlace> {
  const { ledger } = await environment.settings();
  const given = ledger === '' ? undefined : ledger;
  return {
    ledger: given,
    // Without a ledger setting the default one is needed: its folder, or the UsageError saying why not.
    configFolder: given === undefined ? configDir(environment.env) : knownConfigDir(environment.env),
    cwd: environment.cwd,
    env: environment.env,
  };
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}

/**
 * Opens the ledger a place names for one service and kind. For writing to a ledger other than the
 * default local one, the move check runs first (upgrade.ts `checkLedgerMove`, unless
 * `allowNewLedger`): a ledger new to the service while the default one holds its keys is exit 2.
 */
export async function openLedger(place: LedgerPlace, options: OpenLedgerOptions): Promise<LedgerStore> {
  const setting = place.ledger;
  if (!options.readOnly) await moveCheck(place, options);
  if (setting !== undefined && isPostgresUrl(setting)) {
    const { PostgresLedger } = await import('./postgres.js');
    return PostgresLedger.open(setting, options, postgresSettings(place));
  }
  const { LocalLedger } = await import('./local.js');
  return LocalLedger.open(localLedgerRoot(place)!, options);
}

/** The move check (upgrade.ts) before writing to a ledger other than the default local one. */
async function moveCheck(place: LedgerPlace, options: OpenLedgerOptions): Promise<void> {
  const defaultRoot = defaultLedgerRoot(place);
  // Without a config folder (HOME empty or relative) there is no default ledger to move from.
  if (options.allowNewLedger || defaultRoot === undefined || localLedgerRoot(place) === defaultRoot) return;
  const { checkLedgerMove } = await import('./upgrade.js');
  await checkLedgerMove(place, options, (readOnly) => openLedger(place, readOnly));
}

/**
 * What a dry run checks of the ledger a real run would write, keeping nothing: the move check, then
 * a local folder writable, or PostgreSQL reached, its login, tables and a claim (rolled back).
 */
export async function probeLedger(place: LedgerPlace, options: OpenLedgerOptions): Promise<void> {
  await moveCheck(place, options);
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) {
    const { PostgresLedger } = await import('./postgres.js');
    return PostgresLedger.probe(setting, options, postgresSettings(place));
  }
  const { LocalLedger } = await import('./local.js');
  LocalLedger.probe(localLedgerRoot(place)!, options);
}

/** Creates the ledger a place names now (`ledger init`): a local folder, or PostgreSQL's schema and tables. */
export async function initLedger(place: LedgerPlace, signal: AbortSignal): Promise<void> {
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) {
    const { PostgresLedger } = await import('./postgres.js');
    const options = { baseUrl: '', kind: 'orders', source: { by: 'ledger init' }, signal } as const;
    await (await PostgresLedger.open(setting, options, postgresSettings(place))).close();
    return;
  }
  await mkdir(localLedgerRoot(place)!, { recursive: true, mode: 0o700 });
}

/** What a PostgreSQL ledger reads beside its URL; outcomes it cannot write wait in the config folder. */
function postgresSettings(place: LedgerPlace): PostgresSettings {
  const pendingFolder =
    place.configFolder === undefined ? undefined : join(place.configFolder, 'ledger-pending');
  return { env: place.env ?? {}, ...(pendingFolder === undefined ? {} : { pendingFolder }) };
}

/** The folder of the local ledger a place names (undefined for a PostgreSQL ledger). */
export function localLedgerRoot(place: LedgerPlace): string | undefined {
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) return undefined;
  if (setting !== undefined) return resolve(place.cwd, setting);
  const root = defaultLedgerRoot(place);
  // ledgerPlaceOf gives the folder whenever no ledger is set (or says why it cannot).
  if (root === undefined)
    throw new Error('localLedgerRoot: a place without a ledger setting has no config folder');
  return root;
}

/** The default local ledger, `<config folder>/ledger`; undefined when the config folder would be relative. */
export function defaultLedgerRoot(place: LedgerPlace): string | undefined {
  return place.configFolder === undefined ? undefined : join(place.configFolder, 'ledger');
}

/** The services (and kinds) a ledger holds records of: `ledger status`, `orders journal`. */
export async function ledgerServices(place: LedgerPlace): Promise<LedgerService[]> {
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) {
    const { PostgresLedger } = await import('./postgres.js');
    return PostgresLedger.services(setting, postgresSettings(place));
  }
  const { LocalLedger } = await import('./local.js');
  return LocalLedger.services(localLedgerRoot(place)!);
}

/** Removes every record of a service from a ledger (`ledger forget`); how many keys it held. */
export async function forgetService(place: LedgerPlace, baseUrl: string): Promise<number> {
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) {
    const { PostgresLedger } = await import('./postgres.js');
    return PostgresLedger.forget(setting, baseUrl, postgresSettings(place));
  }
  const { LocalLedger } = await import('./local.js');
  return LocalLedger.forget(localLedgerRoot(place)!, baseUrl);
}
