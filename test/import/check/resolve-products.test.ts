// productCode (and packagingName) in an item resolved to the one active packaging reference that
// matches, on a reference index built here: the service is not asked.
import { describe, expect, it } from 'vitest';
import { PackagingReferenceIndex } from '../../../src/import/check/references.js';
import { namesProduct, resolveProductCodes } from '../../../src/import/check/resolve-products.js';
import type { PackagingReference } from '../../../src/schemas/references.js';

function reference(id: number, code: string, name: string, active = true): PackagingReference {
  return {
    id,
    active,
    label: `Label ${id}`,
    packaging: { name, unit: 'unité', unit_factor: 1, product: { code, label: 'Produit', taxes: [] } },
  } as PackagingReference;
}

const INDEX = new PackagingReferenceIndex([
  reference(401, 'CRF-30', 'Pot 20 cl'),
  reference(402, 'CRF-30', 'Pot 50 cl'),
  reference(403, 'CRF-30', 'Seau 5 l', false),
  reference(501, 'BSC-1', 'Paquet'),
  reference(601, 'OLD', 'Carton', false),
]);

/** Resolves the items of one order against `index` (`null`: without the references). */
async function resolve(items: unknown[], index: PackagingReferenceIndex | null = INDEX) {
  let asked = 0;
  const result = await resolveProductCodes(
    { externalId: 'E', items },
    index === null
      ? undefined
      : async () => {
          asked++;
          return index;
        },
  );
  return { ...result, asked, problems: result.problems.map((p) => `${p.field}: ${p.message}`) };
}

describe('resolveProductCodes', () => {
  it('replaces a product code, with a packaging name where it has several, by the reference id', async () => {
    const { order, problems, unresolved } = await resolve([
      { productCode: 'bsc-1 ', orderedQuantity: 2, note: 'x' },
      { productCode: 'CRF-30', packagingName: ' pot  50 CL', orderedQuantity: 1 },
      { internalReferenceId: 999, orderedQuantity: 3 },
    ]);
    expect(problems).toEqual([]);
    expect(unresolved.size).toBe(0);
    expect(order.items).toEqual([
      { internalReferenceId: 501, orderedQuantity: 2, note: 'x' },
      { internalReferenceId: 402, orderedQuantity: 1 },
      { internalReferenceId: 999, orderedQuantity: 3 },
    ]);
  });

  it('lists the candidates when none or several active packagings match', async () => {
    const { problems, unresolved, order } = await resolve([
      { productCode: 'CRF-30', orderedQuantity: 1 },
      { productCode: 'CRF-30', packagingName: 'Bocal', orderedQuantity: 1 },
      { productCode: 'CRF-30', packagingName: 'Seau 5 l', orderedQuantity: 1 },
      { productCode: 'NOPE', orderedQuantity: 1 },
    ]);
    expect(problems).toEqual([
      'items[0].productCode: product CRF-30 has 2 active packagings: name one with packagingName; candidates: 401 Label 401 (Pot 20 cl); 402 Label 402 (Pot 50 cl)',
      'items[1].packagingName: product CRF-30 has no packaging named "Bocal"; candidates: 401 Label 401 (Pot 20 cl); 402 Label 402 (Pot 50 cl); 403 Label 403 (Seau 5 l) [inactive]',
      'items[2].packagingName: no active packaging reference matches product CRF-30 and packaging "Seau 5 l"; candidates: 403 Label 403 (Seau 5 l) [inactive]',
      'items[3].productCode: no packaging reference has the product code "NOPE" (see ordercli refs packagings list --search "NOPE")',
    ]);
    expect([...unresolved]).toEqual([0, 1, 2, 3]);
    // Unresolved items are kept as they were.
    expect((order.items as unknown[])[3]).toEqual({ productCode: 'NOPE', orderedQuantity: 1 });
  });

  it('reports a malformed item without asking for the references', async () => {
    const { problems, asked } = await resolve([
      { packagingName: 'Pot 20 cl', orderedQuantity: 1 },
      { productCode: ' ', orderedQuantity: 1 },
      { productCode: 'CRF-30', packagingName: 7, orderedQuantity: 1 },
      { productCode: 'CRF-30', internalReferenceId: 401, orderedQuantity: 1 },
    ]);
    expect(problems).toEqual([
      'items[0].packagingName: only goes with productCode: it picks one of the packagings of that product',
      'items[1].productCode: must be a product code such as "CRF-30", not " "',
      'items[2].packagingName: must be the name of a packaging such as "Pot 20 cl", not 7',
      'items[3]: name the packaging in exactly one way, not with both productCode and internalReferenceId',
    ]);
    expect(asked).toBe(0);
  });

  it('cannot resolve a product code without the references, and leaves an order without items alone', async () => {
    expect((await resolve([{ productCode: 'CRF-30', orderedQuantity: 1 }], null)).problems).toEqual([
      'items[0].productCode: cannot be resolved without the packaging references of the service',
    ]);
    const noItems = { externalId: 'E' };
    expect((await resolveProductCodes(noItems, undefined)).order).toBe(noItems);
  });

  it('names an item that names a product', () => {
    expect(
      [{ productCode: 'A' }, { packagingName: 'B' }, { internalReferenceId: 1 }, null, 'x'].map(namesProduct),
    ).toEqual([true, true, false, false, false]);
  });
});
