/**
 * Opens the order ledger the settings name: `--ledger` / `ORDERCLI_LEDGER` / the profile's
 * `ledger` — a `postgres://` or `postgresql://` URL (PostgreSQL, loaded only then), a folder
 * (a local ledger kept where a CI job keeps its state), or nothing: the config folder's ledger.
 */
import { join, resolve } from 'node:path';
import { configDir } from '../config/profiles.js';
import type { LedgerStore, OpenLedgerOptions } from './store.js';

export interface LedgerPlace {
  /** The setting as given, or undefined for the config folder's ledger. */
  ledger: string | undefined;
  configFolder: string;
  cwd: string;
}

/** Where a command's ledger is, from its settings (flag > env > profile) and its config folder. */
export async function ledgerPlaceOf(environment: {
  env: NodeJS.ProcessEnv;
  cwd: string;
  settings(): Promise<{ ledger?: string | undefined }>;
}): Promise<LedgerPlace> {
  const { ledger } = await environment.settings();
  return {
    ledger: ledger === '' ? undefined : ledger,
    configFolder: configDir(environment.env),
    cwd: environment.cwd,
  };
}

export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}

export async function openLedger(place: LedgerPlace, options: OpenLedgerOptions): Promise<LedgerStore> {
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) {
    const { PostgresLedger } = await import('./postgres.js');
    return PostgresLedger.open(setting, options);
  }
  const { LocalLedger } = await import('./local.js');
  return LocalLedger.open(localLedgerRoot(place)!, options);
}

/** The folder of the local ledger a place names (undefined for a PostgreSQL ledger). */
export function localLedgerRoot(place: LedgerPlace): string | undefined {
  const setting = place.ledger;
  if (setting !== undefined && isPostgresUrl(setting)) return undefined;
  return setting === undefined ? join(place.configFolder, 'ledger') : resolve(place.cwd, setting);
}
