/**
 * Where each effective setting comes from (a flag, an environment variable, the profile, the
 * default), named as the user would write it: `--timeout`, `ORDERCLI_TIMEOUT`, `profile`. Read by
 * `config list` and `auth status`, so that both say it the same way.
 */
import type { ProfileKey } from './profiles.js';
import type { Settings } from './settings.js';

export type SettingSource = 'flag' | 'env' | 'profile' | 'default';

/** The flag and the environment variable of each profile key (the webhook key has no global flag). */
export const SETTING_NAMES: Readonly<Record<ProfileKey, { flag?: string; env: string }>> = {
  'base-url': { flag: '--base-url', env: 'ORDERCLI_BASE_URL' },
  token: { flag: '--token', env: 'ORDERCLI_TOKEN' },
  'auth-header': { flag: '--auth-header', env: 'ORDERCLI_AUTH_HEADER' },
  timeout: { flag: '--timeout', env: 'ORDERCLI_TIMEOUT' },
  'allow-insecure-http': { flag: '--allow-insecure-http', env: 'ORDERCLI_ALLOW_INSECURE_HTTP' },
  'webhook-key': { env: 'ORDERCLI_WEBHOOK_KEY' },
  ledger: { flag: '--ledger', env: 'ORDERCLI_LEDGER' },
};

/** The field of `Settings.sources` that holds each profile key's source. */
const SOURCE_FIELDS: Readonly<Record<ProfileKey, keyof Settings['sources']>> = {
  'base-url': 'baseUrl',
  token: 'token',
  'auth-header': 'authHeader',
  timeout: 'timeoutMs',
  'allow-insecure-http': 'allowInsecureHttp',
  'webhook-key': 'webhookKey',
  ledger: 'ledger',
};

/** Where the effective value of `key` comes from; undefined when it has none (nor a default). */
export function sourceOf(settings: Settings, key: ProfileKey): SettingSource | undefined {
  return settings.sources[SOURCE_FIELDS[key]];
}

/**
 * The source as the user names it: the flag (`--timeout`), the variable (`ORDERCLI_TIMEOUT`),
 * `profile` or `default`; undefined when the setting has no value.
 */
export function sourceName(key: ProfileKey, source: SettingSource | undefined): string | undefined {
  if (source === 'flag') return SETTING_NAMES[key].flag;
  if (source === 'env') return SETTING_NAMES[key].env;
  return source;
}
