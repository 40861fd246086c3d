/**
 * The columns of an import CSV (orders, contact references): the contract's dotted paths, the
 * `--map` file that renames a file's own headers to them (or leaves one out), and the plan that
 * says what each column of a file feeds.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InputError, type InputProblem, UsageError } from '../../core/errors.js';
import { escapeControl, excerpt, quote, quoteAny, shellWord } from '../../io/quote.js';
import { parseJson } from './json-syntax.js';

/** Header problems listed one by one; a header of thousands of unknown columns says how many more. */
const LISTED_HEADER_PROBLEMS = 20;
/** Unknown headers named in the sentence of the error. */
const NAMED_UNKNOWN = 5;

/** Columns that belong to the order (the first row of an order carries them). */
export const ORDER_COLUMNS = [
  'externalId',
  'externalReference',
  'contact.id',
  'contact.externalReferenceId',
  'contact.internalReferenceId',
  'contact.externalReference',
  'contact.firstName',
  'contact.lastName',
  'contact.email',
  'customer.name',
  'invoicingAddress.recipient',
  'invoicingAddress.street',
  'invoicingAddress.zipCode',
  'invoicingAddress.city',
  'invoicingAddress.country',
  'deliveryAddress.recipient',
  'deliveryAddress.street',
  'deliveryAddress.zipCode',
  'deliveryAddress.city',
  'deliveryAddress.country',
] as const;

/** Columns of one item (one row per item). */
export const ITEM_COLUMNS = [
  'item.packaging',
  'item.externalReferenceId',
  'item.internalReferenceId',
  'item.productCode',
  'item.packagingName',
  'item.orderedQuantity',
] as const;

export const CSV_COLUMNS: readonly string[] = [...ORDER_COLUMNS, ...ITEM_COLUMNS];

/** Columns of a contact reference CSV: the fields of the body of `POST /api/v1/contact_references`. */
export const CONTACT_REFERENCE_COLUMNS: readonly string[] = [
  'contact.externalReference',
  'contact.firstName',
  'contact.lastName',
  'contact.email',
  'customer.name',
];

/** How a cell becomes a value: text stays text; the seed's integer fields are converted. */
export type CellKind = 'text' | 'integer' | 'integerOrText';

const CELL_KINDS: Record<string, CellKind> = {
  'contact.id': 'integerOrText',
  'contact.internalReferenceId': 'integer',
  'item.packaging': 'integer',
  'item.internalReferenceId': 'integer',
  'item.orderedQuantity': 'integer',
};

/** One column of a CSV file and the field it feeds. */
export interface CsvColumn {
  /** Position in the row. */
  index: number;
  /** The header as written in the file. */
  header: string;
  /** The contract path, e.g. `contact.email` or `item.orderedQuantity`. */
  path: string;
  level: 'order' | 'item';
  /** Path inside the order (`contact.email`) or inside the item (`orderedQuantity`). */
  segments: string[];
  kind: CellKind;
}

function byLowerCase(known: readonly string[]): Map<string, string> {
  return new Map(known.map((path) => [path.toLowerCase(), path]));
}

/**
 * Says what each column of a header feeds, after renaming with `map`; the columns whose header
 * is in `ignored` (as written, in any case: `--ignore-columns`, a `--map` entry to `null`) feed
 * nothing. Unknown, empty and duplicate headers are input errors naming them (and listing the
 * `known` columns).
 */
export function planColumns(
  header: string[],
  map: Record<string, string> | undefined,
  file: string,
  known: readonly string[] = CSV_COLUMNS,
  ignored: readonly string[] = [],
): CsvColumn[] {
  const knownByLowerCase = byLowerCase(known);
  const ignoredLowerCase = new Set(ignored.map((name) => name.trim().toLowerCase()));
  const problems: InputProblem[] = [];
  const unknown: { header: string; mistyped: boolean }[] = [];
  const columns: CsvColumn[] = [];
  const byPath = new Map<string, CsvColumn>();
  let unlisted = 0;
  const report = (problem: InputProblem) => {
    if (problems.length < LISTED_HEADER_PROBLEMS) problems.push(problem);
    else unlisted++;
  };
  header.forEach((cell, index) => {
    const written = cell.trim();
    if (written === '') {
      report({ file, line: 1, message: `column ${index + 1} has no header` });
      return;
    }
    // Left out on purpose: its cells are neither read nor checked (the rejects keep them).
    if (ignoredLowerCase.has(written.toLowerCase())) return;
    const renamed = map?.[written] ?? map?.[cell] ?? written;
    const path = knownByLowerCase.get(renamed.toLowerCase());
    if (path === undefined) {
      // Only for the problems listed, and for names a person could have mistyped.
      const suggestion =
        renamed.length <= 100 && problems.length < LISTED_HEADER_PROBLEMS
          ? suggestColumn(renamed, known)
          : undefined;
      unknown.push({ header: written, mistyped: suggestion !== undefined });
      report({
        file,
        line: 1,
        field: excerpt(written),
        message: `is not a column ordercli knows${suggestion ? ` (did you mean ${suggestion}?)` : ''}`,
      });
      return;
    }
    const previous = byPath.get(path);
    if (previous) {
      report({
        file,
        line: 1,
        field: excerpt(written),
        message: `${describeHeader(cell, path)} and column ${previous.index + 1} (${describeHeader(previous.header, path)}) both fill ${path}`,
      });
      return;
    }
    const isItem = path.startsWith('item.');
    const column: CsvColumn = {
      index,
      header: cell,
      path,
      level: isItem ? 'item' : 'order',
      segments: (isItem ? path.slice('item.'.length) : path).split('.'),
      kind: CELL_KINDS[path] ?? 'text',
    };
    byPath.set(path, column);
    columns.push(column);
  });
  if (problems.length > 0) {
    if (unlisted > 0)
      problems.push({ file, line: 1, message: `… and ${unlisted} more problems with the header` });
    if (unknown.length > 0) problems.push({ file, line: 1, message: `the columns are: ${known.join(', ')}` });
    const headers = unknown.map((column) => column.header);
    const what =
      unknown.length > 0
        ? `${file} has ${unknown.length === 1 ? 'a column' : `${unknown.length} columns`} ordercli does not know (${namedList(headers)}): rename ${unknown.length === 1 ? 'it' : 'them'} to the contract's column names, or map ${unknown.length === 1 ? 'it' : 'them'} with --map <file.json>; nothing was sent.`
        : `The header of ${file} is not usable; nothing was sent.`;
    const error = new InputError(what, problems);
    if (unknown.length > 0) error.hint = howToLeaveOut(unknown);
    throw error;
  }
  return columns;
}

/**
 * The two ways to leave columns out on purpose, shown with the unknown headers that resemble no
 * known column (a near spelling is more likely a typo, which must stay an error).
 */
function howToLeaveOut(unknown: { header: string; mistyped: boolean }[]): string {
  const named = unknown
    .filter((column) => !column.mistyped && column.header.length <= 100)
    .slice(0, NAMED_UNKNOWN)
    .map((column) => column.header);
  if (named.length === 0) {
    return 'a column the import does not need can be left out on purpose: --ignore-columns <header>[,<header>…], or map its header to null in the --map file ({"<header>": null})';
  }
  const flag = named.some((header) => header.includes(','))
    ? '<header>[,<header>…]'
    : shellWord(escapeControl(named.join(',')));
  const entries = named.map((header) => `${quote(header, 100)}: null`).join(', ');
  const them = named.length === 1 ? 'it' : 'them';
  return `if the import does not need ${named.length === 1 ? 'this column' : 'these columns'}, leave ${them} out on purpose: --ignore-columns ${flag}, or map ${them} to null in the --map file ({${entries}})`;
}

function describeHeader(header: string, path: string): string {
  return header.trim() === path ? `"${path}"` : quote(header.trim());
}

/** The first few headers, quoted, and how many more there are. */
function namedList(headers: string[]): string {
  const named = headers.slice(0, NAMED_UNKNOWN).map((header) => quote(header));
  if (headers.length > NAMED_UNKNOWN) named.push(`and ${headers.length - NAMED_UNKNOWN} more`);
  return named.join(', ');
}

/** A column the user probably meant: same last segment, or a near spelling. */
function suggestColumn(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameLeaf = known.filter((path) => path.toLowerCase().endsWith(`.${lower}`));
  if (sameLeaf.length > 0) return sameLeaf.join(' or ');
  // `item.quantity` for item.orderedQuantity, `zip` for the zipCode columns.
  const leaf = lower.slice(lower.lastIndexOf('.') + 1);
  const containing = known.filter((path) => leafOf(path).includes(leaf));
  if (leaf.length >= 3 && containing.length > 0 && containing.length <= 3) return containing.join(' or ');
  let best: string | undefined;
  let bestDistance = 3;
  for (const path of known) {
    const distance = editDistance(lower, path.toLowerCase());
    if (distance < bestDistance) {
      best = path;
      bestDistance = distance;
    }
  }
  return best;
}

function leafOf(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1).toLowerCase();
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** A `--map` file: the headers it renames to the contract's paths, and those it leaves out. */
export interface ColumnMap {
  renames: Record<string, string>;
  /** Headers mapped to `null`: their columns are left out on purpose. */
  ignored: string[];
}

/**
 * Reads a `--map` file: a JSON object from the file's own headers to the contract's paths, or to
 * `null` for a column to leave out, e.g.
 * `{"N° commande": "externalId", "Qté": "item.orderedQuantity", "Commentaire": null}`.
 */
export async function readColumnMap(
  mapFile: string,
  cwd: string,
  known: readonly string[] = CSV_COLUMNS,
): Promise<ColumnMap> {
  const knownByLowerCase = byLowerCase(known);
  let text: string;
  try {
    text = await readFile(resolve(cwd, mapFile), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `Cannot read the --map file ${mapFile}: ${code === 'ENOENT' ? 'there is no such file' : code}.`,
    );
  }
  const parsed = parseJson(text);
  if (!parsed.ok) {
    const { line, column, message } = parsed.error;
    throw new InputError(`The --map file ${mapFile} is not valid JSON; nothing was sent.`, [
      { file: mapFile, line, message: `column ${column}: ${message}` },
    ]);
  }
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError(`The --map file ${mapFile} must hold a JSON object; nothing was sent.`, [
      {
        file: mapFile,
        message: 'write it as {"header in your file": "contract column", "header to leave out": null, ...}',
      },
    ]);
  }
  const problems: InputProblem[] = [];
  const map: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [header, target] of Object.entries(value)) {
    if (target === null) {
      ignored.push(header.trim());
      continue;
    }
    const path = typeof target === 'string' ? knownByLowerCase.get(target.trim().toLowerCase()) : undefined;
    if (path === undefined) {
      const suggestion =
        typeof target === 'string' && target.length <= 100 ? suggestColumn(target.trim(), known) : undefined;
      problems.push({
        file: mapFile,
        field: excerpt(header),
        message: `maps to ${quoteAny(target)}, which is not a column ordercli knows${suggestion ? ` (did you mean ${suggestion}?)` : ''}`,
      });
      continue;
    }
    map[header.trim()] = path;
  }
  if (problems.length > 0) {
    problems.push({
      file: mapFile,
      message: `the columns are: ${known.join(', ')}; a header mapped to null is left out`,
    });
    throw new InputError(
      `The --map file ${mapFile} names columns ordercli does not know; nothing was sent.`,
      problems,
    );
  }
  return { renames: map, ignored };
}
