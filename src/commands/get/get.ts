/** `get <entity> <id>`: one entity of any kind, printed as JSON. */
import { pathFor } from '../../api/client.js';
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { type SecretsChoice, writeAnswerJson } from '../../io/service-answer.js';
import type { GetFlags } from './index.js';

/** `get`'s arguments and flags. */
export type GetOptions = GetFlags & { entity: string; id: string };

/** Entity kinds are path segments: lower-case words with underscores or dashes. */
const ENTITY = /^[a-z][a-z0-9_-]*$/i;

export async function run(options: GetOptions, ctx: Context): Promise<void> {
  const entity = options.entity.trim();
  if (!ENTITY.test(entity)) {
    throw new UsageError(
      `"${options.entity}" is not an entity kind: use a path segment such as orders or shipping_modes.`,
    );
  }
  if (options.id.trim() === '') throw new UsageError('The id must not be empty.');
  await fetchEntity(ctx, pathFor('/api/v1/{entity}/{id}', { entity, id: options.id.trim() }), {
    showSecrets: options.showSecrets,
  });
}

/**
 * Fetches one entity and prints it as JSON, as the service returned it but for its secret fields
 * (masked unless `showSecrets`); also `orders get`.
 */
export async function fetchEntity(ctx: Context, path: string, secrets: SecretsChoice = {}): Promise<unknown> {
  const api = await ctx.api();
  const response = await api.get(path, { signal: ctx.signal });
  writeAnswerJson(ctx.io, response.body, secrets);
  return response.body;
}
