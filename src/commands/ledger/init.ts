/**
 * `ledger init`: creates the order ledger now rather than at the first send (a local folder, or a
 * PostgreSQL schema and tables), so that an owner can make it once for roles that may not create
 * tables; `--print-sql` prints the SQL instead (no connection), for a DBA to run.
 */
import type { Context } from '../../command-support/context.js';
import { initLedger, ledgerPlaceOf } from '../../ledger/open.js';
import { ledgerWhere } from './scope.js';

export async function run(flags: { printSql?: boolean }, ctx: Context): Promise<void> {
  const place = await ledgerPlaceOf(ctx);
  const where = ledgerWhere(place);
  if (flags.printSql) {
    const { PostgresLedger } = await import('../../ledger/postgres.js');
    const url = where.backend === 'postgres' ? place.ledger : undefined;
    ctx.io.out(
      `-- The tables of the ordercli order ledger (docs/cli-contract.md, "The PostgreSQL ledger").\n` +
        `-- Run once as an owner; then: GRANT USAGE ON SCHEMA <schema> TO <role>;\n` +
        `--   GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA <schema> TO <role>;\n` +
        PostgresLedger.creationSql(url, ctx.env),
    );
    return;
  }
  await initLedger(place, ctx.signal);
  ctx.io.err(`The order ledger ${where.location} is ready.\n`);
}
