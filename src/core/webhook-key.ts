/**
 * Which webhook key a command uses: `--key`, else ORDERCLI_WEBHOOK_KEY, else the profile's
 * webhook-key, with where it came from (for messages such as "key from ORDERCLI_WEBHOOK_KEY").
 */

export interface WebhookKeySources {
  /** The command's `--key` flag. */
  flag?: string | undefined;
  /** ORDERCLI_WEBHOOK_KEY. */
  env?: string | undefined;
  /** The profile's webhook-key. */
  profile?: string | undefined;
  /** The profile's name, to say where a key from it came from. */
  profileName?: string;
}

export interface WebhookKeyChoice {
  /** The key without surrounding white space (HTTP strips it from header values, so it could never match). */
  key: string;
  /** Where it came from, as the user would name it: `--key`, `ORDERCLI_WEBHOOK_KEY`, `profile "default"`. */
  source: string;
  /** The value as given, when it had white space around it (worth a warning). */
  untrimmed?: string;
}

/** The first key given (flag > environment > profile); undefined when none is, or it is only white space. */
export function chooseWebhookKey(sources: WebhookKeySources): WebhookKeyChoice | undefined {
  const candidates: [string | undefined, string][] = [
    [sources.flag, '--key'],
    [sources.env, 'ORDERCLI_WEBHOOK_KEY'],
    [sources.profile, `profile "${sources.profileName ?? 'default'}"`],
  ];
  for (const [value, source] of candidates) {
    if (value === undefined || value === '') continue;
    const key = value.trim();
    if (key === '') return undefined;
    return key === value ? { key, source } : { key, source, untrimmed: value };
  }
  return undefined;
}
