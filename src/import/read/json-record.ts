/**
 * One record of a JSON input (an element of an array, a line of NDJSON) from its text: text that
 * is not JSON, or not an object, is a problem of that record, kept as it was for `--rejects`.
 */
import type { InputProblem } from '../../core/errors.js';
import { quoteAny } from '../../io/quote.js';
import { namesProduct } from '../check/resolve-products.js';
import type { ImportKind } from '../kind.js';
import type { SourceLocation, SourceRecord } from '../types.js';
import { parseJson } from './json-syntax.js';

/** Where a record's text stands in its file. */
export interface TextPlace {
  line: number;
  column: number;
  endLine: number;
}

/** One record from its JSON text, keyed and named as `kind` says. */
export function recordFromText(
  text: string,
  index: number,
  file: string,
  where: TextPlace,
  kind: Pick<ImportKind, 'keyOf' | 'oneWithArticle' | 'namesProducts'>,
): SourceRecord {
  const location = { file, line: where.line, endLine: where.endLine };
  const parsed = parseJson(text, where);
  if (!parsed.ok) {
    const { line, column, message } = parsed.error;
    return unreadable(index, text, location, {
      file,
      line,
      message: `not valid JSON at column ${column}: ${message}`,
    });
  }
  return recordFromValue(parsed.value, text, index, file, where, kind);
}

/**
 * One record from a value its format has parsed (`text` is the value as written): anything but
 * an object is a problem of that record, named as `object` says (`a JSON object`).
 */
export function recordFromValue(
  value: unknown,
  text: string,
  index: number,
  file: string,
  where: TextPlace,
  kind: Pick<ImportKind, 'keyOf' | 'oneWithArticle' | 'namesProducts'>,
  object = 'a JSON object',
): SourceRecord {
  const location = { file, line: where.line, endLine: where.endLine };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const what = Array.isArray(value)
      ? 'a list'
      : value === null
        ? 'null'
        : `${typeof value} ${quoteAny(value)}`;
    return unreadable(index, text, location, {
      file,
      line: where.line,
      message: `must be ${kind.oneWithArticle} (${object}), not ${what}`,
    });
  }
  const body = value as Record<string, unknown>;
  return {
    index,
    key: kind.keyOf(body),
    body,
    location,
    raw: body,
    problems: [],
    needsProductResolution: kind.namesProducts && Array.isArray(body.items) && body.items.some(namesProduct),
  };
}

/**
 * A record that could not be read as an object: `raw` is its text, to be written back as it was,
 * and its problem has no field, so it is not validated further.
 */
export function unreadable(
  index: number,
  raw: string,
  location: SourceLocation,
  problem: InputProblem,
): SourceRecord {
  return {
    index,
    key: undefined,
    body: {},
    location,
    raw,
    problems: [problem],
    needsProductResolution: false,
  };
}
