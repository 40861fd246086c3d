/**
 * `productCode` (with `packagingName` where a product has several packagings) in an item is
 * resolved to the `internalReferenceId` of the one active packaging reference that matches;
 * the order sent carries the id instead of the code and name.
 */

import { excerpt, quoteAny } from '../../io/quote.js';
import { ITEM_IDENTIFIERS } from '../../schemas/order.js';
import type { ValidationProblem } from '../../schemas/problems.js';
import type { PackagingReference } from '../../schemas/references.js';
import { describePackagingReference, isActive, type PackagingReferenceIndex } from './references.js';

export interface ProductResolution {
  /** The order with its product codes replaced (a new object; the input is not changed). */
  order: Record<string, unknown>;
  problems: ValidationProblem[];
  /** Items that name a product that could not be resolved: their other checks would only repeat it. */
  unresolved: Set<number>;
}

/** Most candidates listed in one message. */
const MAX_CANDIDATES = 10;

/** Whether an item names its packaging by product code (or carries a packaging name). */
export function namesProduct(item: unknown): item is Record<string, unknown> {
  return typeof item === 'object' && item !== null && ('productCode' in item || 'packagingName' in item);
}

/**
 * Resolves every `productCode` of an order. The packaging references are asked for only when an
 * item is well formed enough to need them; without them (`undefined`), such items are problems.
 */
export async function resolveProductCodes(
  order: Record<string, unknown>,
  references: (() => Promise<PackagingReferenceIndex>) | undefined,
): Promise<ProductResolution> {
  const problems: ValidationProblem[] = [];
  const unresolved = new Set<number>();
  if (!Array.isArray(order.items)) return { order, problems, unresolved };
  const items: unknown[] = [];
  for (const [index, item] of order.items.entries()) {
    if (!namesProduct(item)) {
      items.push(item);
      continue;
    }
    const field = `items[${index}]`;
    const outcome =
      malformed(item, field) ??
      (references === undefined
        ? problem(
            `${field}.productCode`,
            'cannot be resolved without the packaging references of the service',
          )
        : resolveItem(item, await references(), field));
    if ('problem' in outcome) {
      problems.push(outcome.problem);
      unresolved.add(index);
      items.push(item);
    } else {
      items.push(withReference(item, outcome.id));
    }
  }
  return { order: { ...order, items }, problems, unresolved };
}

type ItemOutcome = { id: number } | { problem: ValidationProblem };

/** What is wrong with how an item names its product, before any reference is looked up. */
function malformed(item: Record<string, unknown>, field: string): ItemOutcome | undefined {
  const { productCode, packagingName } = item;
  if (productCode === undefined) {
    return problem(
      `${field}.packagingName`,
      'only goes with productCode: it picks one of the packagings of that product',
    );
  }
  if (typeof productCode !== 'string' || productCode.trim() === '') {
    return problem(
      `${field}.productCode`,
      `must be a product code such as "CRF-30", not ${quoteAny(productCode)}`,
    );
  }
  if (packagingName !== undefined && (typeof packagingName !== 'string' || packagingName.trim() === '')) {
    return problem(
      `${field}.packagingName`,
      `must be the name of a packaging such as "Pot 20 cl", not ${quoteAny(packagingName)}`,
    );
  }
  const others = ITEM_IDENTIFIERS.filter((key) => item[key] !== undefined);
  if (others.length > 0) {
    return problem(
      field,
      `name the packaging in exactly one way, not with both productCode and ${others.join(' and ')}`,
    );
  }
  return undefined;
}

/** The one active reference of a well-formed item's product (and packaging name), or why not. */
function resolveItem(
  item: Record<string, unknown>,
  references: PackagingReferenceIndex,
  field: string,
): ItemOutcome {
  const productCode = item.productCode as string;
  const packagingName = item.packagingName as string | undefined;
  const ofProduct = references.withProductCode(productCode);
  if (ofProduct.length === 0) {
    return problem(
      `${field}.productCode`,
      `no packaging reference has the product code ${quoteAny(productCode)} (see ordercli refs packagings list --search ${quoteAny(productCode)})`,
    );
  }
  const named =
    packagingName === undefined
      ? ofProduct
      : ofProduct.filter((reference) => sameName(reference.packaging?.name, packagingName));
  if (named.length === 0) {
    return problem(
      `${field}.packagingName`,
      `product ${excerpt(productCode)} has no packaging named ${quoteAny(packagingName)}; candidates: ${candidates(ofProduct)}`,
    );
  }
  const active = named.filter(isActive);
  if (active.length === 1) return { id: active[0]!.id };
  if (active.length === 0) {
    return problem(
      packagingName === undefined ? `${field}.productCode` : `${field}.packagingName`,
      `no active packaging reference matches product ${excerpt(productCode)}${packagingName === undefined ? '' : ` and packaging ${quoteAny(packagingName)}`}; candidates: ${candidates(named)}`,
    );
  }
  return problem(
    `${field}.productCode`,
    `product ${excerpt(productCode)} has ${active.length} active packagings${packagingName === undefined ? '' : ` named ${quoteAny(packagingName)}`}: name one with packagingName; candidates: ${candidates(active)}`,
  );
}

function problem(field: string, message: string): ItemOutcome {
  return { problem: { field, message } };
}

function sameName(name: string | undefined, wanted: string): boolean {
  return name !== undefined && normalize(name) === normalize(wanted);
}

function normalize(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

function candidates(references: PackagingReference[]): string {
  const listed = references
    .slice(0, MAX_CANDIDATES)
    .map((reference) => describePackagingReference(reference))
    .join('; ');
  return references.length > MAX_CANDIDATES
    ? `${listed}; and ${references.length - MAX_CANDIDATES} more`
    : listed;
}

/** The item with `internalReferenceId` in place of `productCode`, and without `packagingName`. */
function withReference(item: Record<string, unknown>, id: number): Record<string, unknown> {
  const resolved: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item)) {
    if (key === 'productCode') resolved.internalReferenceId = id;
    else if (key !== 'packagingName') resolved[key] = value;
  }
  return resolved;
}
