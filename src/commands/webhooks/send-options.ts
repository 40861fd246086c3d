/** Options shared by `webhooks trigger` and `webhooks replay`: the key, the time-out, the receiver URL. */
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { checkSendable } from '../../core/header-value.js';
import { parseHttpUrl } from '../../core/url.js';
import { chooseWebhookKey } from '../../core/webhook-key.js';
import { DEFAULT_NOTIFICATION_TIMEOUT_MS } from '../../webhooks/notify.js';

/** The key to send: `--key`, else ORDERCLI_WEBHOOK_KEY, else the profile's webhook-key; registered as a secret. */
export async function keyToSend(flag: string | undefined, ctx: Context, command: string): Promise<string> {
  const { key, source } = chooseWebhookKey(flag, ctx.env, await ctx.settings());
  if (key === undefined) {
    throw new UsageError(
      `${command} needs the webhook key to send in X-WEBHOOK-KEY: pass --key, set ORDERCLI_WEBHOOK_KEY, or save it with ordercli webhooks subscribe --save-key.`,
    );
  }
  ctx.io.redactor.addSecret(key);
  checkSendable(key, `the webhook key from ${source}`);
  return key;
}

/** The per-notification time-out: the global --timeout (ms) when set, else the notification default. */
export async function notificationTimeout(ctx: Context): Promise<number> {
  const settings = await ctx.settings();
  return settings.sources.timeoutMs === 'default' ? DEFAULT_NOTIFICATION_TIMEOUT_MS : settings.timeoutMs;
}

/** Checks a receiver URL (`--url`). */
export function receiverUrl(value: string): URL {
  return parseHttpUrl(value, '--url', 'http://127.0.0.1:8787/');
}
