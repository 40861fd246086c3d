import { withExamples } from '../../command-support/command-help.js';
import type { Command, FlagsOf } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { type AwaitFlags, withAwaitOptions } from '../support/await-options.js';
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
    withAwaitOptions(orders.command('create'))
      .description('create one order from JSON with POST /api/v1/orders, validated locally first')
      .requiredOption('--file <path|->', 'the order as a JSON object, or - for standard input')
      .option('--dry-run', 'validate and print the body that would be sent; nothing is sent')
      .option('--max-order-bytes <size>', 'largest order accepted, e.g. 2MiB (default: 1MiB)')
      .option('--max-cell-bytes <size>', 'largest string value accepted, e.g. 256KiB (default: 64KiB)')
      .option(
        '--force',
        'send even if the order ledger says this externalId was already created or may have been; also use a ledger that has no record of this service although the default ledger has some (see ledger copy)',
      )
      .addHelpText(
        'after',
        '\nExit codes: 0 created (a 2xx answer), 1 not created (the service refused or answered something else),\n2 invalid, or its externalId already created or in doubt at this service (nothing sent), 3 credentials refused,\n5 created but not validated within --await-timeout (--await validated).',
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
    withAwaitOptions(orders.command('new'))
      .option(
        '--force',
        'use a ledger that has no record of this service although the default ledger has some (see ledger copy)',
      )
      .description(
        'build one order step by step on a terminal (references searched as you type), then save it, send it, or both',
      )
      .addHelpText(
        'after',
        "\nEsc goes back a step; Ctrl-C leaves with nothing sent or saved (exit 130). Sending is orders create's:\nthe same ledger check and exit codes. Needs a terminal: without one (or with --yes or CI) it is exit 2.",
      )
      .action(async (flags) => {
        const { run } = await import('./new.js');
        await run(ctx, flags as AwaitFlags & { force?: boolean });
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
    withAwaitOptions(withImportInputOptions(orders.command('import'), '{"Their header": "contact.email"}'))
      .description(
        'import orders from CSV, JSON, NDJSON or an Excel workbook: validated first, each sent once (the order ledger makes re-runs safe)',
      )
      .argument('<path|->', 'the input file, or - for standard input (with --format and --journal <name>)')
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
        '--journal <name>',
        "the name of this input's history in the order ledger (default: the input's path from here); no file is written",
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
        '\nExit codes: 0 every order created or already created, 2 invalid input (nothing sent), 3 credentials\nrefused, 4 some orders not created (see --report), 5 all created but some not validated in time\n(--await validated), 130 interrupted (run it again to continue).',
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
      'cat orders.ndjson | ordercli orders import - --format ndjson --journal orders-from-stdin',
      'ordercli orders import orders.csv --retry-unknown   # after checking the unknown orders at the service',
      'ordercli orders import orders.csv --report report.xml   # JUnit for CI; GitHub annotations when GITHUB_ACTIONS=true',
      'ordercli orders import orders.csv --await validated --await-timeout 5m   # and wait for each validation',
    ],
  );
}

/** The flags of `orders import`, as its action receives them. */
export type ImportFlags = FlagsOf<ReturnType<typeof registerImport>>;

/** `orders journal <input|name>`: an input's history, a query of the order ledger. */
function registerJournal(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('journal')
      .description(
        "show an input's history in the order ledger: its orders by state, and every order whose outcome is unknown",
      )
      .argument(
        '<input|name>',
        'the input that was imported (its path from here, as the import named it), or its --journal name',
      )
      .addHelpText(
        'after',
        "\nThe service is the configured one (--base-url, ORDERCLI_BASE_URL, profile) when the ledger holds the input's orders there,\nelse the only one that does. Any runner sharing the ledger (--ledger postgres://…) sees the same.\n--json prints {journal, baseUrl, kind, counts, unknown, otherBaseUrls}.",
      )
      .action(async (target) => {
        const { run } = await import('./journal.js');
        await run({ target }, ctx);
      }),
    [
      'ordercli orders journal orders.csv',
      'ordercli orders journal exports/orders.csv --json | jq -r ".unknown[].externalId"',
    ],
  );
}

/** `orders resolve [input|name]`: what the user checked at the service, recorded. Flags: `ResolveFlags`. */
function registerResolve(orders: Command, ctx: Context) {
  return withExamples(
    orders
      .command('resolve')
      .description(
        'record in the order ledger what you checked at the service for orders whose outcome is unknown',
      )
      .argument(
        '[input|name]',
        'the input that was imported, or its --journal name; left out: orders that orders create or orders new sent',
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
        '\nAn externalId the ledger does not hold for that service refuses the whole command (exit 2, nothing written),\nas does an order another ordercli is sending right now. Then run the same import again. Without <input|name>,\n--created and --not-created are recorded for the service of --base-url alone: for an order that\norders create or orders new left in doubt.',
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
