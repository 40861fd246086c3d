/** `config list|get|set|path`: profile values; secrets are never printed. */
import type { Context } from '../../command-support/context.js';
import { formatDuration, parseDuration } from '../../config/duration.js';
import {
  configPath,
  isProfileKey,
  PROFILE_KEYS,
  type ProfileKey,
  ProfileStore,
  SECRET_KEYS,
} from '../../config/profiles.js';
import { type SettingSource, sourceName, sourceOf } from '../../config/sources.js';
import { UsageError } from '../../core/errors.js';
import { urlPasswords } from '../../core/redact.js';
import { checkBaseUrl, withoutPassword } from '../../core/url.js';
import { writeJson } from '../../io/json-output.js';
import { type ListFlags, listOptions } from '../../io/list-flags.js';
import { writeList } from '../../io/list-output.js';
import type { Column } from '../../io/record-columns.js';

/** How a secret is shown: that it is set, never what it is. */
export function maskSecret(value: string | undefined): string {
  return value ? '******** (set)' : '';
}

function shown(key: ProfileKey, value: string | undefined): string {
  if (SECRET_KEYS.has(key)) return maskSecret(value);
  // A PostgreSQL ledger's URL may hold a password.
  return key === 'ledger' && value !== undefined ? withoutPassword(value) : (value ?? '');
}

function checkKey(key: string): ProfileKey {
  if (!isProfileKey(key))
    throw new UsageError(`Unknown config key "${key}": use one of ${PROFILE_KEYS.join(', ')}.`);
  return key;
}

/** One row of `config list`; `--json` prints these fields (`source` and `sourceName` came last). */
interface ConfigRow {
  key: ProfileKey;
  /** The profile's value as stored (secrets masked). */
  profile: string;
  /** The value in effect, as before: the timeout in milliseconds (`30000`). */
  effective: string;
  source: SettingSource | null;
  /** The flag, variable, `profile` or `default` it comes from; null when not set. */
  sourceName: string | null;
}

const CONFIG_COLUMNS: Column<ConfigRow>[] = [
  { key: 'key', header: 'KEY', value: (r) => r.key, identifier: true },
  { key: 'profile', header: 'IN PROFILE', value: (r) => shownDuration(r.key, r.profile) },
  { key: 'effective', header: 'EFFECTIVE', value: (r) => shownDuration(r.key, r.effective) },
  { key: 'source', header: 'SOURCE', value: (r) => r.sourceName ?? '' },
];

/** `config list`: each key's value in the profile, its effective value and where that comes from. */
export async function list(flags: ListFlags, ctx: Context): Promise<void> {
  const settings = await ctx.settings();
  const effective: Record<ProfileKey, string | undefined> = {
    'base-url': settings.baseUrl,
    token: settings.token,
    'auth-header': settings.authHeader,
    timeout: String(settings.timeoutMs),
    'allow-insecure-http': String(settings.allowInsecureHttp),
    'webhook-key': settings.webhookKey,
    ledger: settings.ledger,
  };
  const rows = PROFILE_KEYS.map((key): ConfigRow => {
    const source = sourceOf(settings, key);
    return {
      key,
      profile: shown(key, settings.profile[key]),
      effective: shown(key, effective[key]),
      source: source ?? null,
      sourceName: sourceName(key, source) ?? null,
    };
  });
  const options = listOptions(flags, ctx.json);
  if (ctx.json) {
    // An object, not writeList's array: its shape predates the list flags and scripts read it.
    if (flags.csv) throw new UsageError('Choose one of --json and --csv.');
    writeJson(ctx.io, { profile: settings.profileName, path: configPath(ctx.env), values: rows });
    return;
  }
  ctx.io.err(`Profile "${settings.profileName}" in ${configPath(ctx.env)}\n`);
  await writeList(ctx.io, rows, CONFIG_COLUMNS, { ...options, what: 'settings' });
}

/** A duration with its unit (`30s`), as the user writes it; other values, and one unreadable, as they are. */
function shownDuration(key: ProfileKey, value: string): string {
  if (key !== 'timeout' || value === '') return value;
  try {
    return formatDuration(parseDuration(value, { name: 'timeout', bare: 'ms', minMs: 1 }));
  } catch {
    return value;
  }
}

export async function get(key: string, ctx: Context): Promise<void> {
  const profileKey = checkKey(key);
  const settings = await ctx.settings();
  const value = settings.profile[profileKey];
  if (value === undefined) {
    ctx.io.err(`"${profileKey}" is not set in profile "${settings.profileName}".\n`);
    return;
  }
  ctx.io.out(`${shown(profileKey, value)}\n`);
}

export async function set(key: string, given: string | undefined, ctx: Context): Promise<void> {
  const profileKey = checkKey(key);
  const settings = await ctx.settings().catch((error) => {
    // Setting a value is how a new named profile is created.
    if (error instanceof UsageError && ctx.globalFlags.profile) return undefined;
    throw error;
  });
  const profileName = settings?.profileName ?? ctx.globalFlags.profile ?? 'default';
  const value = await valueToSet(profileKey, given, ctx);
  const trimmed = value.trim();
  if (trimmed !== '') validate(profileKey, trimmed);
  if (SECRET_KEYS.has(profileKey)) ctx.io.redactor.addSecret(trimmed);
  const store = await ProfileStore.open(ctx.env);
  await store.update(profileName, { [profileKey]: trimmed });
  ctx.io.err(
    trimmed === ''
      ? `Removed ${profileKey} from profile "${profileName}".\n`
      : `Set ${profileKey} = ${shown(profileKey, trimmed)} in profile "${profileName}" (${store.path}).\n`,
  );
}

/**
 * The value of `config set`: as given, from stdin (`-`), or asked for without echo (a secret left
 * out on a terminal). A secret given on the command line is accepted, with a warning: it is in
 * the shell's history and the process list by now.
 */
async function valueToSet(key: ProfileKey, given: string | undefined, ctx: Context): Promise<string> {
  const secret = SECRET_KEYS.has(key);
  if (given === '-') {
    if (ctx.io.stdinIsTTY) {
      throw new UsageError(
        secret
          ? `config set ${key} - reads stdin, which is a terminal here (it would echo the value): pipe it in, or leave the value out to be asked for it without echo.`
          : `config set ${key} - reads stdin, which is a terminal here: pipe the value in, or give it on the command line.`,
      );
    }
    const read = (await import('../../io/input.js')).readStream;
    const value = (await read(ctx.io.stdin)).trim();
    if (secret) ctx.io.redactor.addSecret(value);
    if (value === '') {
      throw new UsageError(
        `Nothing was read from stdin for ${key}: pipe the value in (to remove it, use config set ${key} "").`,
      );
    }
    if (/[\r\n]/.test(value)) {
      throw new UsageError(`The ${key} read from stdin holds several lines: give the value alone.`);
    }
    return value;
  }
  if (given !== undefined) {
    if (secret && given.trim() !== '') {
      ctx.io.err(
        `warning: a ${key} given on the command line stays in your shell history and shows in the process list; next time use ordercli config set ${key} - (reads stdin) or leave the value out to be asked for it.\n`,
      );
    }
    if (key === 'ledger' && urlPasswords(given).length > 0) {
      ctx.io.err(
        'warning: a password given on the command line stays in your shell history and shows in the process list; next time use ordercli config set ledger - (reads stdin), or leave it out of the URL and set PGPASSWORD or a ~/.pgpass file (PostgreSQL reads both).\n',
      );
    }
    return given;
  }
  if (!secret) throw new UsageError(`config set ${key} needs a value (or - to read it from stdin).`);
  if (!ctx.io.canPrompt()) {
    throw new UsageError(
      `config set ${key} needs the value: pipe it in with config set ${key} - (e.g. printenv ORDER_TOKEN | ordercli config set ${key} -), or run it on a terminal to be asked for it.`,
    );
  }
  const { createPrompter } = await import('../../io/prompter.js');
  const value = await createPrompter(ctx.io, ctx.signal).password(
    `${key === 'token' ? 'API token' : 'Webhook key'} (not shown)`,
    { validate: (text) => (text.trim() === '' ? 'Type the value, or press Ctrl-C to leave.' : true) },
  );
  return value;
}

export async function path(ctx: Context): Promise<void> {
  ctx.io.out(`${configPath(ctx.env)}\n`);
}

function validate(key: ProfileKey, value: string): void {
  if (key === 'base-url') checkBaseUrl(value, true);
  if (key === 'timeout') parseDuration(value, { name: 'timeout', bare: 'ms', minMs: 1 });
  if (key === 'allow-insecure-http' && !/^(true|false)$/.test(value)) {
    throw new UsageError('allow-insecure-http must be true or false.');
  }
  if (key === 'auth-header' && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(value)) {
    throw new UsageError(
      `auth-header must be an HTTP header name such as X-Api-Key, not ${JSON.stringify(value)}.`,
    );
  }
}
