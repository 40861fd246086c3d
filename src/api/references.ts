/**
 * The records a partner or a CRM/catalog client reads to build orders: contacts and packagings
 * (internal records), and the reference lists. Only `GET /packaging_references` has a documented
 * answer (a JSON array); the others are read leniently, whatever their shape.
 */
import { type ApiClient, pathFor } from './client.js';

export const PATHS = {
  contacts: '/api/v1/contacts',
  contact: '/api/v1/contacts/{id}',
  packagings: '/api/v1/packagings',
  packaging: '/api/v1/packagings/{id}',
  contactReferences: '/api/v1/contact_references',
  packagingReferences: '/api/v1/packaging_references',
  webhooksAvailable: '/api/v1/webhooks/available',
} as const;

/** Keys under which list APIs commonly wrap their records (JSON:API, DRF, Hydra, ...), in the order tried. */
export const LIST_WRAPPERS = ['data', 'items', 'results', 'hydra:member', 'member'] as const;

/** A list answer: the body as received and, when it is a list, its records. */
export interface ListAnswer {
  /** The body exactly as the service returned it. */
  body: unknown;
  /** The records when the body is an array, or an object wrapping one; otherwise undefined. */
  records: unknown[] | undefined;
  /** The key that wrapped the records; undefined for a bare array. */
  wrapper: string | undefined;
  /** The wrapping object's other keys (counts, paging links). */
  otherKeys: string[];
}

/** Finds the records in a list answer of any of the usual shapes. */
export function unwrapList(body: unknown): ListAnswer {
  if (Array.isArray(body)) return { body, records: body, wrapper: undefined, otherKeys: [] };
  if (typeof body === 'object' && body !== null) {
    const object = body as Record<string, unknown>;
    for (const key of LIST_WRAPPERS) {
      const value = object[key];
      if (Array.isArray(value)) {
        return {
          body,
          records: value,
          wrapper: key,
          otherKeys: Object.keys(object).filter((k) => k !== key),
        };
      }
    }
  }
  return { body, records: undefined, wrapper: undefined, otherKeys: [] };
}

/** GETs a list and finds its records. */
export async function fetchList(api: ApiClient, path: string, signal?: AbortSignal): Promise<ListAnswer> {
  const response = await api.get(path, { signal });
  return unwrapList(response.body);
}

/** GETs one record of a collection (`/api/v1/contacts/{id}`) as the service returns it. */
export async function fetchRecord(
  api: ApiClient,
  template: string,
  id: string,
  signal?: AbortSignal,
): Promise<unknown> {
  const response = await api.get(pathFor(template, { id }), { signal });
  return response.body;
}

/** The body of `POST /api/v1/contact_references`. */
export interface ContactReferenceBody {
  contact: {
    externalReference?: string;
    firstName?: string;
    lastName?: string;
    email?: string;
    [field: string]: unknown;
  };
  customer: { name?: string; [field: string]: unknown };
  [field: string]: unknown;
}

/** Creates a contact reference; returns the status and the body, whose shape the interface does not show. */
export async function addContactReference(
  api: ApiClient,
  body: ContactReferenceBody,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const response = await api.post(PATHS.contactReferences, body, { signal });
  return { status: response.status, body: response.body };
}
