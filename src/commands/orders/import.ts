/**
 * `orders import <path|->`: the shared import command (src/commands/support/import-command.ts) run
 * with the orders' `ImportKind`; `refs contacts import` runs it with its own.
 */
import type { Context } from '../../command-support/context.js';
import { ORDER_IMPORT } from '../../import/kind.js';
import { type ImportOptions, runImportCommand } from '../support/import-command.js';

export async function run(options: ImportOptions, ctx: Context): Promise<void> {
  await runImportCommand(options, ctx, ORDER_IMPORT);
}
