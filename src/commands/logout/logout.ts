/**
 * `logout`: removes the token and the webhook key from a profile, after a confirmation on a
 * terminal. It destroys credentials that may exist nowhere else, so, unlike other prompts, a
 * missing terminal does not imply `--yes`: a script says `--yes` (gh's `repo delete` does the
 * same). The rest of the profile stays; the file keeps mode 0600 (`ProfileStore.update`).
 */
import type { Context } from '../../command-support/context.js';
import { configPath, type ProfileKey, ProfileStore } from '../../config/profiles.js';
import { CancelledError, UsageError } from '../../core/errors.js';
import { writeJson } from '../../io/json-output.js';

/** The profile keys logout removes, with how messages name them. */
const REMOVED: readonly { key: ProfileKey; name: string; env: string }[] = [
  { key: 'token', name: 'the token', env: 'ORDERCLI_TOKEN' },
  { key: 'webhook-key', name: 'the webhook key', env: 'ORDERCLI_WEBHOOK_KEY' },
];

export async function run(ctx: Context): Promise<void> {
  const settings = await ctx.settings();
  const profile = settings.profileName;
  const path = configPath(ctx.env);
  const held = REMOVED.filter(({ key }) => settings.profile[key]);
  if (held.length === 0) {
    ctx.io.err(`Profile "${profile}" holds no token and no webhook key: nothing to remove.\n`);
  } else {
    const what = held.map((secret) => secret.name).join(' and ');
    await confirm(ctx, `Remove ${what} from profile "${profile}"?`, what);
    const store = await ProfileStore.open(ctx.env);
    await store.update(profile, Object.fromEntries(held.map(({ key }) => [key, ''])));
    ctx.io.err(`Removed ${what} from profile "${profile}" (${store.path}).\n`);
  }
  if (ctx.json) writeJson(ctx.io, { profile, path, removed: held.map(({ key }) => key) });
  for (const { env, name } of REMOVED) {
    if (ctx.env[env]?.trim()) {
      ctx.io.err(
        `note: ${env} is set in the environment: commands still use ${name} it holds; unset it to log out there too.\n`,
      );
    }
  }
}

/**
 * Goes on with `--yes`; asks on a terminal (No first; Escape is No, and No is exit 130 with
 * nothing removed); without a terminal, or with prompts off (CI), exit 2 asking for `--yes`.
 */
async function confirm(ctx: Context, question: string, what: string): Promise<void> {
  if (ctx.globalFlags.yes) return;
  if (!ctx.io.canPrompt()) {
    const why =
      ctx.io.stdinIsTTY && ctx.io.stdoutIsTTY
        ? 'prompts are turned off here (CI is set)'
        : 'there is no terminal to ask on';
    throw new UsageError(
      `logout asks before it removes ${what}, and ${why}: pass --yes to remove them (ordercli logout --yes); nothing was removed.`,
    );
  }
  const { createPrompter, PromptEscape } = await import('../../io/prompter.js');
  const remove = await createPrompter(ctx.io, ctx.signal)
    .select<boolean>(question, [
      { value: false, name: 'No, keep them' },
      { value: true, name: `Yes, remove ${what}` },
    ])
    .catch((error: unknown) => {
      if (error instanceof PromptEscape) return false;
      throw error;
    });
  if (!remove) throw new CancelledError('Nothing was removed.');
}
