/** `config list|get|set|path`: profile values; secrets are never printed. */
import type { Context } from '../../cli/context.js';
import { UsageError } from '../../cli/errors.js';
import {
  configPath,
  isProfileKey,
  PROFILE_KEYS,
  type ProfileKey,
  ProfileStore,
  SECRET_KEYS,
} from '../../config/profiles.js';
import { checkBaseUrl } from '../../config/settings.js';
import { writeJson, writeList } from '../../io/output.js';

/** How a secret is shown: that it is set, never what it is. */
export function maskSecret(value: string | undefined): string {
  return value ? '******** (set)' : '';
}

function shown(key: ProfileKey, value: string | undefined): string {
  return SECRET_KEYS.has(key) ? maskSecret(value) : (value ?? '');
}

function checkKey(key: string): ProfileKey {
  if (!isProfileKey(key))
    throw new UsageError(`Unknown config key "${key}": use one of ${PROFILE_KEYS.join(', ')}.`);
  return key;
}

export async function list(ctx: Context): Promise<void> {
  const settings = await ctx.settings();
  const effective: Record<ProfileKey, string | undefined> = {
    'base-url': settings.baseUrl,
    token: settings.token,
    'auth-header': settings.authHeader,
    timeout: String(settings.timeoutMs),
    'allow-insecure-http': String(settings.allowInsecureHttp),
    'webhook-key': settings.webhookKey,
  };
  const rows = PROFILE_KEYS.map((key) => ({
    key,
    profile: shown(key, settings.profile[key]),
    effective: shown(key, effective[key]),
  }));
  if (ctx.json) {
    writeJson(ctx.io, { profile: settings.profileName, path: configPath(ctx.env), values: rows });
    return;
  }
  ctx.io.err(`Profile "${settings.profileName}" in ${configPath(ctx.env)}\n`);
  await writeList(ctx.io, rows, [
    { key: 'key', header: 'KEY', value: (r) => r.key },
    { key: 'profile', header: 'IN PROFILE', value: (r) => r.profile },
    { key: 'effective', header: 'EFFECTIVE', value: (r) => r.effective },
  ]);
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

export async function set(key: string, value: string, ctx: Context): Promise<void> {
  const profileKey = checkKey(key);
  const settings = await ctx.settings().catch((error) => {
    // Setting a value is how a new named profile is created.
    if (error instanceof UsageError && ctx.globalFlags.profile) return undefined;
    throw error;
  });
  const profileName = settings?.profileName ?? ctx.globalFlags.profile ?? 'default';
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

export async function path(ctx: Context): Promise<void> {
  ctx.io.out(`${configPath(ctx.env)}\n`);
}

function validate(key: ProfileKey, value: string): void {
  if (key === 'base-url') checkBaseUrl(value, true);
  if (key === 'timeout' && !(Number.isInteger(Number(value)) && Number(value) > 0)) {
    throw new UsageError(
      `timeout must be a whole number of milliseconds above zero, not ${JSON.stringify(value)}.`,
    );
  }
  if (key === 'allow-insecure-http' && !/^(true|false)$/.test(value)) {
    throw new UsageError('allow-insecure-http must be true or false.');
  }
  if (key === 'auth-header' && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(value)) {
    throw new UsageError(
      `auth-header must be an HTTP header name such as X-Api-Key, not ${JSON.stringify(value)}.`,
    );
  }
}
