/** `packagings list`: the catalog packagings. Their fields are not documented, so columns follow the records' keys. */
import { fetchList, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { type ListFlags, listOptions } from '../../io/list-flags.js';
import { writeListAnswer } from '../../io/list-output.js';
import { explainRefusal } from '../../refs/access.js';
import { PACKAGING_PREFERRED_KEYS } from '../../refs/format.js';

export async function run(flags: ListFlags, ctx: Context): Promise<void> {
  const options = listOptions(flags, ctx.json);
  const api = await ctx.api();
  const answer = await fetchList(api, PATHS.packagings, ctx.signal).catch((error: unknown) => {
    throw explainRefusal(error, 'catalog');
  });
  await writeListAnswer(
    ctx.io,
    answer,
    { what: 'packagings', columns: [], preferredKeys: PACKAGING_PREFERRED_KEYS },
    options,
  );
}
