import { completeWith, withExamples, withListColumns } from '../../command-support/command-help.js';
import { type Command, type FlagsOf, Option } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { LEDGER_LIST_KEYS, LEDGER_STATUSES } from './statuses.js';

/**
 * The `ledger` group: the order ledger (local folder or PostgreSQL, `--ledger`) read and kept from
 * any runner: list, status, forget, copy and init.
 */
export function registerLedger(program: Command, ctx: Context): void {
  const ledger = program
    .command('ledger')
    .description(
      'the order ledger: what was sent and what is in doubt, where it is and who has it open; forget a test service, copy it to another ledger',
    );
  withExamples(ledger, [
    'ordercli ledger list --status in-doubt',
    'ordercli ledger status',
    'ordercli ledger copy --to postgres://ci@db.example.com/orders',
  ]);
  registerList(ledger, ctx);
  registerStatus(ledger, ctx);
  registerForget(ledger, ctx);
  registerCopy(ledger, ctx);
  registerInit(ledger, ctx);
}

/** `ledger init [--print-sql]`: the ledger created now, or the SQL that creates it. */
function registerInit(ledger: Command, ctx: Context) {
  return withExamples(
    ledger
      .command('init')
      .description(
        'create the order ledger now (a folder, or the PostgreSQL schema and tables) rather than at the first send; --print-sql prints the SQL for an owner to run instead',
      )
      .option(
        '--print-sql',
        'print the SQL that creates the PostgreSQL schema and tables, and connect to nothing',
      )
      .addHelpText(
        'after',
        '\nFor a role that may not create tables (PostgreSQL 15 gives no one CREATE on public): an owner runs the SQL once, then grants SELECT, INSERT, UPDATE, DELETE on the tables.',
      )
      .action(async (flags) => {
        const { run } = await import('./init.js');
        await run(flags, ctx);
      }),
    [
      'ordercli --ledger postgres://owner@db.example.com/orders ledger init',
      'ordercli ledger init --print-sql | psql postgres://owner@db.example.com/orders',
    ],
  );
}

/** `ledger list`: one row per key. Its flags are `LedgerListFlags` (`list.ts`). */
function registerList(ledger: Command, ctx: Context) {
  const command = withListColumns(
    ledger
      .command('list')
      .description(
        'list the keys of the order ledger with their status, the input and line that sent them, who claimed them and when',
      )
      .option(
        '--status <status>',
        `only keys with this status: ${LEDGER_STATUSES.join(', ')} (repeat it, or separate with commas)`,
        (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
      )
      .option('--input <file>', 'only the keys an import of this input (or --journal name) sent')
      .option(
        '--service <url>',
        "only this service's keys (default: the configured base URL; none configured: every service)",
      )
      .addOption(
        new Option('--kind <kind>', 'only orders, or only contact references (default: both)').choices([
          'orders',
          'contact-references',
        ] as const),
      ),
    LEDGER_LIST_KEYS,
  )
    .addHelpText(
      'after',
      '\n--json prints [{externalId, status, service, kind, input, line, at, sentAt, by, owner, id, code, httpStatus, reason, message}].\nin-doubt: the outcome is unknown, or the command that claimed it died: check at the service, then orders resolve.\nclaimed: being sent right now by a live ordercli. failed: refused by the service (sent again by the next run).',
    )
    .action(async (flags) => {
      const { run } = await import('./list.js');
      await run(flags, ctx);
    });
  return withExamples(completeWith(command, '--status', LEDGER_STATUSES), [
    'ordercli ledger list --status in-doubt',
    'ordercli ledger list --status in-doubt,claimed --json | jq -r ".[].externalId"',
    'ordercli ledger list --input orders.csv --status failed',
    'ordercli --ledger "$ORDERCLI_LEDGER" ledger list --service https://orders.example.com --csv',
  ]);
}

/** The flags of `ledger list`, as its action receives them. */
export type LedgerListFlags = FlagsOf<ReturnType<typeof registerList>>;

/** `ledger status`: where the ledger is, its keys by status, who has it open. */
function registerStatus(ledger: Command, ctx: Context) {
  return withExamples(
    ledger
      .command('status')
      .description(
        'where the order ledger is (local or PostgreSQL), its keys by status for each service, and the processes that have it open',
      )
      .addHelpText(
        'after',
        '\n--json prints {location, backend, services: [{service, kind, counts}], openers: [{pid, host, alive, services}]}.',
      )
      .action(async () => {
        const { run } = await import('./status.js');
        await run(ctx);
      }),
    ['ordercli ledger status', 'ordercli --ledger state/ledger ledger status --json'],
  );
}

/** `ledger forget --service <url>`: drop a test service's records. Flags: `LedgerForgetFlags`. */
function registerForget(ledger: Command, ctx: Context) {
  return withExamples(
    ledger
      .command('forget')
      .description(
        'drop every record of a service (a test service) from the order ledger, after a confirmation on a terminal; its orders could then be sent again',
      )
      .requiredOption('--service <url>', 'the base URL of the service to forget')
      .option('--force', 'forget it even though some of its keys are in doubt or being sent')
      .addHelpText(
        'after',
        '\nRefused (exit 2, nothing dropped) while the service has keys in doubt or claimed, unless --force.\n--yes, CI or no terminal: no confirmation asked.',
      )
      .action(async (flags) => {
        const { run } = await import('./forget.js');
        await run(flags, ctx);
      }),
    [
      'ordercli ledger forget --service http://127.0.0.1:4780',
      'ordercli ledger forget --service http://127.0.0.1:4780 --yes --force',
    ],
  );
}

/** The flags of `ledger forget`, as its action receives them. */
export type LedgerForgetFlags = FlagsOf<ReturnType<typeof registerForget>>;

/** `ledger copy --to <url|dir>`: what the ledger knows, recorded in another. Flags: `LedgerCopyFlags`. */
function registerCopy(ledger: Command, ctx: Context) {
  return withExamples(
    ledger
      .command('copy')
      .description(
        'copy what the order ledger knows (every key created or in doubt, of every service) into another ledger; run it again: it copies only what is new',
      )
      .requiredOption(
        '--to <url|dir>',
        'the ledger to copy into: a postgres:// URL (password in PGPASSWORD or ~/.pgpass) or a folder',
      )
      .addHelpText(
        'after',
        '\nThe ledger copied from is the configured one (--ledger, ORDERCLI_LEDGER, profile; default: the config folder).\n--json prints {from, to, services: [{service, kind, copied, known, conflicts}]}.',
      )
      .action(async (flags) => {
        const { run } = await import('./copy.js');
        await run(flags, ctx);
      }),
    [
      'PGPASSWORD=… ordercli ledger copy --to postgres://ci@db.example.com:5432/orders',
      'ordercli ledger copy --to state/ledger',
    ],
  );
}

/** The flags of `ledger copy`, as its action receives them. */
export type LedgerCopyFlags = FlagsOf<ReturnType<typeof registerCopy>>;
