/**
 * `--check-refs`: before anything is sent, every `internalReferenceId` of an order (its contact's
 * and its items') must exist in the service's reference lists and be active.
 */
import type { ValidationProblem } from '../../schemas/problems.js';
import { describePackagingReference, isActive, type ReferenceCatalog } from './references.js';

/** Problems with the internal references of one order (already shaped as the schema wants). */
export async function checkReferences(
  order: Record<string, unknown>,
  catalog: ReferenceCatalog,
): Promise<ValidationProblem[]> {
  const problems: ValidationProblem[] = [];
  const contact = order.contact as Record<string, unknown> | undefined;
  const contactId = contact?.internalReferenceId;
  if (typeof contactId === 'number') {
    const reference = (await catalog.contactReferences()).get(contactId);
    if (reference === undefined) {
      problems.push({
        field: 'contact.internalReferenceId',
        message: `no contact reference has id ${contactId} (see ordercli refs contacts list)`,
      });
    } else if (!isActive(reference)) {
      problems.push({
        field: 'contact.internalReferenceId',
        message: `contact reference ${contactId} is inactive`,
      });
    }
  }
  const items = Array.isArray(order.items) ? order.items : [];
  for (const [index, item] of items.entries()) {
    const id = (item as Record<string, unknown> | null)?.internalReferenceId;
    if (typeof id !== 'number') continue;
    const field = `items[${index}].internalReferenceId`;
    const reference = (await catalog.packagingReferences()).byId.get(id);
    if (reference === undefined) {
      problems.push({
        field,
        message: `no packaging reference has id ${id} (see ordercli refs packagings list)`,
      });
    } else if (!isActive(reference)) {
      problems.push({
        field,
        message: `packaging reference ${describePackagingReference(reference, false)} is inactive: choose an active one (ordercli refs packagings list --active)`,
      });
    }
  }
  return problems;
}
