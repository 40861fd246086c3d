/**
 * The size limits of an order input: they protect the service (which refuses large bodies) and
 * this machine (a 50 MiB cell must not be held several times over). Readers stop buffering at
 * them; `prepareRecord` checks the order's body against them.
 */
import { UsageError } from '../../core/errors.js';
import { excerpt } from '../../io/quote.js';
import { fieldPath, type ValidationProblem } from '../../schemas/problems.js';

export interface InputLimits {
  /** Largest order: its JSON body, and its text in the input (a JSON element, an NDJSON line, a CSV row). */
  maxOrderBytes: number;
  /** Largest CSV cell or JSON string value (UTF-8 bytes). */
  maxCellBytes: number;
}

export const DEFAULT_LIMITS: InputLimits = { maxOrderBytes: 1024 * 1024, maxCellBytes: 64 * 1024 };

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 * 1024,
  mb: 1000 * 1000,
  mib: 1024 * 1024,
  g: 1024 * 1024 * 1024,
  gb: 1000 * 1000 * 1000,
  gib: 1024 * 1024 * 1024,
};

/** A size option (`--max-order-bytes 2MiB`): bytes, or a number with k/KiB/KB, M/MiB/MB, G/GiB/GB. */
export function parseSizeOption(flag: string, value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  const unit = match ? UNITS[match[2]!.toLowerCase()] : undefined;
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new UsageError(
      `${flag} takes a size in bytes such as 1048576, 64KiB or 2MiB, not "${excerpt(value)}".`,
    );
  }
  return bytes;
}

/** The limits given by the command's options, the defaults for those not given. */
export function inputLimits(options: { maxOrderBytes?: string; maxCellBytes?: string }): InputLimits {
  return {
    maxOrderBytes:
      options.maxOrderBytes === undefined
        ? DEFAULT_LIMITS.maxOrderBytes
        : parseSizeOption('--max-order-bytes', options.maxOrderBytes),
    maxCellBytes:
      options.maxCellBytes === undefined
        ? DEFAULT_LIMITS.maxCellBytes
        : parseSizeOption('--max-cell-bytes', options.maxCellBytes),
  };
}

/** A size as people read it: `64 KiB`, `1 MiB`, `1.5 MiB`, `900 bytes`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
}

/** The problem of an order whose text in the input is larger than the limit. */
export function orderTextTooLarge(limits: InputLimits, what: string): string {
  return `${what} is larger than ${formatSize(limits.maxOrderBytes)}, the largest order ordercli sends: split the order, or raise the limit with --max-order-bytes`;
}

/**
 * Values over the cell limit and a body over the order limit. Strings are measured in UTF-8
 * bytes; the body's exact size is computed only when a cheap bound says it may be too large.
 */
export function sizeProblems(body: Record<string, unknown>, limits: InputLimits): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  // Each character of a string takes at most 6 bytes in JSON (`\u001b`); other values are bounded below.
  let bound = 0;
  // The path of the value being visited; turned into a field name only for a problem.
  const path: (string | number)[] = [];
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      bound += 6 * value.length + 2;
      if (value.length * 3 > limits.maxCellBytes) {
        const bytes = Buffer.byteLength(value);
        if (bytes > limits.maxCellBytes) {
          problems.push({
            field: fieldPath(path),
            message: `is ${formatSize(bytes)} long, over the ${formatSize(limits.maxCellBytes)} limit for one value: shorten it, or raise the limit with --max-cell-bytes`,
          });
        }
      }
    } else if (Array.isArray(value)) {
      bound += 2 + value.length;
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        visit(value[i]);
        path.pop();
      }
    } else if (typeof value === 'object' && value !== null) {
      bound += 2;
      for (const key of Object.keys(value)) {
        bound += 6 * key.length + 4;
        path.push(key);
        visit((value as Record<string, unknown>)[key]);
        path.pop();
      }
    } else {
      bound += 32;
    }
  };
  visit(body);
  if (bound > limits.maxOrderBytes) {
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (bytes > limits.maxOrderBytes) {
      problems.unshift({
        field: '(body)',
        message: `the order's JSON body is ${formatSize(bytes)}, over the ${formatSize(limits.maxOrderBytes)} limit: split the order, or raise the limit with --max-order-bytes`,
      });
    }
  }
  return problems;
}
