/**
 * `webhooks subscribe --event --url`: `PUT /api/v1/webhooks`. The service's answer is printed,
 * except the subscription's key (and any other secret-named field), which reads `[redacted]`, even
 * with --json: it is identified by its fingerprint, and --save-key / --key-file put it where
 * listen, trigger or the integrator's application can use it without it passing through a
 * terminal or a shell history. --show-secrets prints the answer as received, key included, for a
 * user who has no other way to hand the key on.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { ProfileStore } from '../../config/profiles.js';
import { UsageError } from '../../core/errors.js';
import { isLoopbackHost } from '../../core/url.js';
import { chooseWebhookKey } from '../../core/webhook-key.js';
import { subscribeWebhook } from '../../webhooks/subscription.js';
import { keyFingerprint } from '../../webhooks/verify.js';
import type { SubscribeFlags } from './index.js';

export async function run(flags: SubscribeFlags, ctx: Context): Promise<void> {
  const { io } = ctx;
  const settings = await ctx.settings();
  const api = await ctx.api();
  const answer = await subscribeWebhook(
    api,
    { event: flags.event, url: flags.url },
    { redactor: io.redactor, signal: ctx.signal },
  );

  // With --show-secrets the answer is written as received: the key is registered with the
  // redactor by now, so it must bypass it.
  const shown = flags.showSecrets ? answer.body : answer.shown;
  const write = (text: string) => (flags.showSecrets ? io.outUnredacted(text) : io.out(text));
  if (ctx.json) write(`${JSON.stringify(shown, null, 2) ?? 'null'}\n`);
  else {
    io.out(`Subscribed ${flags.url} to ${flags.event}.\n`);
    write(describeAnswer(shown));
  }

  warnIfUnreachable(flags.url, api.baseUrl, ctx);

  if (answer.key === undefined) {
    io.err(
      "The service's answer holds no key. Notifications carry one in X-WEBHOOK-KEY: ask the service's administrator for it, then set ORDERCLI_WEBHOOK_KEY (or ordercli config set webhook-key).\n",
    );
    if (flags.saveKey || flags.keyFile)
      throw new UsageError('There is no key to save: the answer holds none.');
    return;
  }
  const fingerprint = keyFingerprint(answer.key);
  io.err(
    `The service returned the key of this subscription (field ${answer.keyField}, ${fingerprint}). ` +
      (flags.showSecrets
        ? "It is sent in X-WEBHOOK-KEY with every notification; it is printed above as asked (--show-secrets) and stays in your terminal's scrollback.\n"
        : 'It is sent in X-WEBHOOK-KEY with every notification, and is not printed here.\n'),
  );
  const configured = chooseWebhookKey(undefined, ctx.env, settings);
  if (configured.key !== undefined && configured.key !== answer.key && !flags.saveKey) {
    io.err(
      `note: it differs from the webhook key now configured (${configured.source}, ${keyFingerprint(configured.key)}); listen would refuse these notifications with 401 until you use the new one.\n`,
    );
  }
  if (flags.saveKey) {
    const store = await ProfileStore.open(ctx.env);
    await store.update(settings.profileName, { 'webhook-key': answer.key });
    io.err(
      `Saved it as webhook-key in profile "${settings.profileName}" (${store.path}): ordercli listen and ordercli webhooks trigger use it from there.\n`,
    );
  }
  if (flags.keyFile) {
    const path = resolve(ctx.cwd, flags.keyFile);
    await writeFile(path, answer.key, { mode: 0o600 });
    await chmod(path, 0o600);
    io.err(
      `Wrote it to ${path} (mode 0600, no trailing newline): e.g. export ORDERCLI_WEBHOOK_KEY="$(cat ${flags.keyFile})".\n`,
    );
  }
  if (!flags.saveKey && !flags.keyFile && !flags.showSecrets) {
    io.err(
      'To use it, run this command again with --save-key (stores it in your profile, where listen and trigger find it), ' +
        '--key-file <path> (writes it, mode 0600, for your application) or --show-secrets (prints it). Subscribing again to the same event and URL is harmless.\n',
    );
  }
}

/** The answer's fields, one per line; nested values as compact JSON. */
function describeAnswer(shown: unknown): string {
  if (!shown || typeof shown !== 'object' || Array.isArray(shown))
    return `${JSON.stringify(shown, null, 2)}\n`;
  const entries = Object.entries(shown as Record<string, unknown>);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries
    .map(
      ([key, value]) =>
        `  ${key.padEnd(width)}  ${typeof value === 'string' ? value : JSON.stringify(value)}\n`,
    )
    .join('');
}

/** A service elsewhere cannot reach this machine's loopback address. */
function warnIfUnreachable(url: string, baseUrl: string, ctx: Context): void {
  try {
    const target = new URL(url);
    const service = new URL(baseUrl);
    if (isLoopbackHost(target.hostname) && !isLoopbackHost(service.hostname)) {
      ctx.io.err(
        `warning: the service at ${service.host} cannot reach ${target.host}, which is this machine's loopback address: subscribe a public URL (a tunnel to ordercli listen, say).\n`,
      );
    }
  } catch {
    // The URL was validated before sending; nothing to add.
  }
}
