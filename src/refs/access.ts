/** Turning a refusal on CRM or catalog records into advice: which access is missing, what partners use. */
import { ApiError } from '../api/errors.js';

export type Access = 'crm' | 'catalog';

const FORBIDDEN_HINTS: Record<Access, string> = {
  crm: 'ordercli contacts needs a token with CRM access. Partner applications use the reference list instead: ordercli refs contacts list (its ids go in an order as "contact": {"internalReferenceId": <id>}).',
  catalog:
    'ordercli packagings needs a token with catalog access. Partner applications use the reference list instead: ordercli refs packagings list (its ids go in an item as "internalReferenceId": <id>).',
};

const NOT_FOUND_HINTS: Record<Access, string> = {
  crm: 'See the existing ids with ordercli contacts list.',
  catalog: 'See the existing ids with ordercli packagings list.',
};

/** Adds a hint to a 403 (still exit 3) or a 404, and returns the error to be rethrown. */
export function explainRefusal(error: unknown, access: Access): unknown {
  if (error instanceof ApiError && error.status === 403) error.hint = FORBIDDEN_HINTS[access];
  else if (error instanceof ApiError && error.status === 404) error.hint = NOT_FOUND_HINTS[access];
  return error;
}
