/** `refs packagings list`: the packaging references a partner names in an item as `internalReferenceId`. */
import { fetchList, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { listOptions } from '../../io/list-flags.js';
import { writeListAnswer } from '../../io/list-output.js';
import {
  isPackagingReferenceShape,
  PACKAGING_PREFERRED_KEYS,
  PACKAGING_REFERENCE_COLUMNS,
} from '../../refs/format.js';
import { filterPackagingReferences } from '../../refs/search.js';
import type { PackagingsListFlags } from './index.js';

export async function run(flags: PackagingsListFlags, ctx: Context): Promise<void> {
  const options = listOptions(flags, ctx.json);
  const api = await ctx.api();
  const answer = await fetchList(api, PATHS.packagingReferences, ctx.signal);
  const filtered = Boolean(flags.active) || (flags.search !== undefined && flags.search.trim() !== '');
  await writeListAnswer(
    ctx.io,
    answer,
    {
      what: 'packaging references',
      columns: PACKAGING_REFERENCE_COLUMNS,
      expected: isPackagingReferenceShape,
      preferredKeys: PACKAGING_PREFERRED_KEYS,
    },
    {
      ...options,
      narrowWith: '--search or --active',
      filter: (records) => filterPackagingReferences(records, { active: flags.active, search: flags.search }),
      emptyNote: filtered
        ? `No packaging references match${flags.active ? ' --active' : ''}${flags.search ? ` --search ${JSON.stringify(flags.search)}` : ''}.`
        : 'No packaging references.',
    },
  );
}
