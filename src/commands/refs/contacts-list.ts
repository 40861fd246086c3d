/** `refs contacts list`: the contact references a partner names in an order as `internalReferenceId`. */
import { fetchList, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { type ListFlags, listOptions } from '../../io/list-flags.js';
import { writeListAnswer } from '../../io/list-output.js';
import {
  CONTACT_PREFERRED_KEYS,
  CONTACT_REFERENCE_COLUMNS,
  isContactReferenceShape,
} from '../../refs/format.js';

export async function run(flags: ListFlags, ctx: Context): Promise<void> {
  const options = listOptions(flags, ctx.json);
  const api = await ctx.api();
  const answer = await fetchList(api, PATHS.contactReferences, ctx.signal);
  await writeListAnswer(
    ctx.io,
    answer,
    {
      what: 'contact references',
      columns: CONTACT_REFERENCE_COLUMNS,
      expected: isContactReferenceShape,
      preferredKeys: CONTACT_PREFERRED_KEYS,
    },
    {
      ...options,
      emptyNote: 'No contact references: add one with ordercli refs contacts add.',
    },
  );
}
