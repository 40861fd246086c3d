/** `refs contacts add`: creates a contact reference, checked against the schema before it is sent. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { addContactReference, type ContactReferenceBody } from '../../api/references.js';
import type { Context } from '../../command-support/context.js';
import { InputError, UsageError } from '../../core/errors.js';
import { readStream } from '../../io/input.js';
import { writeRecord } from '../../io/list-output.js';
import { isPlainObject } from '../../io/loose-record.js';
import { writeAnswerJson } from '../../io/service-answer.js';
import { writeNote } from '../../io/wrap.js';
import { validateContactReference } from '../../schemas/references.js';
import type { ContactsAddFlags } from './index.js';

/** The flag that sets each field, to name it in problems. */
const FLAG_OF_FIELD: Record<string, string> = {
  contact: '--external-reference, --first-name, --last-name, --email',
  'contact.externalReference': '--external-reference',
  'contact.firstName': '--first-name',
  'contact.lastName': '--last-name',
  'contact.email': '--email',
  customer: '--customer',
  'customer.name': '--customer',
};

const FIELD_FLAGS = ['externalReference', 'firstName', 'lastName', 'email', 'customer'] as const;

export async function run(flags: ContactsAddFlags, ctx: Context): Promise<void> {
  const fromFlags = FIELD_FLAGS.some((key) => flags[key] !== undefined);
  if (flags.file !== undefined && fromFlags) {
    throw new UsageError('Give the contact reference either with --file or with the field flags, not both.');
  }
  if (flags.file === undefined && !fromFlags) {
    throw new UsageError(
      'Give the contact reference with --external-reference, --first-name, --last-name, --email and --customer, or with --file <json>.',
    );
  }
  const { body, source } =
    flags.file !== undefined ? await readBodyFile(flags.file, ctx) : bodyFromFlags(flags);
  const problems = validateContactReference(body);
  if (problems.length > 0) {
    throw new InputError(
      'The contact reference is invalid; nothing was sent.',
      problems.map((problem) => ({
        file: source,
        field: flags.file === undefined ? (FLAG_OF_FIELD[problem.field] ?? problem.field) : problem.field,
        message: problem.message,
      })),
    );
  }

  const api = await ctx.api();
  const created = await addContactReference(api, body as ContactReferenceBody, ctx.signal);
  if (ctx.json) {
    writeAnswerJson(ctx.io, created.body, { showWith: 'ordercli api GET <path> --show-secrets' });
    return;
  }
  const id = isPlainObject(created.body) ? created.body.id : undefined;
  if (id === undefined || id === null) {
    writeNote(
      ctx.io,
      `The service accepted the contact reference (HTTP ${created.status}) without returning its id; find it with ordercli refs contacts list.\n`,
    );
    if (created.body !== null && created.body !== '')
      writeAnswerJson(ctx.io, created.body, { showWith: 'ordercli api GET <path> --show-secrets' });
    return;
  }
  await writeRecord(ctx.io, created.body);
  ctx.io.err(
    `Created contact reference ${String(id)}. Name it in an order as:\n  "contact": {"internalReferenceId": ${JSON.stringify(id)}}\n`,
  );
}

function bodyFromFlags(flags: ContactsAddFlags): { body: unknown; source: string } {
  const contact: Record<string, string> = {};
  if (flags.externalReference !== undefined) contact.externalReference = flags.externalReference;
  if (flags.firstName !== undefined) contact.firstName = flags.firstName;
  if (flags.lastName !== undefined) contact.lastName = flags.lastName;
  if (flags.email !== undefined) contact.email = flags.email;
  const customer: Record<string, string> = {};
  if (flags.customer !== undefined) customer.name = flags.customer;
  return { body: { contact, customer }, source: 'command line' };
}

async function readBodyFile(file: string, ctx: Context): Promise<{ body: unknown; source: string }> {
  const source = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    text = file === '-' ? await readStream(ctx.io.stdin) : await readFile(resolve(ctx.cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read --file ${file}: ${(error as Error).message}.`);
  }
  try {
    return { body: JSON.parse(text.replace(/^\uFEFF/, '')), source };
  } catch (error) {
    throw new InputError(`${source} is not valid JSON; nothing was sent.`, [
      { file: source, message: (error as Error).message },
    ]);
  }
}
