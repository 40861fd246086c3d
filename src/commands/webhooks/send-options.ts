/** Options shared by `webhooks trigger` and `webhooks replay`: the key, the time-out, the receiver URL. */
import type { Context } from '../../cli/context.js';
import { UsageError } from '../../core/errors.js';
import { chooseWebhookKey } from '../../core/webhook-key.js';
import { DEFAULT_NOTIFICATION_TIMEOUT_MS } from '../../webhooks/notify.js';

/** The key to send: `--key`, else ORDERCLI_WEBHOOK_KEY, else the profile's webhook-key; registered as a secret. */
export async function keyToSend(flag: string | undefined, ctx: Context, command: string): Promise<string> {
  const settings = await ctx.settings();
  const choice = chooseWebhookKey({
    flag,
    env: ctx.env.ORDERCLI_WEBHOOK_KEY,
    profile: settings.profile['webhook-key'],
    profileName: settings.profileName,
  });
  if (choice === undefined) {
    throw new UsageError(
      `${command} needs the webhook key to send in X-WEBHOOK-KEY: pass --key, set ORDERCLI_WEBHOOK_KEY, or save it with ordercli webhooks subscribe --save-key.`,
    );
  }
  ctx.io.redactor.addSecret(choice.untrimmed);
  ctx.io.redactor.addSecret(choice.key);
  if (choice.untrimmed !== undefined) {
    ctx.io.err(`warning: the key from ${choice.source} has surrounding white space; sending it without.\n`);
  }
  return choice.key;
}

/** The per-notification time-out: the global --timeout (ms) when set, else the notification default. */
export async function notificationTimeout(ctx: Context): Promise<number> {
  const settings = await ctx.settings();
  return settings.sources.timeoutMs === 'default' ? DEFAULT_NOTIFICATION_TIMEOUT_MS : settings.timeoutMs;
}

/** Checks a receiver URL. */
export function receiverUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url must be a URL such as http://127.0.0.1:8787/, not ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--url must be an http:// or https:// URL, not ${url.protocol}//.`);
  }
  return url;
}
