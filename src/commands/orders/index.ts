import type { Command } from 'commander';
import type { Context } from '../../cli/context.js';
import { withExamples } from '../../cli/program.js';

export function registerOrders(program: Command, ctx: Context): void {
  const orders = program.command('orders').description('create, import and fetch sales orders');

  withExamples(
    orders
      .command('create')
      .description('create one order from JSON with POST /api/v1/orders, validated locally first')
      .requiredOption('--file <path|->', 'the order as a JSON object, or - for standard input')
      .option('--dry-run', 'validate and print the body that would be sent; nothing is sent')
      .option(
        '--force',
        'send even if the order ledger says this externalId was already created or may have been',
      )
      .addHelpText(
        'after',
        '\nExit codes: 0 created (a 2xx answer), 1 not created (the service refused or answered something else),\n2 invalid, or its externalId already created or in doubt at this service (nothing sent), 3 credentials refused.',
      )
      .action(async (opts: { file: string; dryRun?: boolean; force?: boolean }) => {
        const { run } = await import('./create.js');
        await run(opts, ctx);
      }),
    [
      'ordercli orders create --file order.json',
      'ordercli orders create --file order.json --dry-run',
      'ordercli orders create --file order.json --json | jq .code',
      'cat order.json | ordercli orders create --file -',
      'ordercli orders create --file order.json --force   # after checking it does not exist',
    ],
  );

  withExamples(
    orders
      .command('import')
      .description(
        'import orders from CSV, JSON or NDJSON: validated first, each sent once, journaled for safe re-runs',
      )
      .argument('<path|->', 'the input file, or - for standard input (with --format and --journal)')
      .option('--format <format>', 'csv, json or ndjson (default: from the file extension)')
      .option('--delimiter <char>', 'CSV delimiter (default: detected from the header: , ; or tab)')
      .option(
        '--map <file.json>',
        'rename the file\'s own headers to the contract\'s paths ({"Their header": "contact.email"})',
      )
      .option('--concurrency <n>', 'requests in flight at once', '8')
      .option('--dry-run', 'validate the whole input and stop; nothing is sent')
      .option(
        '--skip-invalid',
        'send the valid orders and report the invalid ones (exit 4) instead of sending nothing (exit 2)',
      )
      .option('--check-refs', 'check before sending that every internalReferenceId exists and is active')
      .option(
        '--journal <file>',
        'the journal of what was sent (default: <input>.journal.ndjson beside the input)',
      )
      .option(
        '--retry-unknown',
        'send again the orders whose outcome is unknown (check first that they do not exist)',
      )
      .option('--report <file>', 'write one line per order to a .csv or .ndjson file')
      .option(
        '--rejects <file>',
        "write the invalid and failed orders back in the input's format, to fix and import again",
      )
      .addHelpText(
        'after',
        '\nExit codes: 0 every order created or already created, 2 invalid input (nothing sent), 3 credentials\nrefused, 4 some orders not created (see --report), 130 interrupted (run it again to continue).',
      )
      .action(async (input: string, opts: Omit<import('./import.js').ImportOptions, 'input'>) => {
        const { run } = await import('./import.js');
        await run({ ...opts, input }, ctx);
      }),
    [
      'ordercli orders import orders.csv',
      'ordercli orders import orders.csv --dry-run',
      'ordercli orders import orders.ndjson --concurrency 16 --report report.csv --rejects rejects.ndjson',
      'cat orders.ndjson | ordercli orders import - --format ndjson --journal orders.journal.ndjson',
      'ordercli orders import orders.csv --retry-unknown   # after checking the unknown orders at the service',
    ],
  );

  withExamples(
    orders
      .command('get')
      .description('fetch one order with GET /api/v1/orders/{id}')
      .argument('<id>', 'the order id the service returned')
      .action(async (id: string) => {
        const { run } = await import('./get.js');
        await run({ id }, ctx);
      }),
    ['ordercli orders get 1001', 'ordercli orders get 1001 --json | jq .status'],
  );
}
