/**
 * `refs browse`: choose a reference list, type to filter it, pick a record, see all its fields and
 * the snippet to put in an order; then back to the list, to the lists, or quit. Escape goes back
 * (and quits from the first question, exit 0); Ctrl-C exits 130.
 */
import { fetchList, type ListAnswer, PATHS } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { cleanCell, displayWidth, truncate } from '../../io/cells.js';
import { writeRecord } from '../../io/list-output.js';
import { asRecord, isPlainObject } from '../../io/loose-record.js';
import { formatCount } from '../../io/numbers.js';
import {
  type ChoiceItem,
  createPrompter,
  PromptEscape,
  type Prompter,
  requirePrompts,
} from '../../io/prompter.js';
import type { IOStreams } from '../../io/streams.js';
import { writeNote } from '../../io/wrap.js';
import {
  contactReferenceChoice,
  fitChoiceLine,
  joinParts,
  packagingReferenceChoice,
  type ReferenceChoice,
} from '../../refs/choices.js';
import { formatTaxes } from '../../refs/format.js';
import { matchesWords, queryWords, scalarText } from '../../refs/search.js';

type Kind = 'packagings' | 'contacts';

/** One browsable record, with what the prompt shows and searches. */
interface Entry extends ReferenceChoice {
  id: unknown;
  /** Shown whole after the choice's line: ` (inactive)`. */
  suffix: string;
}

interface KindSpec {
  title: string;
  /** The title on a narrow terminal. */
  shortTitle: string;
  what: string;
  /** "Packaging reference", to title one record. */
  one: string;
  path: string;
  /** The non-interactive command that shows the same list. */
  listCommand: string;
  toEntry(record: Record<string, unknown>): Entry;
  /** Where the snippet goes, and the snippet. */
  usage(id: unknown): { where: string; snippet: string };
}

/** Choices shown at once; more would only slow every keystroke down on a list of 50,000. */
const MAX_CHOICES = 200;
/** Choices on one page, at most: a taller terminal shows no more. */
const PAGE_SIZE = 12;
/** Cells kept on the search's row, after its question, for what the user types. */
const SEARCH_ROOM = 16;
/**
 * Rows the search takes besides its question and its page: a blank row, the choice's description,
 * the keys' help, and one more for a search longer than its room.
 */
const ROWS_BESIDES_PAGE = 4;

const KINDS: Record<Kind, KindSpec> = {
  packagings: {
    title: 'Packaging references (items)',
    shortTitle: 'Packaging references',
    what: 'packaging references',
    one: 'Packaging reference',
    path: PATHS.packagingReferences,
    listCommand: 'ordercli refs packagings list --search <text>',
    toEntry(record) {
      const choice = packagingReferenceChoice(record);
      // The list shows inactive records too, and says which.
      return {
        ...choice,
        id: record.id,
        line: choice.line + (choice.inactive ? ' (inactive)' : ''),
        suffix: choice.inactive ? ' (inactive)' : '',
        description: joinParts([choice.description, choice.inactive ? 'inactive' : 'active']),
      };
    },
    usage: (id) => ({
      where: 'in the "items" of an order',
      snippet: `{"internalReferenceId": ${JSON.stringify(id)}, "orderedQuantity": 1}`,
    }),
  },
  contacts: {
    title: 'Contact references (the contact of an order)',
    shortTitle: 'Contact references',
    what: 'contact references',
    one: 'Contact reference',
    path: PATHS.contactReferences,
    listCommand: 'ordercli refs contacts list',
    toEntry: (record) => ({ ...contactReferenceChoice(record), id: record.id, suffix: '' }),
    usage: (id) => ({
      where: 'in an order',
      snippet: `"contact": {"internalReferenceId": ${JSON.stringify(id)}}`,
    }),
  },
};

type Step = 'back' | 'lists' | 'quit';

export async function run(ctx: Context): Promise<void> {
  const { io } = ctx;
  requirePrompts(
    io,
    'refs browse',
    `Use ${KINDS.packagings.listCommand} or ${KINDS.contacts.listCommand} instead.`,
  );
  const api = await ctx.api();
  // Prompts vanish once answered or left with Escape; the records shown stay on the screen.
  const prompter = createPrompter(io, ctx.signal, { clearPromptOnDone: true });
  const loaded = new Map<Kind, Entry[] | undefined>();
  const load = async (kind: Kind): Promise<Entry[] | undefined> => {
    if (!loaded.has(kind))
      loaded.set(kind, toEntries(kind, await fetchList(api, KINDS[kind].path, ctx.signal), ctx));
    return loaded.get(kind);
  };

  let kind: Kind = 'packagings';
  for (;;) {
    let choice: Kind | 'quit';
    try {
      choice = await prompter.select<Kind | 'quit'>(
        'Which reference list?',
        [
          {
            value: 'packagings',
            name: KINDS.packagings.title,
            description: 'GET /api/v1/packaging_references',
          },
          { value: 'contacts', name: KINDS.contacts.title, description: 'GET /api/v1/contact_references' },
          { value: 'quit', name: 'Quit' },
        ],
        { default: kind },
      );
    } catch (error) {
      if (error instanceof PromptEscape) return;
      throw error;
    }
    if (choice === 'quit') return;
    kind = choice;
    const entries = await load(kind);
    if (entries === undefined) continue;
    if (entries.length === 0) {
      io.err(`There are no ${KINDS[kind].what}.\n`);
      continue;
    }
    if ((await browseList(kind, entries, prompter, ctx)) === 'quit') return;
  }
}

/** The list's entries, or undefined (with a note) when the answer holds no browsable records. */
function toEntries(kind: Kind, answer: ListAnswer, ctx: Context): Entry[] | undefined {
  const spec = KINDS[kind];
  if (answer.records === undefined || !answer.records.every(isPlainObject)) {
    writeNote(
      ctx.io,
      `The service answered the ${spec.what} in a shape ordercli cannot browse; see it with ${spec.listCommand.split(' --')[0]} --json.\n`,
    );
    return undefined;
  }
  return (answer.records as Record<string, unknown>[]).map((record) => spec.toEntry(record));
}

/** Search, pick, details, next step; until the user goes back to the lists or quits. */
async function browseList(kind: Kind, entries: Entry[], prompter: Prompter, ctx: Context): Promise<Step> {
  const spec = KINDS[kind];
  const { columns } = ctx.io;
  const idWidth = Math.min(
    12,
    entries.reduce((widest, entry) => Math.max(widest, displayWidth(cleanCell(scalarText(entry.id)))), 1),
  );
  // The pointer and a space before the id, two spaces after it, and the last column left free.
  const lineWidth = Math.max(20, columns - idWidth - 5);
  const choice = (entry: Entry) => ({
    value: entry,
    name: `${scalarText(entry.id).padStart(idWidth)}  ${fitChoiceLine(entry, lineWidth, entry.suffix)}`,
    short: scalarText(entry.id),
    // One row, whatever its length: the page's height is counted with it.
    description: truncate(cleanCell(entry.description), columns - 1),
  });

  const source = (term: string): ChoiceItem<Entry>[] => {
    const words = queryWords(term);
    const exactId = term.trim();
    const matches: Entry[] = [];
    let more = 0;
    for (const entry of entries) {
      const hit = scalarText(entry.id) === exactId || matchesWords(entry.haystack, words);
      if (!hit) continue;
      if (matches.length < MAX_CHOICES) {
        // An exact id goes first: typing 401 finds reference 401 before labels mentioning 401.
        if (scalarText(entry.id) === exactId) matches.unshift(entry);
        else matches.push(entry);
      } else more++;
    }
    const items: ChoiceItem<Entry>[] = matches.map(choice);
    if (more > 0) items.push({ separator: `… ${formatCount(more)} more: type more to narrow` });
    return items;
  };

  // What was typed in the search, typed in again when the user comes back to the list.
  let term = '';
  const remembered = (typed: string): ChoiceItem<Entry>[] => {
    term = typed;
    return source(typed);
  };
  for (;;) {
    let entry: Entry;
    try {
      // Measured at each search: the window may have been resized meanwhile.
      const { question, pageSize } = searchLayout(spec, entries.length, ctx.io);
      entry = await prompter.search<Entry>(question, remembered, { pageSize, initial: term });
    } catch (error) {
      if (error instanceof PromptEscape) return 'lists';
      throw error;
    }
    await showEntry(kind, entry, ctx);
    let next: Step;
    try {
      next = await prompter.select<Step>('Next?', [
        { value: 'back', name: `Back to the ${spec.what}` },
        { value: 'lists', name: 'Choose another list' },
        { value: 'quit', name: 'Quit' },
      ]);
    } catch (error) {
      if (error instanceof PromptEscape) continue;
      throw error;
    }
    if (next !== 'back') return next;
  }
}

/**
 * The search's question and page size for the terminal's window. The question is the longest that
 * leaves room on its row for the search; the page leaves room above it for the question, so that
 * the whole prompt fits the window: a prompt taller than the window scrolls its question off,
 * where no redraw can reach it, and each keystroke would leave a copy of it there.
 */
function searchLayout(spec: KindSpec, count: number, io: IOStreams): { question: string; pageSize: number } {
  const n = formatCount(count);
  const questions = [
    `${spec.title}: type to filter (${n}), Enter to pick, Esc to go back`,
    `${spec.shortTitle}: type to filter (${n}), Esc to go back`,
    `${spec.shortTitle} (${n}): type to filter`,
  ];
  // `? ` before the question, a space and the search after it.
  const rowWidth = (question: string) => displayWidth(question) + 3 + SEARCH_ROOM;
  const question = questions.find((q) => rowWidth(q) <= io.columns) ?? questions.at(-1)!;
  const questionRows = Math.ceil(rowWidth(question) / io.columns);
  const pageSize = Math.min(PAGE_SIZE, terminalRows(io) - questionRows - ROWS_BESIDES_PAGE);
  return { question, pageSize: Math.max(1, pageSize) };
}

/** Rows of the terminal's window (24 when it does not say). */
function terminalRows(io: IOStreams): number {
  return (io.stdout as { rows?: number }).rows || 24;
}

/** All the fields of the record, then what to put in an order. */
async function showEntry(kind: Kind, entry: Entry, ctx: Context): Promise<void> {
  const { io } = ctx;
  const spec = KINDS[kind];
  io.out(`\n${cleanCell(`${spec.one} ${scalarText(entry.id)}: ${entry.line}`)}\n`);
  await writeRecord(io, entry.record);
  if (kind === 'packagings') {
    const taxes = formatTaxes(asRecord(asRecord(entry.record.packaging).product).taxes);
    if (taxes !== '') io.out(`Taxes: ${cleanCell(taxes)}\n`);
  }
  const { where, snippet } = spec.usage(entry.id);
  io.out(`\nTo use it ${where}:\n  ${snippet}\n\n`);
  if (entry.inactive) io.err('warning: this reference is inactive: the service refuses it in an order.\n');
}
