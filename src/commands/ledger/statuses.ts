/**
 * The words of `ledger list --status` and of its rows, apart from the group's `index.ts` so that
 * the verbs import them without importing the index (which imports them, for the help).
 */

/** The statuses `ledger list --status` takes, as its rows name them. */
export const LEDGER_STATUSES = [
  'in-doubt',
  'claimed',
  'created',
  'validated',
  'failed',
  'not-created',
] as const;

export type LedgerListStatus = (typeof LEDGER_STATUSES)[number];

/** Column keys of `ledger list`, for the help (kept equal to the columns of list.ts by a test). */
export const LEDGER_LIST_KEYS =
  'external-id, status, service, kind, input, line, sent-at, by, claimed-by, id, code, reason, at, http-status';
