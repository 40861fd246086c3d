/**
 * Whether an error answer to `POST /api/v1/contact_references` says that the service already has
 * a contact reference with this `contact.externalReference`, and which one. The interface does not
 * say how a service refuses a duplicate (docs/assumptions.md): a 409 Conflict is read as "already
 * there" whatever its body, and the existing id is looked for leniently, in the fields a problem
 * body would carry it in, then in its text (`… is already the contact reference 301`).
 */

/** A record the service already has: its id when the answer names one. */
export interface ExistingRecord {
  id?: string | number;
}

/** Fields that name the existing record's id, at the top of the body. */
const ID_FIELDS = [
  'existingId',
  'existing_id',
  'existingReferenceId',
  'contactReferenceId',
  'contact_reference_id',
  'conflictingId',
  'conflicting_id',
];
/** Objects one level down that may be the existing record itself (`{"existing": {"id": 301}}`). */
const RECORD_FIELDS = ['existing', 'contactReference', 'contact_reference', 'conflict', 'resource'];
/** Text fields of error bodies (problem+json and the usual shapes). */
const TEXT_FIELDS = ['detail', 'title', 'message', 'error', 'error_description'];
/** `the contact reference 301`, `contact reference #301`, `contact reference id 301`, `(id 301)`. */
const ID_IN_TEXT = [/contact[ _-]?reference\s+(?:id\s*)?#?(\d+)\b/i, /\bid[\s:#=]+(\d+)\b/i];

/**
 * The existing contact reference an error answer points at, or undefined when the answer is not
 * "already there": a 409 always is; a 400 or 422 only when its body names the existing id in a
 * field (its text alone may be about any invalid field).
 */
export function existingContactReference(status: number, body: unknown): ExistingRecord | undefined {
  const fromFields = idInFields(body);
  if (status === 409) {
    const id = fromFields ?? idInText(body);
    return id === undefined ? {} : { id };
  }
  if ((status === 400 || status === 422) && fromFields !== undefined) return { id: fromFields };
  return undefined;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function asId(value: unknown): string | number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const text = value.trim();
    return /^[1-9]\d{0,15}$/.test(text) ? Number(text) : text;
  }
  return undefined;
}

function idInFields(body: unknown): string | number | undefined {
  const record = asObject(body);
  if (!record) return undefined;
  for (const field of ID_FIELDS) {
    const id = asId(record[field]);
    if (id !== undefined) return id;
  }
  for (const field of RECORD_FIELDS) {
    const id = asId(asObject(record[field])?.id);
    if (id !== undefined) return id;
  }
  return undefined;
}

function idInText(body: unknown): number | undefined {
  const record = asObject(body);
  const texts =
    typeof body === 'string'
      ? [body]
      : record
        ? TEXT_FIELDS.map((field) => record[field]).filter(
            (value): value is string => typeof value === 'string',
          )
        : [];
  for (const pattern of ID_IN_TEXT) {
    for (const text of texts) {
      const match = pattern.exec(text);
      if (match) return Number(match[1]);
    }
  }
  return undefined;
}
