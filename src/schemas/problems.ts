/** Field-level validation problems, as the CLI prints them and the sandbox returns them. */
import { z } from 'zod';
import { excerpt, quote, quoteAny } from '../io/quote.js';

/** One problem with one field: `field` is a dotted path such as `items[0].orderedQuantity`. */
export interface ValidationProblem {
  field: string;
  message: string;
}

export const nonEmptyString = z.string().trim().min(1, { error: 'must not be empty' });

/** Turns a zod path into the dotted form used in messages and CSV headers. */
export function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    // A key comes from the input: escaped and cut short like any value named in a message.
    else out += out === '' ? excerpt(String(segment)) : `.${excerpt(String(segment))}`;
  }
  return out === '' ? '(body)' : out;
}

export function problemsFrom(issues: ReadonlyArray<z.core.$ZodIssue>): ValidationProblem[] {
  return issues.map((issue) => ({ field: fieldPath(issue.path), message: issue.message }));
}

function describeType(expected: string): string {
  switch (expected) {
    case 'int':
    case 'number':
      return 'a whole number';
    case 'object':
      return 'an object';
    case 'array':
      return 'a list';
    case 'string':
      return 'a text string';
    default:
      return expected;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${quote(value, 40)}`;
  return `${typeof value} ${quoteAny(value)}`;
}

/** Plain-English messages for zod's built-in checks; custom messages are kept as written. */
export const validationErrorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'invalid_type') {
    if (issue.input === undefined) return 'is required';
    return `must be ${describeType(issue.expected)}, not ${describeValue(issue.input)}`;
  }
  if (issue.code === 'too_small' && issue.origin === 'number') {
    return `must be a whole number above zero, not ${quoteAny(issue.input)}`;
  }
  if (issue.code === 'invalid_union') return `must be a positive whole number or a non-empty text`;
  return undefined;
};
