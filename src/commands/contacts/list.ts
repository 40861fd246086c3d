/** `contacts list`: the CRM contacts. Their fields are not documented, so columns follow the records' keys. */
import { fetchList, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { type ListFlags, listOptions } from '../../io/list-flags.js';
import { writeListAnswer } from '../../io/list-output.js';
import { explainRefusal } from '../../refs/access.js';
import { CONTACT_PREFERRED_KEYS } from '../../refs/format.js';

export async function run(flags: ListFlags, ctx: Context): Promise<void> {
  const options = listOptions(flags, ctx.json);
  const api = await ctx.api();
  const answer = await fetchList(api, PATHS.contacts, ctx.signal).catch((error: unknown) => {
    throw explainRefusal(error, 'crm');
  });
  await writeListAnswer(
    ctx.io,
    answer,
    { what: 'contacts', columns: [], preferredKeys: CONTACT_PREFERRED_KEYS },
    options,
  );
}
