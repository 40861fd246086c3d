/**
 * Step 4: validation. `prepareRecord` makes one order (or a record of another `ImportKind`) ready
 * to send (product codes resolved) and lists its problems: those found while reading, the
 * schema's (`validateOrder`, `validateContactReference`: the one definition of the rules) and,
 * with `--check-refs`, unknown or inactive references.
 * `validateImport` runs it over a whole input in one streaming pass and adds what only the whole
 * input can tell (a key used twice); it keeps the keys seen and the invalid
 * orders, never every order.
 */
import { InputError, type InputProblem } from '../../core/errors.js';
import { KeyTable } from '../../core/key-table.js';
import { escapeControl, quote } from '../../io/quote.js';
import { CONTACT_IDENTIFIERS, ITEM_IDENTIFIERS } from '../../schemas/order.js';
import type { ValidationProblem } from '../../schemas/problems.js';
import { type ImportKind, ORDER_IMPORT } from '../kind.js';
import { DEFAULT_LIMITS, type InputLimits, sizeProblems } from '../read/limits.js';
import type {
  ImportValidation,
  InputSource,
  PreparedRecord,
  SourceRecord,
  ValidateImportOptions,
} from '../types.js';
import { checkReferences } from './check-refs.js';
import type { ReferenceCatalog } from './references.js';
import { resolveProductCodes } from './resolve-products.js';

const CSV_EXTERNAL_ID_REQUIRED =
  'is required on every row: it is the key that makes re-runs safe, and the rows of one order are adjacent rows with the same externalId';

export interface PrepareOptions {
  /** What the record is (its rules); default an order. */
  kind?: ImportKind;
  /** The order needs an `externalId` (imports; default false, as for `orders create`). */
  requireExternalId?: boolean;
  /** Check every `internalReferenceId` against the reference lists (`--check-refs`). */
  checkRefs?: boolean;
  /** Largest body and value (`--max-order-bytes`, `--max-cell-bytes`); default 1 MiB and 64 KiB. */
  limits?: InputLimits;
}

/**
 * One order made ready to send: `body` has its product codes resolved to internal reference ids;
 * `problems` lists everything wrong with it, placed as `file:line: field` (an item's row in a CSV).
 */
export async function prepareRecord(
  source: SourceRecord,
  references?: ReferenceCatalog,
  options: PrepareOptions = {},
): Promise<PreparedRecord> {
  const problems: InputProblem[] = [...source.problems];
  // A problem without a field means the order could not be read at all (not JSON, a broken row).
  if (problems.some((problem) => problem.field === undefined)) return { body: source.body, problems };

  // First, so that a value too large is reported as such rather than by a rule it also breaks.
  addNew(problems, sizeProblems(source.body, options.limits ?? DEFAULT_LIMITS), source);
  let body = source.body;
  let unresolved = new Set<number>();
  if (source.needsProductResolution) {
    const resolution = await resolveProductCodes(
      body,
      references === undefined ? undefined : () => references.packagingReferences(),
    );
    body = resolution.order;
    unresolved = resolution.unresolved;
    addNew(problems, resolution.problems, source);
  }
  const kind = options.kind ?? ORDER_IMPORT;
  if (
    options.requireExternalId &&
    kind.groupsRows &&
    source.itemLines !== undefined &&
    body.externalId === undefined
  ) {
    // The schema would say "is required"; a CSV row also needs to know why it must repeat it.
    addNew(problems, [{ field: 'externalId', message: CSV_EXTERNAL_ID_REQUIRED }], source);
  }
  const schemaProblems = kind.validate(body, { requireKey: options.requireExternalId ?? false }).filter(
    // "Name the packaging" says again what the failed resolution of that item already said.
    (problem) => !unresolved.has(itemIndexOf(problem.field)),
  );
  addNew(problems, schemaProblems, source);
  if (options.checkRefs && references !== undefined)
    addNew(problems, await checkReferences(body, references), source);
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  return { body, problems };
}

/**
 * Adds problems, except those about a field that already has one on the same line, and a contact
 * or item that "names no identifier" because its identifier's cell did not convert.
 */
function addNew(problems: InputProblem[], found: ValidationProblem[], source: SourceRecord): void {
  for (const problem of found) {
    const placed = place(source, problem);
    const told = source.problems.some(
      (read) =>
        read.line === placed.line &&
        read.field !== undefined &&
        (read.field === placed.field || IDENTIFIER_FIELDS.has(`${placed.field}>${read.field}`)),
    );
    if (!told && !problems.some((other) => other.line === placed.line && other.field === placed.field)) {
      problems.push(placed);
    }
  }
}

/** `parent>parent.identifier` for the fields that identify a contact or an item, in both namings. */
const IDENTIFIER_FIELDS = new Set([
  ...CONTACT_IDENTIFIERS.map((key) => `contact>contact.${key}`),
  ...ITEM_IDENTIFIERS.map((key) => `item>item.${key}`),
]);

function itemIndexOf(field: string): number {
  const match = /^items\[(\d+)\]$/.exec(field);
  return match ? Number(match[1]) : -1;
}

/**
 * Where a problem stands in the input. In a CSV, `items[i].field` is on the row of item i and is
 * named `item.field`, as its column; elsewhere it is on the order's first line, named by its path.
 */
export function place(source: SourceRecord, problem: ValidationProblem): InputProblem {
  const { file, line } = source.location;
  if (source.itemLines) {
    const match = /^items\[(\d+)\](.*)$/.exec(problem.field);
    if (match) {
      return {
        file,
        line: source.itemLines[Number(match[1])] ?? line,
        field: `item${match[2]}`,
        message: problem.message,
      };
    }
  }
  return {
    file,
    line,
    field: problem.field === '(body)' ? undefined : problem.field,
    message: problem.message,
  };
}

/**
 * Validates a whole input in one streaming pass (the first of an import). Orders are checked as
 * they are read; only the keys seen, the invalid records and their problems are kept.
 */
export async function validateImport(
  source: Pick<InputSource, 'records' | 'header' | 'signal' | 'locateCell'> & { limits?: InputLimits },
  options: ValidateImportOptions = {},
): Promise<ImportValidation> {
  const kind = options.kind ?? ORDER_IMPORT;
  const prepareOptions: PrepareOptions = {
    kind,
    requireExternalId: options.requireKey ?? true,
    checkRefs: options.checkRefs,
    limits: options.limits ?? source.limits,
  };
  /** key -> the line where it first appeared (a million keys: outside the heap). */
  const seen = new KeyTable();
  const invalid: SourceRecord[] = [];
  const invalidIndexes = new Set<number>();
  const problems: InputProblem[] = [];
  const maxInvalid = options.maxInvalid ?? Number.POSITIVE_INFINITY;
  let omitted = 0;
  let total = 0;
  const counts = options.counts;
  const turns = new EventLoopTurns();
  try {
    for await (const order of source.records()) {
      // A reader that parses from memory would otherwise hold the event loop for the whole input:
      // no progress drawn, and Ctrl-C not seen until the end.
      if (turns.due()) await turns.yield();
      // Ctrl-C during a long validation stops it: nothing has been sent yet.
      if (source.signal?.aborted) throw source.signal.reason;
      total++;
      if (counts) counts.read = total;
      const prepared = await prepareRecord(order, options.references, prepareOptions);
      const orderProblems = prepared.problems;
      if (order.key !== undefined) {
        const firstLine = seen.get(order.key);
        if (firstLine === undefined) seen.set(order.key, order.location.line);
        // Rows under a header (CSV, a workbook) group into records: a key met again is out of place.
        else orderProblems.unshift(duplicateProblem(order, firstLine, source.header !== undefined, kind));
      }
      if (orderProblems.length === 0) {
        options.onRecord?.(order, orderProblems);
        continue;
      }
      if (source.locateCell) for (const problem of orderProblems) problem.cell ??= source.locateCell(problem);
      options.onRecord?.(order, orderProblems);
      invalidIndexes.add(order.index);
      if (counts) counts.invalid = invalidIndexes.size;
      if (invalid.length >= maxInvalid) {
        omitted++;
        continue;
      }
      // The order read is this pass's own object: it takes its full list of problems. (A copy
      // would build a CSV order's raw records now, for every invalid order.)
      order.problems = orderProblems;
      invalid.push(order);
      problems.push(...orderProblems);
    }
  } catch (error) {
    // The input broke off (CSV or JSON syntax): report it with everything found before it.
    if (error instanceof InputError) throw new InputError(error.message, [...problems, ...error.problems]);
    throw error;
  }
  return {
    total,
    valid: total - invalidIndexes.size,
    invalid,
    invalidIndexes,
    problems,
    omitted,
    keys: seen,
  };
}

/** How long a pass may run without giving the event loop a turn (timers, signals). */
const TURN_EVERY_MS = 50;

/**
 * Gives the event loop a turn when the pass has held it too long. A record read from a file
 * stream usually comes after an I/O callback anyway; checking the clock every 64 records costs
 * nothing next to reading them.
 */
class EventLoopTurns {
  private records = 0;
  private last = performance.now();

  due(): boolean {
    if (++this.records % 64 !== 0) return false;
    return performance.now() - this.last >= TURN_EVERY_MS;
  }

  async yield(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = performance.now();
  }
}

function duplicateProblem(
  order: SourceRecord,
  firstLine: number,
  rows: boolean,
  kind: ImportKind,
): InputProblem {
  const id = quote(order.key ?? '');
  return {
    file: order.location.file,
    line: order.location.line,
    field: kind.keyField,
    message:
      rows && kind.groupsRows
        ? `${id} reappears here after other orders: its first rows are on line ${firstLine}; the rows of one order must be adjacent`
        : `${id} is also the ${kind.keyField} of the ${kind.one} on line ${firstLine}: each ${kind.one} needs its own`,
  };
}

/** An invalid record as the CI output shows it: its key, where it is, and its problems in order. */
export type InvalidRecord = Pick<SourceRecord, 'key' | 'location' | 'problems'>;

/**
 * The error that stops an import whose input has invalid orders (exit 2): every problem listed,
 * and the orders they belong to (the first ones kept by the validation), so that the CI output
 * can show the first problem of each order first.
 */
export class InvalidInputError extends InputError {
  /** The `--report` written with every record of the input (as typed), when there is one. */
  report: string | undefined;
  /** Records read, and how many of them are invalid (`invalid` lists the first thousand). */
  counts: { total: number; invalid: number } | undefined;

  constructor(
    message: string,
    problems: InputProblem[],
    readonly invalid: readonly InvalidRecord[],
  ) {
    super(message, problems);
  }
}

/** The error that stops an import whose input has invalid orders: every problem listed, exit 2. */
export function invalidInputError(
  source: Pick<InputSource, 'file'>,
  validation: ImportValidation,
  kind: Pick<ImportKind, 'one' | 'many'> = ORDER_IMPORT,
): InvalidInputError {
  const count = validation.invalidIndexes.size;
  const skip =
    validation.valid > 0
      ? ` Fix ${count === 1 ? 'it' : 'them'}, or pass --skip-invalid to send the ${validation.valid} valid ${validation.valid === 1 ? 'one' : 'ones'}.`
      : '';
  const problems =
    validation.omitted > 0
      ? [
          ...validation.problems,
          {
            file: source.file,
            message: `… and ${validation.omitted} more invalid ${validation.omitted === 1 ? kind.one : kind.many}, not listed: fix the mistakes above (often the same in every row) and run it again`,
          },
        ]
      : validation.problems;
  const error = new InvalidInputError(
    `${count} of ${validation.total} ${kind.many} in ${escapeControl(source.file)} ${count === 1 ? 'is' : 'are'} invalid; nothing was sent.${skip}`,
    problems,
    validation.invalid,
  );
  error.counts = { total: validation.total, invalid: count };
  return error;
}
