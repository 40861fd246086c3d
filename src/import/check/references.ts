/**
 * The service's reference lists, as the input pipeline needs them: fetched at most once per run
 * (`GET /api/v1/packaging_references`, `GET /api/v1/contact_references`), only when an input
 * needs them, and indexed so that a lookup costs the same with ten references or fifty thousand.
 */
import type { ApiClient } from '../../api/client.js';
import { ApiError } from '../../api/errors.js';
import { PATHS, unwrapList } from '../../api/references.js';
import { type PackagingReference, packagingReferenceSchema } from '../../schemas/references.js';

/** A record of `GET /api/v1/contact_references`; the interface does not show its fields beyond `id`. */
export interface ContactReference {
  id: number;
  active?: boolean;
  [field: string]: unknown;
}

/** Packaging references by id and by product code. */
export class PackagingReferenceIndex {
  readonly byId = new Map<number, PackagingReference>();
  private readonly byProductCode = new Map<string, PackagingReference[]>();

  constructor(records: Iterable<PackagingReference>) {
    for (const record of records) {
      this.byId.set(record.id, record);
      const code = record.packaging?.product?.code;
      if (code === undefined) continue;
      const key = productCodeKey(code);
      const list = this.byProductCode.get(key);
      if (list) list.push(record);
      else this.byProductCode.set(key, [record]);
    }
  }

  /** Every reference (active or not) of the product with this code; codes compare case-insensitively. */
  withProductCode(code: string): PackagingReference[] {
    return this.byProductCode.get(productCodeKey(code)) ?? [];
  }
}

function productCodeKey(code: string): string {
  return code.trim().toLowerCase();
}

/** A reference counts as active unless the service says `active: false`. */
export function isActive(reference: { active?: boolean }): boolean {
  return reference.active !== false;
}

/**
 * `401 Crème fraîche épaisse 30 % MG (Pot 20 cl)`: how a packaging reference is named in messages;
 * `[inactive]` is added to an inactive one unless the message says so itself.
 */
export function describePackagingReference(reference: PackagingReference, markInactive = true): string {
  const label = reference.label ?? reference.packaging?.product?.label ?? '';
  const name = reference.packaging?.name;
  const inactive = markInactive && !isActive(reference) ? ' [inactive]' : '';
  return `${reference.id}${label ? ` ${label}` : ''}${name ? ` (${name})` : ''}${inactive}`;
}

/** The reference lists of one run, each fetched on first use and then kept. */
export class ReferenceCatalog {
  private packagings: Promise<PackagingReferenceIndex> | undefined;
  private contacts: Promise<Map<number, ContactReference>> | undefined;

  /** `api` is called only when a list is first needed, so an input that needs none makes no request. */
  constructor(
    private readonly api: () => Promise<ApiClient>,
    private readonly signal?: AbortSignal,
  ) {}

  packagingReferences(): Promise<PackagingReferenceIndex> {
    this.packagings ??= this.fetchList(PATHS.packagingReferences).then((records) => {
      const references: PackagingReference[] = [];
      for (const record of records) {
        const parsed = packagingReferenceSchema.safeParse(record);
        if (parsed.success) references.push(parsed.data);
      }
      return new PackagingReferenceIndex(references);
    });
    return this.packagings;
  }

  contactReferences(): Promise<Map<number, ContactReference>> {
    this.contacts ??= this.fetchList(PATHS.contactReferences).then((records) => {
      const byId = new Map<number, ContactReference>();
      for (const record of records) {
        if (
          typeof record === 'object' &&
          record !== null &&
          typeof (record as ContactReference).id === 'number'
        ) {
          byId.set((record as ContactReference).id, record as ContactReference);
        }
      }
      return byId;
    });
    return this.contacts;
  }

  private async fetchList(path: string): Promise<unknown[]> {
    const api = await this.api();
    let body: unknown;
    try {
      ({ body } = await api.get(path, { signal: this.signal }));
    } catch (error) {
      if (error instanceof ApiError && error.hint === undefined) {
        error.hint = `ordercli reads ${path} to resolve item.productCode and for --check-refs; nothing was sent.`;
      }
      throw error;
    }
    const list = unwrapList(body).records;
    if (list === undefined) {
      throw new ApiError(
        `The service answered GET ${path} with something that is not a list of references.`,
        {
          status: 200,
          body,
          request: { method: 'GET', path },
        },
      );
    }
    return list;
  }
}
