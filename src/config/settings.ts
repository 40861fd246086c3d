/**
 * The effective settings of one run: flag > environment > profile in the config file > default.
 */
import { UsageError } from '../core/errors.js';
import { chooseWebhookKey } from '../core/webhook-key.js';
import { parseDuration } from './duration.js';
import { type ConfigFile, configPath, DEFAULT_PROFILE, type Profile } from './profiles.js';
import type { SettingSource } from './sources.js';

/** Global flags as commander parses them (all optional). */
export interface GlobalFlags {
  baseUrl?: string;
  token?: string;
  authHeader?: string;
  profile?: string;
  json?: boolean;
  color?: boolean;
  verbose?: boolean;
  timeout?: string;
  retries?: string;
  yes?: boolean;
  allowInsecureHttp?: boolean;
  ledger?: string;
}

export interface Settings {
  profileName: string;
  /** The profile's stored values (empty when it does not exist). */
  profile: Profile;
  baseUrl: string | undefined;
  token: string | undefined;
  authHeader: string | undefined;
  webhookKey: string | undefined;
  /** `--ledger`: a postgres:// URL or a folder; undefined = the config folder's ledger. */
  ledger: string | undefined;
  timeoutMs: number;
  retries: number;
  allowInsecureHttp: boolean;
  json: boolean;
  verbose: boolean;
  /** Where each value came from, for `config list` and `auth status` (none: not set, no default). */
  sources: Partial<
    Record<
      'baseUrl' | 'token' | 'authHeader' | 'timeoutMs' | 'allowInsecureHttp' | 'webhookKey' | 'ledger',
      SettingSource
    >
  >;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_RETRIES = 3;

function pick(
  flag: string | undefined,
  envValue: string | undefined,
  profileValue: string | undefined,
): [string | undefined, 'flag' | 'env' | 'profile' | undefined] {
  if (flag !== undefined && flag !== '') return [flag, 'flag'];
  if (envValue !== undefined && envValue !== '') return [envValue, 'env'];
  if (profileValue !== undefined && profileValue !== '') return [profileValue, 'profile'];
  return [undefined, undefined];
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

function wholeNumber(value: string, what: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new UsageError(`${what} must be a whole number of at least ${min}, not ${JSON.stringify(value)}.`);
  }
  return n;
}

/** Where the timeout came from, as the user wrote it. */
function timeoutName(source: 'flag' | 'env' | 'profile' | undefined): string {
  if (source === 'env') return 'ORDERCLI_TIMEOUT';
  if (source === 'profile') return 'the timeout of the profile';
  return '--timeout';
}

/**
 * Whether plain http:// is allowed for any host, and where that comes from: the first of flag,
 * environment and profile that allows it; else the first that is set (to a refusal); else the
 * default (refused).
 */
function insecureHttpSource(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  profile: Profile,
): { allowed: boolean; source: SettingSource } {
  const envValue = env.ORDERCLI_ALLOW_INSECURE_HTTP;
  const profileValue = profile['allow-insecure-http'];
  if (flags.allowInsecureHttp) return { allowed: true, source: 'flag' };
  if (truthy(envValue)) return { allowed: true, source: 'env' };
  if (truthy(profileValue)) return { allowed: true, source: 'profile' };
  if (envValue !== undefined && envValue.trim() !== '') return { allowed: false, source: 'env' };
  if (profileValue !== undefined && profileValue.trim() !== '') return { allowed: false, source: 'profile' };
  return { allowed: false, source: 'default' };
}

/** Resolves the settings of this run from flags, environment and config file. */
export function resolveSettings(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  config: ConfigFile,
  options: { allowNewProfile?: boolean } = {},
): Settings {
  const profileName = flags.profile || env.ORDERCLI_PROFILE || DEFAULT_PROFILE;
  const stored = config.profiles?.[profileName];
  // `login --profile new` creates the profile, so only there may it be missing.
  if (!stored && profileName !== DEFAULT_PROFILE && !options.allowNewProfile) {
    throw new UsageError(
      `There is no profile "${profileName}" in ${configPath(env)}: create it with ordercli login --profile ${profileName}.`,
    );
  }
  const profile = stored ?? {};
  const [baseUrl, baseUrlSource] = pick(flags.baseUrl, env.ORDERCLI_BASE_URL, profile['base-url']);
  const [token, tokenSource] = pick(flags.token, env.ORDERCLI_TOKEN, profile.token);
  const [authHeader, authHeaderSource] = pick(
    flags.authHeader,
    env.ORDERCLI_AUTH_HEADER,
    profile['auth-header'],
  );
  const [timeout, timeoutSource] = pick(flags.timeout, env.ORDERCLI_TIMEOUT, profile.timeout);
  const [ledger, ledgerSource] = pick(flags.ledger, env.ORDERCLI_LEDGER, profile.ledger);
  const [retries] = pick(flags.retries, env.ORDERCLI_RETRIES, undefined);
  const webhook = chooseWebhookKey(undefined, env, { profileName, profile });
  const insecure = insecureHttpSource(flags, env, profile);

  if (authHeader !== undefined && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(authHeader)) {
    throw new UsageError(
      `--auth-header must be an HTTP header name such as X-Api-Key, not ${JSON.stringify(authHeader)}.`,
    );
  }
  return {
    profileName,
    profile,
    baseUrl: baseUrl?.trim(),
    token: token?.trim(),
    authHeader,
    webhookKey: webhook.key,
    ledger: ledger?.trim(),
    timeoutMs:
      timeout === undefined
        ? DEFAULT_TIMEOUT_MS
        : parseDuration(timeout, { name: timeoutName(timeoutSource), bare: 'ms', minMs: 1 }),
    retries: retries === undefined ? DEFAULT_RETRIES : wholeNumber(retries, '--retries', 0),
    allowInsecureHttp: insecure.allowed,
    json: Boolean(flags.json),
    verbose: Boolean(flags.verbose) || truthy(env.ORDERCLI_DEBUG),
    sources: {
      baseUrl: baseUrlSource,
      token: tokenSource,
      authHeader: authHeaderSource,
      timeoutMs: timeoutSource ?? 'default',
      allowInsecureHttp: insecure.source,
      // chooseWebhookKey names its source as the user writes it: the variable, or `profile "x"`.
      webhookKey:
        webhook.key === undefined ? undefined : webhook.source === 'ORDERCLI_WEBHOOK_KEY' ? 'env' : 'profile',
      // No ledger given: the config folder's (`src/ledger/open.ts`).
      ledger: ledgerSource ?? 'default',
    },
  };
}
