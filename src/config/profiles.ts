/**
 * Named profiles in the config file. Reads are a plain JSON read (fast: no `conf` at start-up);
 * writes go through `conf`, which creates the file with mode 0600 and writes it atomically.
 *
 * File: `$ORDERCLI_CONFIG_DIR/config.json`, else `$XDG_CONFIG_HOME/ordercli/config.json`, else
 * `~/.config/ordercli/config.json` (`%APPDATA%\ordercli\config.json` on Windows). The folder is
 * never relative: an empty or relative HOME (or a relative XDG_CONFIG_HOME, ORDERCLI_CONFIG_DIR,
 * APPDATA) would put it, and the default order ledger in it, under whatever folder a command runs
 * in, so that each folder had a ledger of its own. That is a UsageError wherever the folder is
 * needed; a read that can do without it (`readConfigFile`, a ledger given by `--ledger`) uses
 * `knownConfigDir`.
 */
import { chmod, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { UsageError } from '../core/errors.js';
import { quote } from '../io/quote.js';

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

/** The config folder, or the variable that would make it relative (with its value). */
type ConfigPlace = { folder: string } | { variable: string; value: string };

function configPlace(env: NodeJS.ProcessEnv): ConfigPlace {
  const under = (variable: string, value: string, ...rest: string[]): ConfigPlace =>
    isAbsolute(value) ? { folder: join(value, ...rest) } : { variable, value };
  if (env.ORDERCLI_CONFIG_DIR) return under('ORDERCLI_CONFIG_DIR', env.ORDERCLI_CONFIG_DIR);
  if (process.platform === 'win32' && env.APPDATA) return under('APPDATA', env.APPDATA, 'ordercli');
  if (env.XDG_CONFIG_HOME) return under('XDG_CONFIG_HOME', env.XDG_CONFIG_HOME, 'ordercli');
  // HOME="" is no home (os.homedir() would answer "" too); only an unset HOME asks the system.
  return under('HOME', env.HOME ?? homedir(), '.config', 'ordercli');
}

/** The config folder, or undefined when it would be relative (see the top of this file). */
export function knownConfigDir(env: NodeJS.ProcessEnv): string | undefined {
  const place = configPlace(env);
  return 'folder' in place ? place.folder : undefined;
}

/** The config folder (absolute); a UsageError (exit 2) when it would be relative. */
export function configDir(env: NodeJS.ProcessEnv): string {
  const place = configPlace(env);
  if ('folder' in place) return place.folder;
  const value = place.value === '' ? '"" (empty)' : `${quote(place.value)}, a relative folder`;
  const fix =
    place.variable === 'HOME'
      ? 'set HOME to an absolute folder or ORDERCLI_CONFIG_DIR to an absolute folder'
      : `set ${place.variable} to an absolute folder (or unset it)`;
  throw new UsageError(
    `${place.variable} is ${value}, so the config folder and the order ledger in it would depend on the working folder: ${fix}, or give the ledger with --ledger <absolute dir>.`,
  );
}

export function configPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), 'config.json');
}

/** The config file, or undefined when its folder would be relative (nothing to read or protect). */
export function knownConfigPath(env: NodeJS.ProcessEnv): string | undefined {
  const folder = knownConfigDir(env);
  return folder === undefined ? undefined : join(folder, 'config.json');
}

export function isProfileKey(key: string): key is ProfileKey {
  return (PROFILE_KEYS as readonly string[]).includes(key);
}

/**
 * Reads the config file; a missing file is an empty config, and so is a config folder that would
 * be relative (no file is read from the working folder; what needs the folder says why).
 */
export async function readConfigFile(env: NodeJS.ProcessEnv): Promise<ConfigFile> {
  const path = knownConfigPath(env);
  if (path === undefined) return {};
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
