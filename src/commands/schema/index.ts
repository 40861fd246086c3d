import { completeWith, withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { SCHEMA_NAMES } from '../../schemas/schema-names.js';

export function registerSchema(program: Command, ctx: Context) {
  const schema = program
    .command('schema')
    .description(
      'print the JSON Schema (draft 2020-12) of an order file or a contact reference, for editors and CI linters',
    )
    .argument('<name>', `${SCHEMA_NAMES.join(', ')}`)
    .option('--items', 'the schema of one item of an order (with order or orders)')
    .option('--output <file>', 'write it to this file instead of stdout')
    .action(async (name, flags) => {
      const { run } = await import('./schema.js');
      await run(name, flags, ctx);
    });
  completeWith(schema, 'name', SCHEMA_NAMES);
  withExamples(schema, [
    'ordercli schema order > order.schema.json          # one order, as orders create --file reads it',
    'ordercli schema orders --output orders.schema.json  # a JSON array of orders, as orders import reads it',
    'ordercli schema order --items',
    'ordercli schema contact-reference',
  ]);
  return schema;
}

/** The flags of `schema`, as its action receives them. */
export type SchemaFlags = FlagsOf<ReturnType<typeof registerSchema>>;
