/** `packagings get <id>`: one catalog packaging, all its fields. */
import { fetchRecord, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { writeRecord } from '../../io/list-output.js';
import { explainRefusal } from '../../refs/access.js';

export async function run(options: { id: string }, ctx: Context): Promise<void> {
  const id = options.id.trim();
  if (id === '') throw new UsageError('The packaging id must not be empty.');
  const api = await ctx.api();
  const record = await fetchRecord(api, PATHS.packaging, id, ctx.signal).catch((error: unknown) => {
    throw explainRefusal(error, 'catalog');
  });
  await writeRecord(ctx.io, record, { json: ctx.json });
}
