/** The flags of every list command (`--json` is global), and how they become output options. */
import type { Context } from '../../cli/context.js';
import type { ListOptions } from '../../io/output.js';

export interface ListFlags {
  csv?: boolean;
  columns?: string[];
}

export function listOptions(flags: ListFlags, ctx: Context): ListOptions {
  return { json: ctx.json, csv: flags.csv, columns: flags.columns };
}
