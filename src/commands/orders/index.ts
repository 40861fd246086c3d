import { withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { withImportInputOptions } from './import-options.js';

/** The `orders` group: create, new, import, journal, resolve and get. */
export function registerOrders(program: Command, ctx: Context): void {
  const orders = program.command('orders').description('create, import and fetch sales orders');
  withExamples(orders, [
    'ordercli orders import orders.csv --dry-run',
    'ordercli orders create --file order.json',
    'ordercli orders get 1001',
  ]);
  registerCreate(orders, ctx);
  registerNew(orders, ctx);
  registerImport(orders, ctx);
  registerJournal(orders, ctx);
  registerResolve(orders, ctx);
  registerGet(orders, ctx);
}

/** `orders create --file <path|->`: one order from JSON. Its flags are `CreateFlags` (`create.ts`). */
function registerCreate(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('create')
      .description('create one order from JSON with POST /api/v1/orders, validated locally first')
      .requiredOption('--file <path|->', 'the order as a JSON object, or - for standard input')
      .option('--dry-run', 'validate and print the body that would be sent; nothing is sent')
      .option('--max-order-bytes <size>', 'largest order accepted, e.g. 2MiB (default: 1MiB)')
      .option('--max-cell-bytes <size>', 'largest string value accepted, e.g. 256KiB (default: 64KiB)')
      .option(
        '--force',
        'send even if the order ledger says this externalId was already created or may have been',
      )
      .addHelpText(
        'after',
        '\nExit codes: 0 created (a 2xx answer), 1 not created (the service refused or answered something else),\n2 invalid, or its externalId already created or in doubt at this service (nothing sent), 3 credentials refused.',
      )
      .action(async (flags) => {
        const { run } = await import('./create.js');
        await run(flags, ctx);
      }),
    [
      'ordercli orders create --file order.json',
      'ordercli orders create --file order.json --dry-run',
      'ordercli orders create --file order.json --json | jq .code',
      'cat order.json | ordercli orders create --file -',
      'ordercli orders create --file order.json --force   # after checking it does not exist',
    ],
  );
}

/** The flags of `orders create`, as its action receives them. */
export type CreateFlags = FlagsOf<ReturnType<typeof registerCreate>>;

/** `orders new`: one order built step by step on a terminal. */
function registerNew(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('new')
      .description(
        'build one order step by step on a terminal (references searched as you type), then save it, send it, or both',
      )
      .addHelpText(
        'after',
        "\nEsc goes back a step; Ctrl-C leaves with nothing sent or saved (exit 130). Sending is orders create's:\nthe same ledger check and exit codes. Needs a terminal: without one (or with --yes or CI) it is exit 2.",
      )
      .action(async () => {
        const { run } = await import('./new.js');
        await run(ctx);
      }),
    [
      'ordercli orders new',
      "ordercli --profile staging orders new   # the recent addresses are the profile's",
    ],
  );
}

/**
 * `orders import <path|->`: the input options every import shares, then its own. Its flags are
 * `ImportFlags` (`support/import-command.ts` runs it).
 */
function registerImport(orders: Command, ctx: Context) {
  return withExamples(
    withImportInputOptions(orders.command('import'), '{"Their header": "contact.email"}')
      .description(
        'import orders from CSV, JSON, NDJSON or an Excel workbook: validated first, each sent once, journaled for safe re-runs',
      )
      .argument('<path|->', 'the input file, or - for standard input (with --format and --journal)')
      .option(
        '--skip-invalid',
        'send the valid orders and report the invalid ones (exit 4) instead of sending nothing (exit 2)',
      )
      .option('--check-refs', 'check before sending that every internalReferenceId exists and is active')
      .option(
        '--max-order-bytes <size>',
        'largest order accepted (row, line or body), e.g. 2MiB (default: 1MiB)',
      )
      .option(
        '--max-cell-bytes <size>',
        'largest cell or string value accepted, e.g. 256KiB (default: 64KiB)',
      )
      .option(
        '--journal <file>',
        'the journal of what was sent (default: <input>.journal.ndjson beside the input)',
      )
      .option(
        '--retry-unknown',
        'send again the orders whose outcome is unknown (check first that they do not exist)',
      )
      .option(
        '--report <file>',
        'write one line per order to a .csv or .ndjson file, or a JUnit report to a .xml file (CI test results); also when invalid orders stop the import',
      )
      .option(
        '--rejects <file>',
        "write the invalid and failed orders back, to fix and import again (.xlsx or .csv by its extension, else the input's format)",
      )
      .addHelpText(
        'after',
        '\nExit codes: 0 every order created or already created, 2 invalid input (nothing sent), 3 credentials\nrefused, 4 some orders not created (see --report), 130 interrupted (run it again to continue).',
      )
      .action(async (input, flags) => {
        const { run } = await import('./import.js');
        await run({ ...flags, input }, ctx);
      }),
    [
      'ordercli orders import orders.csv',
      'ordercli orders import orders.csv --dry-run',
      'ordercli orders import orders.xlsx --sheet Commandes --rejects rejects.xlsx',
      'ordercli orders import orders.ndjson --concurrency 16 --report report.csv --rejects rejects.ndjson',
      'cat orders.ndjson | ordercli orders import - --format ndjson --journal orders.journal.ndjson',
      'ordercli orders import orders.csv --retry-unknown   # after checking the unknown orders at the service',
      'ordercli orders import orders.csv --report report.xml   # JUnit for CI; GitHub annotations when GITHUB_ACTIONS=true',
    ],
  );
}

/** The flags of `orders import`, as its action receives them. */
export type ImportFlags = FlagsOf<ReturnType<typeof registerImport>>;

/** `orders journal <input|journal>`: what an import's journal knows. */
function registerJournal(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('journal')
      .description(
        "show what an import's journal knows: orders by state, and every order whose outcome is unknown",
      )
      .argument('<input|journal>', 'the input file that was imported (its journal is used), or a journal')
      .addHelpText(
        'after',
        '\nThe base URL is the configured one (--base-url, ORDERCLI_BASE_URL, profile) when the journal holds it,\nelse the one the journal was last used with. --json prints {journal, baseUrl, counts, unknown, otherBaseUrls}.',
      )
      .action(async (target) => {
        const { run } = await import('./journal.js');
        await run({ target }, ctx);
      }),
    [
      'ordercli orders journal orders.csv',
      'ordercli orders journal orders.csv.journal.ndjson --json | jq -r ".unknown[].externalId"',
    ],
  );
}

/** `orders resolve [input|journal]`: what the user checked at the service, recorded. Flags: `ResolveFlags`. */
function registerResolve(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('resolve')
      .description(
        'record in the journal what you checked at the service for orders whose outcome is unknown',
      )
      .argument(
        '[input|journal]',
        'the input file that was imported (its journal is used), or a journal; left out: the order ledger alone (orders create, orders new)',
      )
      .option(
        '--created <externalId...>',
        'these orders exist at the service (externalId=id adds its id): no run sends them again',
      )
      .option(
        '--not-created <externalId...>',
        'these orders do not exist at the service: the next run of the import sends them',
      )
      .option(
        '--from-events <listen-log>',
        'mark as created every unknown order named by a sales_order_validated notification in this ordercli listen --log file',
      )
      .addHelpText(
        'after',
        '\nAn externalId the journal does not hold refuses the whole command (exit 2, nothing written), as does\na running import of the same journal. Then run the same import again. Without <input|journal>,\n--created and --not-created are recorded in the order ledger of --base-url alone: for an order that\norders create or orders new left in doubt.',
      )
      .action(async (target, flags) => {
        const { run } = await import('./resolve.js');
        await run({ ...flags, target }, ctx);
      }),
    [
      'ordercli orders resolve orders.csv --created ACME-00000010=10042 --not-created ACME-00000054',
      'ordercli orders resolve orders.csv --from-events events.ndjson',
      'ordercli orders resolve --created WEB-2001=10042   # an order orders create left in doubt',
      'ordercli listen --key "$KEY" --log events.ndjson   # earlier: records the notifications --from-events reads',
    ],
  );
}

/** The flags of `orders resolve`, as its action receives them. */
export type ResolveFlags = FlagsOf<ReturnType<typeof registerResolve>>;

/** `orders get <id>`: one order. */
function registerGet(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('get')
      .description('fetch one order with GET /api/v1/orders/{id}')
      .argument('<id>', 'the order id the service returned')
      .action(async (id) => {
        const { run } = await import('./get.js');
        await run({ id }, ctx);
      }),
    ['ordercli orders get 1001', 'ordercli orders get 1001 --json | jq .status'],
  );
}
