/**
 * The steps of `orders new`: the contact (a reference from the list, an external reference, or
 * contact data), the items (packaging references searched as the user types, a whole quantity),
 * the two addresses (recent ones offered again), externalId and externalReference, a preview of
 * the exact JSON, then what to do with it. Every answer is checked at its own question by the
 * rules of `orders create` (the schemas of src/schemas/order.ts), and asked again if refused.
 * Every question is one step: Escape goes back to the one before, erasing from the screen what
 * was answered there and since, and offering that answer again. Nothing is saved or sent here:
 * the result says what the user chose, and the command does it.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ZodType } from 'zod';
import { type Address, sameAddress } from '../config/recent-addresses.js';
import { cleanCell, displayWidth, truncate } from '../io/cells.js';
import { isPlainObject } from '../io/loose-record.js';
import { formatCount } from '../io/numbers.js';
import { type ChoiceItem, PromptEscape, type ScreenMark, type ScreenPrompter } from '../io/prompter.js';
import type { IOStreams } from '../io/streams.js';
import { wrapForStdout } from '../io/wrap.js';
import { contactReferenceChoice, packagingReferenceChoice, type ReferenceChoice } from '../refs/choices.js';
import { matchesWords, queryWords, scalarText } from '../refs/search.js';
import {
  addressSchema,
  customerSchema,
  orderContactSchema,
  orderSchema,
  validateOrder,
} from '../schemas/order.js';
import { problemsFrom, validationErrorMap } from '../schemas/problems.js';

export interface GuidedOrderEnvironment {
  io: IOStreams;
  prompter: ScreenPrompter;
  /** The records of `GET /api/v1/contact_references`, fetched on first use; undefined if not a list. */
  contactReferences(): Promise<unknown[] | undefined>;
  /** The records of `GET /api/v1/packaging_references`, fetched on first use. */
  packagingReferences(): Promise<unknown[] | undefined>;
  /** Addresses used last, most recent first. */
  recentAddresses: Address[];
  /** What the order ledger says of this externalId at the service (a sentence), if it knows it. */
  knownExternalId(externalId: string): Promise<string | undefined>;
  /** Where the orders go, as the last question names it. */
  baseUrl: string;
  /** Where a relative file name is saved. */
  cwd: string;
  /** The date in the suggested externalId. */
  today: Date;
}

/** What the user built and chose to do with it. */
export interface GuidedOrder {
  /** The order, valid by `validateOrder`, exactly as previewed. */
  order: Record<string, unknown>;
  /** The invoicing and delivery addresses, to offer again next time. */
  addresses: Address[];
  /** The absolute path to save the order to, when the user chose to save it. */
  saveTo?: string;
  send: boolean;
}

interface Item {
  internalReferenceId: number;
  orderedQuantity: number;
}

/** The order as built so far; each step's snapshot is restored when the user goes back past it. */
interface Draft {
  contact?: Record<string, string | number>;
  customer?: { name: string };
  /** Packaging reference picked, waiting for its quantity. */
  picking?: { id: number; label: string };
  items: Item[];
  invoicingAddress?: Address;
  deliveryAddress?: Address;
  newAddress: Partial<Address>;
  externalId?: string;
  externalReference?: string;
  action?: 'send' | 'save' | 'both';
  saveTo?: string;
}

/** One question; it fills the draft and returns the next step, or 'done'. */
type Step = (draft: Draft, questions: Questions) => Promise<Step | 'done'>;

const MAX_CHOICES = 200;
const PAGE_SIZE = 12;
/** The country comes before the zip code, which is checked against it at its own question. */
const ADDRESS_FIELDS: { key: keyof Address; label: string }[] = [
  { key: 'recipient', label: 'Recipient' },
  { key: 'street', label: 'Street' },
  { key: 'country', label: 'Country (two letters, e.g. FR)' },
  { key: 'zipCode', label: 'Zip code' },
  { key: 'city', label: 'City' },
];
const CONTACT_DATA: { key: string; message: string }[] = [
  { key: 'externalReference', message: 'Contact externalReference (your reference for this contact):' },
  { key: 'firstName', message: 'First name:' },
  { key: 'lastName', message: 'Last name:' },
  { key: 'email', message: 'E-mail:' },
  { key: 'customer.name', message: 'Customer name (required with contact data):' },
];

/**
 * What `orders create` would say of `field` in `record` (the answers so far, with the one being
 * typed), checked by the same schema: true when it says nothing of that field.
 */
function fieldProblem(schema: ZodType, record: Record<string, unknown>, field: string): true | string {
  const result = schema.safeParse(record, { error: validationErrorMap });
  if (result.success) return true;
  const problem = problemsFrom(result.error.issues).find((p) => p.field === field);
  return problem === undefined ? true : problem.message;
}

/** Back to the question before, saying why once the screen is back there. */
class GoBack extends PromptEscape {
  constructor(readonly notice: string) {
    super();
  }
}
/** A whole number above zero, as typed. */
export function checkQuantity(value: string): true | string {
  const text = value.trim();
  if (!/^\d+$/.test(text)) return 'type a whole number above 0, such as 12';
  const n = Number(text);
  if (n <= 0) return 'must be above 0';
  if (!Number.isSafeInteger(n)) return 'is too large';
  return true;
}

/** `ORD-20261123-3`: the first number of the day that the ledger does not know at this service. */
export async function suggestExternalId(
  today: Date,
  known: (externalId: string) => Promise<string | undefined>,
): Promise<string> {
  const date = `${today.getFullYear()}${String(today.getMonth() + 1).padStart(2, '0')}${String(today.getDate()).padStart(2, '0')}`;
  for (let n = 1; ; n++) {
    const candidate = `ORD-${date}-${n}`;
    if ((await known(candidate)) === undefined || n >= 9999) return candidate;
  }
}

function addressLine(address: Address): string {
  return `${address.recipient}, ${address.street}, ${address.zipCode} ${address.city}, ${address.country}`;
}

/** A positive whole id, as `internalReferenceId` must be. */
function referenceId(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** A reference the user can pick, with its id if it is one `internalReferenceId` can take. */
interface Pickable extends ReferenceChoice {
  id: number | undefined;
}

const contactPickable = (record: Record<string, unknown>): Pickable => ({
  ...contactReferenceChoice(record),
  id: referenceId(record.id),
});

const packagingPickable = (record: Record<string, unknown>): Pickable => ({
  ...packagingReferenceChoice(record),
  id: referenceId(record.id),
});

/** What the questions share: the environment, what was answered at each, the lists fetched. */
class Questions {
  /** What was answered at each question, offered again when the user comes back to it. */
  readonly answers = new Map<string, string>();
  private readonly lists = new Map<string, Pickable[]>();

  constructor(readonly environment: GuidedOrderEnvironment) {}

  get io(): IOStreams {
    return this.environment.io;
  }

  get prompter(): ScreenPrompter {
    return this.environment.prompter;
  }

  /** The contact or packaging references, fetched once; none, or none readable, leaves the question. */
  async list(key: 'contacts' | 'packagings', what: string, command: string): Promise<Pickable[]> {
    let list = this.lists.get(key);
    if (list === undefined) {
      const records =
        key === 'contacts'
          ? await this.environment.contactReferences()
          : await this.environment.packagingReferences();
      if (records === undefined || !records.every(isPlainObject)) {
        throw new GoBack(
          `The service answered the ${what} in a shape ordercli cannot read; see it with ${command}.\n`,
        );
      }
      const toPickable = key === 'contacts' ? contactPickable : packagingPickable;
      list = (records as Record<string, unknown>[]).map(toPickable);
      this.lists.set(key, list);
    }
    if (list.length === 0) throw new GoBack(`There are no ${what}.\n`);
    return list;
  }

  /** One reference of `list`, searched as the user types (by words, or by its exact id). */
  pick(message: string, list: Pickable[]): Promise<Pickable> {
    const idWidth = Math.min(
      12,
      list.reduce((widest, entry) => Math.max(widest, displayWidth(scalarText(entry.record.id))), 1),
    );
    const lineWidth = Math.max(20, this.io.columns - idWidth - 5);
    return this.prompter.search(message, (term) => pickChoices(list, term, idWidth, lineWidth), {
      pageSize: PAGE_SIZE,
    });
  }

  /** A line of text, offered again when the user comes back; stored trimmed. */
  async ask(
    key: string,
    message: string,
    options: { validate: (value: string) => true | string | Promise<true | string>; default?: string },
  ): Promise<string> {
    const value = await this.prompter.input(message, {
      default: this.answers.get(key) ?? options.default,
      validate: options.validate,
    });
    this.answers.set(key, value.trim());
    return value.trim();
  }
}

/** The choices of `pick` for what is typed: the exact id first, at most MAX_CHOICES, then how many more. */
function pickChoices(
  list: Pickable[],
  term: string,
  idWidth: number,
  lineWidth: number,
): ChoiceItem<Pickable>[] {
  const words = queryWords(term);
  const exactId = term.trim();
  const matches: Pickable[] = [];
  let more = 0;
  for (const entry of list) {
    const isId = scalarText(entry.record.id) === exactId;
    if (!isId && !matchesWords(entry.haystack, words)) continue;
    if (matches.length >= MAX_CHOICES) more++;
    else if (isId) matches.unshift(entry);
    else matches.push(entry);
  }
  const items: ChoiceItem<Pickable>[] = matches.map((entry) => ({
    value: entry,
    name: `${scalarText(entry.record.id).padStart(idWidth)}  ${truncate(cleanCell(entry.line), lineWidth)}`,
    short: truncate(`${scalarText(entry.record.id)} ${cleanCell(entry.line)}`, lineWidth),
    description: cleanCell(entry.description),
    disabled: entry.inactive ? '(inactive)' : entry.id === undefined ? '(no whole id)' : false,
  }));
  if (more > 0) items.push({ separator: `… ${formatCount(more)} more: type more to narrow` });
  return items;
}

/**
 * Asks the questions until the user chooses what to do with the order. Escape on the first
 * question throws PromptEscape (the user leaves); Ctrl-C throws the prompter's CancelledError.
 */
export async function runGuidedOrder(environment: GuidedOrderEnvironment): Promise<GuidedOrder> {
  const draft = await walkSteps(contactWay, new Questions(environment));
  return {
    order: orderOf(draft),
    addresses: [draft.invoicingAddress, draft.deliveryAddress].filter((a): a is Address => a !== undefined),
    saveTo: draft.action === 'send' ? undefined : draft.saveTo,
    send: draft.action !== 'save',
  };
}

/**
 * Runs the steps from `first` until one returns 'done'. Escape goes back to the step before, with
 * the draft as it was when that step began and the screen as it was then (its answer, and all
 * since, erased: the question is shown once); Escape on the first step is thrown.
 */
async function walkSteps(first: Step, questions: Questions): Promise<Draft> {
  const { prompter } = questions;
  let draft: Draft = { items: [], newAddress: {} };
  const history: { step: Step; before: Draft; mark: ScreenMark }[] = [];
  let step: Step = first;
  for (;;) {
    const before = structuredClone(draft);
    const mark = prompter.mark();
    let next: Step | 'done';
    try {
      next = await step(draft, questions);
    } catch (error) {
      if (!(error instanceof PromptEscape)) throw error;
      const previous = history.pop();
      if (previous === undefined) throw error;
      prompter.eraseTo(previous.mark);
      if (error instanceof GoBack) prompter.say(wrapForStdout(questions.io, error.notice));
      step = previous.step;
      draft = previous.before;
      continue;
    }
    history.push({ step, before, mark });
    if (next === 'done') return draft;
    step = next;
  }
}

// --- the contact ---------------------------------------------------------------------------
async function contactWay(draft: Draft, questions: Questions): Promise<Step> {
  const way = await questions.prompter.select(
    'How is the contact of the order named?',
    [
      {
        value: 'reference',
        name: 'A contact reference from the list',
        description: '"contact": {"internalReferenceId": …} (GET /api/v1/contact_references)',
      },
      {
        value: 'external',
        name: 'An external reference',
        description: '"contact": {"externalReferenceId": "…"}, a reference chosen by your application',
      },
      {
        value: 'data',
        name: 'Contact data',
        description: 'externalReference, first and last name, e-mail, and the customer name',
      },
    ],
    { default: questions.answers.get('contactWay') },
  );
  questions.answers.set('contactWay', way);
  draft.contact = undefined;
  draft.customer = undefined;
  if (way === 'reference') return contactReference;
  if (way === 'external') return contactExternal;
  return contactData(0);
}

async function contactReference(draft: Draft, questions: Questions): Promise<Step> {
  const list = await questions.list('contacts', 'contact references', 'ordercli refs contacts list');
  const entry = await questions.pick(
    `Contact reference (${formatCount(list.length)}; type to filter, Esc to go back):`,
    list,
  );
  draft.contact = { internalReferenceId: entry.id! };
  return itemPackaging;
}

async function contactExternal(draft: Draft, questions: Questions): Promise<Step> {
  draft.contact = {
    externalReferenceId: await questions.ask(
      'contact.externalReferenceId',
      'External reference of the contact:',
      {
        validate: (typed) =>
          fieldProblem(orderContactSchema, { externalReferenceId: typed.trim() }, 'externalReferenceId'),
      },
    ),
  };
  return itemPackaging;
}

/** The question of the `index`th field of the contact data. */
function contactData(index: number): Step {
  return async (draft, questions) => {
    const field = CONTACT_DATA[index]!;
    const validate = (typed: string) =>
      field.key === 'customer.name'
        ? fieldProblem(customerSchema, { name: typed.trim() }, 'name')
        : fieldProblem(orderContactSchema, { ...draft.contact, [field.key]: typed.trim() }, field.key);
    const value = await questions.ask(`contact.${field.key}`, field.message, { validate });
    if (field.key === 'customer.name') draft.customer = { name: value };
    else draft.contact = { ...draft.contact, [field.key]: value };
    return index + 1 < CONTACT_DATA.length ? contactData(index + 1) : itemPackaging;
  };
}

// --- the items -----------------------------------------------------------------------------
async function itemPackaging(draft: Draft, questions: Questions): Promise<Step> {
  const list = await questions.list('packagings', 'packaging references', 'ordercli refs packagings list');
  const entry = await questions.pick(
    `Item ${draft.items.length + 1}, packaging reference (${formatCount(list.length)}; type to filter, Esc to go back):`,
    list,
  );
  draft.picking = { id: entry.id!, label: entry.line };
  return itemQuantity;
}

async function itemQuantity(draft: Draft, questions: Questions): Promise<Step> {
  const picking = draft.picking!;
  const quantity = await questions.ask(
    `item.${draft.items.length}.quantity`,
    `Quantity of ${cleanCell(picking.label)} (whole packagings):`,
    { validate: checkQuantity },
  );
  draft.items.push({ internalReferenceId: picking.id, orderedQuantity: Number(quantity) });
  draft.picking = undefined;
  return anotherItem;
}

async function anotherItem(draft: Draft, questions: Questions): Promise<Step> {
  const more = await questions.prompter.select(
    `${draft.items.length} ${draft.items.length === 1 ? 'item' : 'items'}. Add another item?`,
    [
      { value: true, name: 'Yes, add another item' },
      { value: false, name: 'No, go on to the addresses' },
    ],
  );
  return more ? itemPackaging : addressStart('invoicingAddress', questions);
}

// --- the addresses -------------------------------------------------------------------------
type AddressKind = 'invoicingAddress' | 'deliveryAddress';

const addressTitle = (kind: AddressKind): string =>
  kind === 'invoicingAddress' ? 'Invoicing address' : 'Delivery address';

/** After the invoicing address, the delivery address (always a choice: the invoicing one again is one). */
const afterAddress = (kind: AddressKind): Step =>
  kind === 'invoicingAddress' ? addressChoice('deliveryAddress') : externalIdStep;

/** The choice of a recent address, or straight to a new one when there is nothing to choose. */
function addressStart(kind: AddressKind, questions: Questions): Step {
  return kind === 'invoicingAddress' && questions.environment.recentAddresses.length === 0
    ? addressField(kind, 0)
    : addressChoice(kind);
}

/** The invoicing or delivery address: a recent one, the invoicing one again, or a new one. */
function addressChoice(kind: AddressKind): Step {
  return async (draft, questions) => {
    const choices: ChoiceItem<Address | 'same' | 'new'>[] = [];
    if (kind === 'deliveryAddress')
      choices.push({
        value: 'same',
        name: 'Same as the invoicing address',
        description: cleanCell(addressLine(draft.invoicingAddress!)),
      });
    for (const address of questions.environment.recentAddresses) {
      // "Same as the invoicing address" already offers that one.
      if (kind === 'deliveryAddress' && sameAddress(address, draft.invoicingAddress!)) continue;
      choices.push({
        value: address,
        name: truncate(cleanCell(addressLine(address)), questions.io.columns - 6),
      });
    }
    choices.push({ value: 'new', name: 'A new address' });
    const choice = await questions.prompter.select(`${addressTitle(kind)}?`, choices, {
      pageSize: PAGE_SIZE,
    });
    if (choice === 'new') {
      draft.newAddress = {};
      return addressField(kind, 0);
    }
    draft[kind] = choice === 'same' ? { ...draft.invoicingAddress! } : { ...choice };
    return afterAddress(kind);
  };
}

/** The `index`th field of a new address. */
function addressField(kind: AddressKind, index: number): Step {
  return async (draft, questions) => {
    const { key, label } = ADDRESS_FIELDS[index]!;
    const shown = (typed: string) => (key === 'country' ? typed.trim().toUpperCase() : typed.trim());
    const value = await questions.ask(
      `${kind}.${key}`,
      `${addressTitle(kind)}, ${label.charAt(0).toLowerCase()}${label.slice(1)}:`,
      {
        default: key === 'country' ? 'FR' : undefined,
        // The zip code against the country answered just before, as orders create checks it.
        validate: (typed) => fieldProblem(addressSchema, { ...draft.newAddress, [key]: shown(typed) }, key),
      },
    );
    draft.newAddress = { ...draft.newAddress, [key]: shown(value) };
    if (index + 1 < ADDRESS_FIELDS.length) return addressField(kind, index + 1);
    const { recipient, street, zipCode, city, country } = draft.newAddress as Address;
    // In the interface's order, as the preview shows it, whatever the order of the questions.
    draft[kind] = { recipient, street, zipCode, city, country };
    draft.newAddress = {};
    return afterAddress(kind);
  };
}

// --- the order's own identifiers -----------------------------------------------------------
async function externalIdStep(draft: Draft, questions: Questions): Promise<Step> {
  const { environment } = questions;
  const suggest = () => suggestExternalId(environment.today, environment.knownExternalId);
  draft.externalId = await questions.ask(
    'externalId',
    'externalId (your identifier of the order, the key against sending it twice):',
    {
      default: await suggest(),
      // One the ledger knows is refused at the question, with when and by what.
      validate: async (typed) => {
        const externalId = typed.trim();
        const problem = fieldProblem(orderSchema, { externalId }, 'externalId');
        if (problem !== true) return problem;
        const known = await environment.knownExternalId(externalId);
        if (known === undefined) return true;
        return `The order ledger says ${JSON.stringify(externalId)} was ${known} at ${environment.baseUrl}: choose another externalId, such as ${await suggest()}.`;
      },
    },
  );
  return externalReferenceStep;
}

async function externalReferenceStep(draft: Draft, questions: Questions): Promise<Step> {
  const value = await questions.ask(
    'externalReference',
    'externalReference (your order number; empty for none):',
    {
      validate: (typed) =>
        typed.trim() === '' || fieldProblem(orderSchema, { externalReference: typed }, 'externalReference'),
    },
  );
  draft.externalReference = value === '' ? undefined : value;
  return preview;
}

// --- the preview and what to do with it ----------------------------------------------------
async function preview(draft: Draft, questions: Questions): Promise<Step | 'done'> {
  const { prompter, answers, environment } = questions;
  const order = orderOf(draft);
  const problems = validateOrder(order);
  if (problems.length > 0) {
    // Every answer was checked as it was typed; this would be a rule the questions do not know.
    throw new GoBack(problems.map((problem) => `${problem.field}: ${problem.message}\n`).join(''));
  }
  prompter.say(
    `\nThe order, exactly as it would be sent (POST /api/v1/orders):\n${JSON.stringify(order, null, 2)}\n\n`,
  );
  const action = await questions.prompter.select<'send' | 'save' | 'both'>(
    'What now? (Esc to go back and change it)',
    [
      { value: 'send', name: `Send it to ${environment.baseUrl}` },
      { value: 'save', name: 'Save it to a file (send nothing)' },
      { value: 'both', name: 'Save it to a file, then send it' },
    ],
    { default: answers.get('action') as 'send' | 'save' | 'both' | undefined },
  );
  answers.set('action', action);
  draft.action = action;
  return action === 'send' ? 'done' : saveToStep;
}

async function saveToStep(draft: Draft, questions: Questions): Promise<'done'> {
  const { cwd } = questions.environment;
  const path = await questions.ask('saveTo', 'Save the order to (a new file):', {
    default: `${draft.externalId ?? 'order'}.json`,
    validate: (typed) => {
      if (typed.trim() === '') return 'cannot be empty';
      return !existsSync(resolve(cwd, typed.trim())) || 'that file exists: choose another name';
    },
  });
  draft.saveTo = resolve(cwd, path);
  return 'done';
}

/** The order of the draft, its fields in the interface's order. */
function orderOf(draft: Draft): Record<string, unknown> {
  const order: Record<string, unknown> = {};
  if (draft.externalId !== undefined) order.externalId = draft.externalId;
  if (draft.externalReference !== undefined) order.externalReference = draft.externalReference;
  order.contact = draft.contact;
  if (draft.customer !== undefined) order.customer = draft.customer;
  if (draft.invoicingAddress !== undefined) order.invoicingAddress = draft.invoicingAddress;
  if (draft.deliveryAddress !== undefined) order.deliveryAddress = draft.deliveryAddress;
  order.items = draft.items;
  return order;
}
