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

/** The profile a key's `source` names (`profile "staging"` → `staging`); undefined for a flag or variable. */
export function profileOfKeySource(source: string | undefined): string | undefined {
  const quoted = /^profile (".*")$/.exec(source ?? '')?.[1];
  return quoted === undefined ? undefined : (JSON.parse(quoted) as string);
}

/** The key of this run, by precedence: the flag, the environment, the profile. */
export function chooseWebhookKey(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  { profileName, profile }: ProfileWithKey,
): WebhookKeyChoice {
  let raw: string | undefined;
  let source = 'none';
  if (flag !== undefined && flag !== '') [raw, source] = [flag, '--key'];
  else if (env.ORDERCLI_WEBHOOK_KEY) [raw, source] = [env.ORDERCLI_WEBHOOK_KEY, 'ORDERCLI_WEBHOOK_KEY'];
  else if (profile['webhook-key']) [raw, source] = [profile['webhook-key'], profileSource(profileName)];
  if (raw === undefined) return { key: undefined, source, trimmed: false };
  const key = raw.trim();
  if (key === '') return { key: undefined, source: 'none', trimmed: false };
  return { key, source, trimmed: key !== raw };
}
