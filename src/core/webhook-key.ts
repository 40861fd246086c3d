/**
 * Which webhook key a command uses (`listen` to check X-WEBHOOK-KEY, `webhooks trigger` and
 * `replay` to send it): `--key`, else ORDERCLI_WEBHOOK_KEY, else the profile's `webhook-key`.
 */

export interface WebhookKeyChoice {
  /** The key without surrounding white space; undefined when none is set (or it is blank). */
  key: string | undefined;
  /** Where it came from, as the user names it: `--key`, `ORDERCLI_WEBHOOK_KEY`, `profile "default"`, `none`. */
  source: string;
  /** The value had white space around it, which was dropped (HTTP strips it from header values). */
  trimmed: boolean;
  /** The profile it was read from, when it came from one. */
  profile?: string;
}

/** The profile part of the settings: its name and stored values. */
export interface ProfileWithKey {
  profileName: string;
  profile: { 'webhook-key'?: string };
}

/** The `source` of a key read from a profile: `profile "staging"`. */
function profileSource(profileName: string): string {
  return `profile ${JSON.stringify(profileName)}`;
}

/** The key of this run, by precedence: the flag, the environment, the profile. */
export function chooseWebhookKey(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  { profileName, profile }: ProfileWithKey,
): WebhookKeyChoice {
  const stored = profile['webhook-key'];
  const [raw, source, fromProfile] =
    flag !== undefined && flag !== ''
      ? [flag, '--key', false]
      : env.ORDERCLI_WEBHOOK_KEY
        ? [env.ORDERCLI_WEBHOOK_KEY, 'ORDERCLI_WEBHOOK_KEY', false]
        : stored
          ? [stored, profileSource(profileName), true]
          : [undefined, 'none', false];
  const key = raw?.trim();
  if (key === undefined || key === '') return { key: undefined, source: 'none', trimmed: false };
  return { key, source, trimmed: key !== raw, ...(fromProfile ? { profile: profileName } : {}) };
}
