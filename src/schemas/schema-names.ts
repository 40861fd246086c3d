/** The JSON Schemas `ordercli schema <name>` prints; without zod, so that `--help` can name them. */
export const SCHEMA_NAMES = ['order', 'orders', 'contact-reference'] as const;
export type SchemaName = (typeof SCHEMA_NAMES)[number];

export function isSchemaName(name: string): name is SchemaName {
  return (SCHEMA_NAMES as readonly string[]).includes(name);
}
