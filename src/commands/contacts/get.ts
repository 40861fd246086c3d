/** `contacts get <id>`: one CRM contact, all its fields. */
import { fetchRecord, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { writeRecord } from '../../io/list-output.js';
import { explainRefusal } from '../../refs/access.js';

export async function run(options: { id: string }, ctx: Context): Promise<void> {
  const id = options.id.trim();
  if (id === '') throw new UsageError('The contact id must not be empty.');
  const api = await ctx.api();
  const record = await fetchRecord(api, PATHS.contact, id, ctx.signal).catch((error: unknown) => {
    throw explainRefusal(error, 'crm');
  });
  await writeRecord(ctx.io, record, { json: ctx.json });
}
