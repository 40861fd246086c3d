/**
 * `schema <name> [--items] [--output <file>]`: prints a JSON Schema generated from the zod
 * schemas that validate the same input (src/schemas/json-schema.ts), indented, on stdout or into
 * a file.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { UsageError } from '../../core/errors.js';
import { codeWords } from '../../io/code-words.js';
import { ensureOutputFolder } from '../../io/output-folder.js';
import { quote } from '../../io/quote.js';
import { jsonSchemaFor } from '../../schemas/json-schema.js';
import { isSchemaName, SCHEMA_NAMES } from '../../schemas/schema-names.js';
import type { SchemaFlags } from './index.js';

export async function run(name: string, flags: SchemaFlags, ctx: Context): Promise<void> {
  if (!isSchemaName(name)) {
    throw new UsageError(
      `Unknown schema ${quote(name)}: the schemas are ${SCHEMA_NAMES.join(', ')} (see ordercli schema --help).`,
    );
  }
  if (flags.items && name === 'contact-reference') {
    throw new UsageError('--items goes with schema order or orders: a contact reference has no items.');
  }
  const text = `${JSON.stringify(jsonSchemaFor(name, { items: flags.items }), null, 2)}\n`;
  if (flags.output === undefined || flags.output === '-') {
    ctx.io.out(text);
    return;
  }
  await ensureOutputFolder(flags.output, ctx.cwd, `the schema ${flags.output}`, 'nothing was written');
  try {
    await writeFile(resolve(ctx.cwd, flags.output), text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(
      `Cannot write the schema to ${flags.output} (${codeWords(code)}); nothing was written.`,
    );
  }
  ctx.io.err(`Wrote the JSON Schema of ${flags.items ? 'an order item' : name} to ${flags.output}.\n`);
}
