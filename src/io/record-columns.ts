/**
 * The columns of a list: how a record becomes the cells of a row. Records of a documented shape
 * have their own columns; others are flattened into dotted paths and get a column per key.
 */
import { UsageError } from '../core/errors.js';
import { isPlainObject } from './loose-record.js';

/** One column of a list: its key (for `--columns`), header and how to render a record. */
export interface Column<T = unknown> {
  key: string;
  header: string;
  value: (record: T) => string;
  align?: 'left' | 'right';
  /** Shown only when named in `--columns`. */
  optional?: boolean;
  /** On a narrow terminal: the narrowest width worth showing, and which columns go first (lowest priority). */
  minWidth?: number;
  priority?: number;
  /**
   * An identifier (an id, a code, a reference): never cut with `…`, since a cut one cannot be
   * copied into an order; on a narrow terminal other columns shrink or are left out instead.
   */
  identifier?: boolean;
  /** The record's fields this column shows, as dotted paths: what `--json --columns` keeps (default: the key). */
  paths?: string[];
}

/** Picks the columns named by `--columns` (by key or header, any case), or the default ones. */
export function selectColumns<T>(columns: Column<T>[], keys: string[] | undefined): Column<T>[] {
  if (!keys || keys.length === 0) return columns.filter((column) => !column.optional);
  return keys.map((key) => {
    const wanted = key.toLowerCase();
    const column =
      columns.find((c) => c.key === key) ??
      columns.find((c) => c.key.toLowerCase() === wanted || c.header.toLowerCase() === wanted);
    if (!column) {
      throw new UsageError(
        `Unknown column "${key}" in --columns: choose among ${columns.map((c) => c.key).join(', ')}.`,
      );
    }
    return column;
  });
}

/**
 * The fields of a record that the chosen columns show (`--json --columns`), nested as in the
 * record: `packaging.product.code` keeps `{"packaging": {"product": {"code": …}}}`. Fields the
 * record lacks stay absent; a record that is not an object is kept whole.
 */
export function pickFields(record: unknown, columns: Column<never>[]): unknown {
  if (!isPlainObject(record)) return record;
  const out: Record<string, unknown> = {};
  for (const column of columns) {
    for (const path of column.paths ?? [column.key]) copyPath(record, out, path.split('.'));
  }
  return out;
}

function copyPath(from: Record<string, unknown>, to: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  if (head === undefined || !Object.hasOwn(from, head)) return;
  const value = from[head];
  if (rest.length === 0) {
    to[head] = value;
    return;
  }
  if (!isPlainObject(value)) return;
  const inner = isPlainObject(to[head]) ? (to[head] as Record<string, unknown>) : {};
  copyPath(value, inner, rest);
  if (Object.keys(inner).length > 0) to[head] = inner;
}

/** Depth of nesting flattened into dotted paths (`packaging.product.taxes[0].rate` is 5). */
const FLATTEN_DEPTH = 5;

export interface FlattenOptions {
  /** Give each element of an array of objects its own fields (`taxes[0].rate`), as a details view does. */
  expandArrays?: boolean;
}

/**
 * A record as `dotted.path → text`: nested objects become dotted paths, arrays one cell each
 * (scalars joined, objects by their name or label, else as JSON), null and missing an empty cell.
 */
export function flattenRecord(
  record: Record<string, unknown>,
  options: FlattenOptions = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (value: unknown, path: string, depth: number): void => {
    if (isPlainObject(value) && depth <= FLATTEN_DEPTH && Object.keys(value).length > 0) {
      for (const [key, inner] of Object.entries(value))
        visit(inner, path === '' ? key : `${path}.${key}`, depth + 1);
    } else if (
      options.expandArrays &&
      Array.isArray(value) &&
      value.some(isPlainObject) &&
      depth <= FLATTEN_DEPTH
    ) {
      for (const [index, item] of value.entries()) visit(item, `${path}[${index}]`, depth + 1);
    } else {
      out[path] = cellText(value);
    }
  };
  for (const [key, value] of Object.entries(record)) visit(value, key, 1);
  return out;
}

/** The text of one value in a cell. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  // Tables say yes and no, as people do; --json keeps the service's true and false.
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) {
    return value
      .map((item) => {
        if (isPlainObject(item)) {
          const name = item.name ?? item.label;
          return typeof name === 'string' ? name : JSON.stringify(item);
        }
        return cellText(item);
      })
      .join(', ');
  }
  return JSON.stringify(value) ?? '';
}

/** Columns named after the records' own (flattened) keys: `id` and the preferred keys first, then as met. */
export function deriveColumns(
  records: Record<string, unknown>[],
  preferredKeys: string[] = [],
): Column<Record<string, unknown>>[] {
  const seen = new Set<string>();
  const flat = new WeakMap<object, Record<string, string>>();
  const flatOf = (record: Record<string, unknown>) => {
    let f = flat.get(record);
    if (!f) {
      f = flattenRecord(record);
      flat.set(record, f);
    }
    return f;
  };
  for (const record of records) for (const key of Object.keys(flatOf(record))) seen.add(key);
  const first = ['id', ...preferredKeys].filter((key, i, all) => seen.has(key) && all.indexOf(key) === i);
  const keys = [...first, ...[...seen].filter((key) => !first.includes(key))];
  return keys.map((key) => ({
    key,
    header: readableHeader(key),
    value: (record: Record<string, unknown>) => flatOf(record)[key] ?? '',
    align: key === 'id' ? ('right' as const) : ('left' as const),
    // On a narrow terminal the last keys are left out rather than squeezed to a few letters.
    minWidth: 10,
    identifier: isIdentifierKey(key),
  }));
}

/** A header as the reference tables write them: `unit_factor`, `customer.firstName` → `UNIT FACTOR`, `CUSTOMER FIRST NAME`. */
export function readableHeader(key: string): string {
  return key
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[._\-\s]+/g, ' ')
    .trim()
    .toUpperCase();
}

/** Keys whose values are identifiers (never cut in a table): `id`, `customerId`, `product_code`, `ean`, `externalReference`. */
function isIdentifierKey(key: string): boolean {
  const last = key.split('.').at(-1) ?? key;
  return /^(id|ean|gtin|sku|code|reference|ref)$|(Id|_id|Code|_code|Reference|_reference)$/.test(last);
}
