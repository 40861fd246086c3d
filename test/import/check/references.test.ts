// productCode resolution and --check-refs against the sandbox's reference lists (real HTTP).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/client.js';
import { Redactor } from '../../../src/core/redact.js';
import { ReferenceCatalog } from '../../../src/import/check/references.js';
import { prepareRecord, validateImport } from '../../../src/import/check/validate.js';
import { openOrderSource } from '../../../src/import/source.js';
import { FIXTURES, lines, sourceContext, sourceOf } from '../../support/import-input.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
let client: ApiClient;
beforeAll(() => {
  client = new ApiClient({
    baseUrl: sandbox.url,
    token: sandbox.tokens.partner,
    timeoutMs: 10_000,
    userAgent: 'ordercli-test',
    redactor: new Redactor(),
  });
});
afterAll(async () => {
  await client.close();
});

function catalog(): ReferenceCatalog {
  return new ReferenceCatalog(async () => client);
}

function listRequests(path: string): number {
  return sandbox.requests.filter((request) => request.method === 'GET' && request.path === path).length;
}

const HEADER =
  'externalId,contact.internalReferenceId,item.productCode,item.packagingName,item.orderedQuantity';

describe('productCode resolution', () => {
  it('resolves a product with one active packaging, and one of several by packaging name', async () => {
    const text = [
      HEADER,
      'P-1,301,PAT-CAMP,,2', // one packaging: 403
      'P-1,,cmt-18 ,,1', // codes compare without case and surrounding spaces: 407
      'P-1,,CRF-30,carton de 12 POTS 20 cl,3', // two packagings, one named: 402
      'P-1,,OEU-BIO,,6', // two packagings, one active: 416 (417 is inactive)
    ].join('\n');
    const source = await sourceOf('codes.csv', text);
    const references = catalog();
    const validation = await validateImport(source, { references });
    expect(lines(validation.problems)).toEqual([]);
    for await (const order of source.orders()) {
      const { body, problems } = await prepareRecord(order, references);
      expect(problems).toEqual([]);
      expect(body).toEqual({
        externalId: 'P-1',
        contact: { internalReferenceId: 301 },
        items: [
          { internalReferenceId: 403, orderedQuantity: 2 },
          { internalReferenceId: 407, orderedQuantity: 1 },
          { internalReferenceId: 402, orderedQuantity: 3 },
          { internalReferenceId: 416, orderedQuantity: 6 },
        ],
      });
      // The order as read is left as it was (it is what --rejects writes back).
      expect((order.body.items as unknown[])[0]).toEqual({ productCode: 'PAT-CAMP', orderedQuantity: 2 });
    }
    // Two passes, one fetch of the list.
    expect(listRequests('/api/v1/packaging_references')).toBe(1);
  });

  it('fails validation listing the candidates when none or several match', async () => {
    const text = [
      HEADER,
      'R-1,301,NOPE-1,,1',
      'R-2,302,CRF-30,,1',
      'R-3,303,CRF-30,Seau 5 L,1',
      'R-4,304,CAF-MOU,Carton de 24 paquets,1',
      'R-5,305,BEA-NOU-24,,1',
      'R-6,306,,Pot 20 cl,1',
    ].join('\n');
    const validation = await validateImport(await sourceOf('codes.csv', text), { references: catalog() });
    expect(lines(validation.problems)).toEqual([
      'codes.csv:2: item.productCode: no packaging reference has the product code "NOPE-1" (see ordercli refs packagings list --search "NOPE-1")',
      'codes.csv:3: item.productCode: product CRF-30 has 2 active packagings: name one with packagingName; candidates: 401 Crème fraîche épaisse 30 % MG (Pot 20 cl); 402 Crème fraîche épaisse 30 % MG (Carton de 12 pots 20 cl)',
      'codes.csv:4: item.packagingName: product CRF-30 has no packaging named "Seau 5 L"; candidates: 401 Crème fraîche épaisse 30 % MG (Pot 20 cl); 402 Crème fraîche épaisse 30 % MG (Carton de 12 pots 20 cl)',
      'codes.csv:5: item.packagingName: no active packaging reference matches product CAF-MOU and packaging "Carton de 24 paquets"; candidates: 421 Café moulu pur arabica (Carton de 24 paquets) [inactive]',
      'codes.csv:6: item.productCode: no active packaging reference matches product BEA-NOU-24; candidates: 444 Beaujolais nouveau 2024 (Bouteille 75 cl) [inactive]',
      'codes.csv:7: item.packagingName: only goes with productCode: it picks one of the packagings of that product',
    ]);
    expect(validation.valid).toBe(0);
  });

  it('resolves product codes in JSON items and reports them by path', async () => {
    const orders = [
      {
        externalId: 'J-1',
        contact: { internalReferenceId: 301 },
        items: [{ productCode: 'MIE-ACA', orderedQuantity: 2 }],
      },
      {
        externalId: 'J-2',
        contact: { internalReferenceId: 301 },
        items: [
          { internalReferenceId: 401, orderedQuantity: 1 },
          { productCode: 'EAU-GAZ', orderedQuantity: 1 },
        ],
      },
    ];
    const validation = await validateImport(await sourceOf('orders.json', JSON.stringify(orders, null, 1)), {
      references: catalog(),
    });
    expect(lines(validation.problems)).toEqual([
      'orders.json:14: items[1].productCode: product EAU-GAZ has 2 active packagings: name one with packagingName; candidates: 424 Eau minérale naturelle gazeuse (Bouteille 1 L); 425 Eau minérale naturelle gazeuse (Pack de 6 bouteilles 1 L)',
    ]);
  });

  it('makes no request when no order names a product code', async () => {
    const source = await openOrderSource('orders.csv', {}, sourceContext(FIXTURES));
    const validation = await validateImport(source, { references: catalog() });
    expect(validation.problems).toEqual([]);
    expect(sandbox.requests).toEqual([]);
  });
});

describe('--check-refs', () => {
  const text = [
    'externalId,contact.internalReferenceId,contact.externalReferenceId,item.internalReferenceId,item.externalReferenceId,item.orderedQuantity',
    'C-1,301,,401,,1', // all known and active
    'C-1,,,417,,1', // inactive packaging reference
    'C-2,399,,499,,1', // unknown contact reference, unknown packaging reference
    'C-3,,CRM-1,,SKU-1,1', // external references are not checked
  ].join('\n');

  it('checks every internalReferenceId against the reference lists before anything is sent', async () => {
    const validation = await validateImport(await sourceOf('refs.csv', text), {
      references: catalog(),
      checkRefs: true,
    });
    expect(lines(validation.problems)).toEqual([
      'refs.csv:3: item.internalReferenceId: packaging reference 417 Œufs frais bio, calibre moyen (Plateau de 30) is inactive: choose an active one (ordercli refs packagings list --active)',
      'refs.csv:4: contact.internalReferenceId: no contact reference has id 399 (see ordercli refs contacts list)',
      'refs.csv:4: item.internalReferenceId: no packaging reference has id 499 (see ordercli refs packagings list)',
    ]);
    expect(validation.valid).toBe(1);
    expect(listRequests('/api/v1/packaging_references')).toBe(1);
    expect(listRequests('/api/v1/contact_references')).toBe(1);
    expect(sandbox.requests.some((request) => request.method === 'POST')).toBe(false);
  });

  it('checks nothing without the option', async () => {
    const validation = await validateImport(await sourceOf('refs.csv', text), { references: catalog() });
    expect(validation.problems).toEqual([]);
    expect(sandbox.requests).toEqual([]);
  });
});

describe('the fixtures', () => {
  it.each([
    ['orders.csv', {}, 3],
    ['commandes-excel.csv', {}, 3],
    ['orders.json', {}, 3],
    ['orders.ndjson', {}, 3],
    ['export-erp.csv', { mapFile: 'export-erp.map.json' }, 2],
  ])('%s is valid, references included', async (file, options, total) => {
    const source = await openOrderSource(file, options, sourceContext(FIXTURES));
    const validation = await validateImport(source, { references: catalog(), checkRefs: true });
    expect(lines(validation.problems)).toEqual([]);
    expect(validation.total).toBe(total);
  });

  it('orders-with-errors.csv lists each of its mistakes with its line and column', async () => {
    const source = await openOrderSource('orders-with-errors.csv', {}, sourceContext(FIXTURES));
    const validation = await validateImport(source, { references: catalog(), checkRefs: true });
    expect(validation).toMatchObject({ total: 11, valid: 0 });
    expect(lines(validation.problems)).toEqual([
      'orders-with-errors.csv:3: item.orderedQuantity: must be a whole number above zero, not "2,5"',
      'orders-with-errors.csv:4: contact: is required',
      'orders-with-errors.csv:5: contact.email: must be an e-mail address such as name@example.com',
      'orders-with-errors.csv:5: deliveryAddress.country: must be a two-letter upper-case country code such as FR',
      'orders-with-errors.csv:7: contact.internalReferenceId: "303" differs from "302" on line 6, the order\'s first row: leave it empty on the other rows of the order, or repeat it exactly',
      'orders-with-errors.csv:8: item.productCode: product CRF-30 has 2 active packagings: name one with packagingName; candidates: 401 Crème fraîche épaisse 30 % MG (Pot 20 cl); 402 Crème fraîche épaisse 30 % MG (Carton de 12 pots 20 cl)',
      'orders-with-errors.csv:9: item.productCode: no packaging reference has the product code "XYZ-999" (see ordercli refs packagings list --search "XYZ-999")',
      'orders-with-errors.csv:10: externalId: "E-1" reappears here after other orders: its first rows are on line 2; the rows of one order must be adjacent',
      'orders-with-errors.csv:11: item: name the packaging in exactly one way, not with both productCode and internalReferenceId',
      'orders-with-errors.csv:12: externalId: is required on every row: it is the key that makes re-runs safe, and the rows of one order are adjacent rows with the same externalId',
      'orders-with-errors.csv:13: item.internalReferenceId: packaging reference 417 Œufs frais bio, calibre moyen (Plateau de 30) is inactive: choose an active one (ordercli refs packagings list --active)',
      'orders-with-errors.csv:14: contact.internalReferenceId: no contact reference has id 399 (see ordercli refs contacts list)',
    ]);
  });
});
