/**
 * Named profiles in the config file. Reads are a plain JSON read (fast: no `conf` at start-up);
 * writes go through `conf`, which creates the file with mode 0600 and writes it atomically.
 *
 * File: `$ORDERCLI_CONFIG_DIR/config.json`, else `$XDG_CONFIG_HOME/ordercli/config.json`, else
 * `~/.config/ordercli/config.json` (`%APPDATA%\ordercli\config.json` on Windows).
 */
import { chmod, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../core/errors.js';

/** The values a profile may hold, by their config-key names (the flags' names). */
export const PROFILE_KEYS = [
  'base-url',
  'token',
  'auth-header',
  'timeout',
  'allow-insecure-http',
  'webhook-key',
  'ledger',
] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];
/** Keys whose values are secrets: never printed. */
export const SECRET_KEYS: ReadonlySet<ProfileKey> = new Set<ProfileKey>(['token', 'webhook-key']);

export type Profile = Partial<Record<ProfileKey, string>>;

export interface ConfigFile {
  profiles?: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.ORDERCLI_CONFIG_DIR) return env.ORDERCLI_CONFIG_DIR;
  if (process.platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'ordercli');
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'ordercli');
}

export function configPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json');
}

export function isProfileKey(key: string): key is ProfileKey {
  return (PROFILE_KEYS as readonly string[]).includes(key);
}

/** Reads the config file; a missing file is an empty config. */
export async function readConfigFile(env: NodeJS.ProcessEnv): Promise<ConfigFile> {
  const path = configPath(env);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`Cannot read the config file ${path}: ${(error as Error).message}.`);
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' ? (parsed as ConfigFile) : {};
  } catch {
    throw new UsageError(
      `The config file ${path} is not valid JSON: fix it or delete it and run ordercli login.`,
    );
  }
}

/** Writes profile values through conf (atomic write, mode 0600). */
export class ProfileStore {
  private constructor(
    readonly path: string,
    private readonly store: {
      get(key: string): unknown;
      set(key: string, value: unknown): void;
      delete(key: string): void;
    },
  ) {}

  static async open(env: NodeJS.ProcessEnv): Promise<ProfileStore> {
    const Conf = await loadConf();
    const conf = new Conf<ConfigFile>({
      projectName: 'ordercli',
      cwd: configDir(env),
      configName: 'config',
      configFileMode: 0o600,
      // Profile names and keys contain dashes and dots only as data, never as paths.
      accessPropertiesByDotNotation: false,
    });
    return new ProfileStore(conf.path, conf as unknown as ProfileStore['store']);
  }

  profiles(): Record<string, Profile> {
    return (this.store.get('profiles') as Record<string, Profile> | undefined) ?? {};
  }

  profile(name: string): Profile | undefined {
    return this.profiles()[name];
  }

  /** Sets values of one profile (creating it) and makes sure the file stays private. */
  async update(name: string, values: Profile): Promise<void> {
    const profiles = this.profiles();
    const next: Profile = { ...profiles[name] };
    for (const [key, value] of Object.entries(values) as [ProfileKey, string | undefined][]) {
      if (value === undefined || value === '') delete next[key];
      else next[key] = value;
    }
    this.store.set('profiles', { ...profiles, [name]: next });
    // conf applies the mode when it creates the file; an older file may have been looser.
    await chmod(this.path, 0o600);
  }

  /** Sets a value a profile keeps beside its settings (not a profile key, never a secret). */
  async setKept(name: string, field: string, value: unknown): Promise<void> {
    const profiles = this.profiles();
    this.store.set('profiles', { ...profiles, [name]: { ...profiles[name], [field]: value } });
    await chmod(this.path, 0o600);
  }
}

/** The signals the CLI stops cleanly on (src/cli/main.ts): nothing else may act on them. */
const HANDLED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/**
 * Loads conf. Its atomic writes (atomically, through when-exit) hook SIGINT, SIGTERM, SIGHUP and
 * SIGQUIT when first loaded and send the signal again to the process once caught: a Ctrl-C after
 * any config write would then count as a second one and exit at once, before `listen` stops its
 * tunnel or an import closes its journal. The CLI handles those signals itself, so the hooks added
 * by the import are taken off again (its other signals, and its cleanup at exit, stay).
 */
async function loadConf(): Promise<typeof import('conf').default> {
  const before = new Map(HANDLED_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: Conf } = await import('conf');
  for (const signal of HANDLED_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)!.has(listener)) process.off(signal, listener);
    }
  }
  return Conf;
}
