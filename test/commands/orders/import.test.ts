// `orders import` through the CLI against a real sandbox: exit codes, re-runs, faults, outputs.
// The order ledger (in the test's config folder) is the only record: nothing is written beside
// the input unless asked.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { startSandbox } from '../../../src/sandbox/server.js';
import { type RunOptions, runCli, tempDir } from '../../support/cli.js';
import {
  createdCounts,
  csvOf,
  externalId,
  ledgerHistory,
  orders,
  postsTo,
  readCsvReport,
  readLines,
  writeNdjson,
} from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

/** The config folder of this test's runs: one order ledger, as one machine has. */
let config: string;
beforeEach(() => {
  config = tempDir('ordercli-config-');
});

/** The order ledger's folder of this test's runs. */
function ledgerRoot(): string {
  return join(config, 'ledger');
}

/** Runs the program in this process with this test's config folder (so its order ledger). */
function run(args: string[], options: RunOptions = {}) {
  return runCli(args, { ...options, env: { ORDERCLI_CONFIG_DIR: config, ...options.env } });
}

function cli(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'import', ...args];
}

describe('orders import: success and re-runs', () => {
  it('creates every order once and exits 0, with a summary on stderr and nothing on stdout', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(30));
    const result = await run(cli(input, '--concurrency', '4'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /Import of .*orders\.ndjson → http:\/\/127\.0\.0\.1:\d+: finished in [\d.]+ s, 30 orders sent \([\d,]+\/s\)/,
    );
    expect(result.stderr).toMatch(/created\s+30/);
    const counts = createdCounts(sandbox);
    expect(counts.size).toBe(30);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    // Nothing beside the input: the order ledger records each one, with its input and line.
    expect(readdirSync(dir)).toEqual(['orders.ndjson']);
    const history = await ledgerHistory(ledgerRoot(), sandbox.url, [input]);
    expect([...history.values()].map((entry) => [entry.status, entry.input])).toEqual(
      Array(30).fill(['created', input]),
    );
    expect(history.get(externalId(7))?.line).toBe(7);
    expect(result.stderr).toContain(`  history  ordercli orders journal ${input}\n`);
  });

  it("a CSV import leaves its input's folder with the input alone, and with --report the report only", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'orders.csv'), csvOf(5));
    const plain = await run(cli('orders.csv', '--json'), { cwd: dir });
    expect(plain.code, plain.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual(['orders.csv']);
    // The input's identity in the ledger: its path relative to the working directory.
    expect(JSON.parse(plain.stdout)).toMatchObject({ journal: 'orders.csv', counts: { created: 5 } });
    expect(plain.stderr).toContain('  history  ordercli orders journal orders.csv\n');

    writeFileSync(join(dir, 'orders.csv'), csvOf(8));
    const reported = await run(cli('orders.csv', '--report', 'report.csv'), { cwd: dir });
    expect(reported.code, reported.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['orders.csv', 'report.csv']);
    expect(createdCounts(sandbox).size).toBe(8);
  });

  it('a re-run skips the orders already created and sends nothing', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(12));
    expect((await run(cli(input))).code).toBe(0);
    const before = postsTo(sandbox);
    const again = await run(cli(input, '--json'));
    expect(again.code, again.stderr).toBe(0);
    expect(postsTo(sandbox)).toBe(before);
    const result = JSON.parse(again.stdout);
    expect(result.counts).toMatchObject({ total: 12, created: 0, skipped: 12 });
    expect(result.orders[0]).toMatchObject({ externalId: externalId(1), status: 'skipped', id: 10001 });
    expect(sandbox.orders()).toHaveLength(12);
  });

  it('a dry run after an import says what the order ledger already holds, and sends nothing', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(6));
    expect((await run(cli(input))).code).toBe(0);
    const posts = postsTo(sandbox);
    const dry = await run(cli(input, '--dry-run'));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(
      `The order ledger of ${sandbox.url} records 6 of these orders as created (a real run skips them) and 0 as in doubt or being sent (a real run does not send them).`,
    );
    expect(postsTo(sandbox)).toBe(posts);
    // Its --json has no journal: there is none.
    const json = await run(cli(input, '--dry-run', '--json'));
    expect(JSON.parse(json.stdout)).toMatchObject({ ledger: { created: 6, inDoubt: 0 } });
    expect(JSON.parse(json.stdout)).not.toHaveProperty('journal');
  });

  it('skips an order already created even if it changed, and says so', async () => {
    const dir = tempDir();
    const list = orders(3);
    const input = writeNdjson(dir, 'orders.ndjson', list);
    expect((await run(cli(input))).code).toBe(0);
    (list[1] as { externalReference: string }).externalReference = 'CHANGED';
    writeNdjson(dir, 'orders.ndjson', list);
    const report = join(dir, 'report.ndjson');
    const again = await run(cli(input, '--report', report));
    expect(again.code).toBe(0);
    expect(readLines(report)[1]).toMatchObject({
      status: 'skipped',
      message: expect.stringContaining('changed'),
    });
    expect(sandbox.orders()).toHaveLength(3);
  });

  it('the same input sent to another service is sent there once, with no --journal: the ledger keeps services apart', async () => {
    const other = await startSandbox({ port: 0, quiet: true });
    try {
      const dir = tempDir();
      const input = writeNdjson(dir, 'orders.ndjson', orders(5));
      expect((await run(cli(input))).code).toBe(0);
      const args = ['--base-url', other.url, '--token', other.tokens.partner, 'orders', 'import', input];
      const elsewhere = await run(args);
      expect(elsewhere.code, elsewhere.stderr).toBe(0);
      expect(other.orders()).toHaveLength(5);
      const again = await run([...args, '--json']);
      expect(JSON.parse(again.stdout).counts).toMatchObject({ skipped: 5, created: 0 });
      expect(other.orders()).toHaveLength(5);
      expect(sandbox.orders()).toHaveLength(5);
      expect(readdirSync(dir)).toEqual(['orders.ndjson']);
    } finally {
      await other.close();
    }
  });
});

describe('orders import: invalid input', () => {
  const badCsv = [
    'externalId,contact.internalReferenceId,item.internalReferenceId,item.orderedQuantity',
    'A-1,301,401,2',
    'A-2,301,401,0',
    'A-3,,402,1',
    'A-4,302,403,1',
  ].join('\n');

  it('exits 2 listing every problem as file:line: field: message, sends nothing, writes --rejects', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'orders.csv'), `${badCsv}\n`);
    const result = await run(cli('orders.csv', '--rejects', 'rejects.csv'), { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('2 of 4 orders in orders.csv are invalid; nothing was sent.');
    expect(result.stderr).toMatch(/orders\.csv:3: item\.orderedQuantity: /);
    expect(result.stderr).toMatch(/orders\.csv:4: contact: /);
    expect(postsTo(sandbox)).toBe(0);
    expect(readFileSync(join(dir, 'rejects.csv'), 'utf8')).toBe(
      'externalId,contact.internalReferenceId,item.internalReferenceId,item.orderedQuantity\nA-2,301,401,0\nA-3,,402,1\n',
    );
    expect(readdirSync(dir).sort()).toEqual(['orders.csv', 'rejects.csv']);
  });

  it('a rejects file that cannot be written: exit 2 before sending, or exit 1 after the summary', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'orders.csv'), `${badCsv}\n`);
    // A folder that cannot be created (a file in its way): refused before anything is read or sent.
    writeFileSync(join(dir, 'no'), '');
    const missing = await run(cli('orders.csv', '--skip-invalid', '--rejects', 'no/such/rejects.csv'), {
      cwd: dir,
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `Cannot create the folder ${join(dir, 'no/such')} for --rejects no/such/rejects.csv (${join(dir, 'no')} is a file, not a folder); nothing was sent.`,
    );
    // A folder in place of the file: its own reason, in words.
    mkdirSync(join(dir, 'taken.csv'));
    const folder = await run(cli('orders.csv', '--skip-invalid', '--rejects', 'taken.csv'), { cwd: dir });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain(
      'Cannot write the rejects file taken.csv (EISDIR: it is a folder); nothing was sent.',
    );
    expect(postsTo(sandbox)).toBe(0);
    if (!existsSync('/dev/full')) return;
    // Invalid input: the problems stay the error (exit 2), the rejects' failure said below them.
    const invalid = await run(cli('orders.csv', '--rejects', '/dev/full'), { cwd: dir });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/orders\.csv:3: item\.orderedQuantity: /);
    expect(invalid.stderr).toContain('The rejects file /dev/full could not be written: ENOSPC.');
    expect(postsTo(sandbox)).toBe(0);
    // A full disk at the end: the orders were sent and are in the ledger; the summary, then exit 1.
    // The report too (a link named .csv to the device).
    symlinkSync('/dev/full', join(dir, 'report.csv'));
    const full = await run(
      cli('orders.csv', '--skip-invalid', '--rejects', '/dev/full', '--report', 'report.csv'),
      { cwd: dir },
    );
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/created\s+2/);
    expect(full.stderr).toContain(
      `The import ran to its end, but the report ${join(dir, 'report.csv')} (ENOSPC) and the rejects file /dev/full (ENOSPC) could not be written.`,
    );
    expect(full.stderr).not.toContain('unexpectedly');
    expect(postsTo(sandbox)).toBe(2);
  });

  it('--skip-invalid sends the valid ones, reports the others, and exits 4', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'orders.csv'), `${badCsv}\n`);
    const result = await run(cli('orders.csv', '--skip-invalid', '--report', 'report.csv'), { cwd: dir });
    expect(result.code, result.stderr).toBe(4);
    expect([...createdCounts(sandbox).keys()].sort()).toEqual(['A-1', 'A-4']);
    const report = readCsvReport(join(dir, 'report.csv'));
    expect(report.map((r) => [r.externalId, r.status, r.line])).toEqual([
      ['A-1', 'created', '2'],
      ['A-2', 'invalid', '3'],
      ['A-3', 'invalid', '4'],
      ['A-4', 'created', '5'],
    ]);
    expect(report[0]).toMatchObject({
      httpStatus: '201',
      id: expect.stringMatching(/^\d+$/),
      code: expect.stringMatching(/^SO-/),
    });
    expect(report[1]!.message).toContain('orderedQuantity');
    expect(result.stderr).toMatch(/invalid\s+2/);
  });

  it('--dry-run validates the whole input and sends nothing', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'orders.csv'), csvOf(25));
    const result = await run(cli('orders.csv', '--dry-run', '--json'), { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('25 orders read, 25 valid, 0 invalid; nothing was sent.');
    expect(JSON.parse(result.stdout)).toMatchObject({
      dryRun: true,
      counts: { total: 25, valid: 25, invalid: 0 },
    });
    // One GET that checks the token, as the real run would need it; no order sent.
    expect(sandbox.requests.map((entry) => `${entry.method} ${entry.path}`)).toEqual([
      'GET /api/v1/webhooks/available',
    ]);
    // --offline: the input alone, no request at all.
    const offline = await run(cli('orders.csv', '--dry-run', '--offline'), { cwd: dir });
    expect(offline.code, offline.stderr).toBe(0);
    expect(sandbox.requests).toHaveLength(1);
  });

  it('refuses a bad --concurrency or --report name before reading anything (exit 2)', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(2));
    const zero = await run(cli(input, '--concurrency', '0'));
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--concurrency must be a whole number from 1 to 256');
    const report = await run(cli(input, '--report', 'report.txt'));
    expect(report.code).toBe(2);
    expect(report.stderr).toContain('name the file .csv, .ndjson or .xml (JUnit)');
    expect(sandbox.requests).toHaveLength(0);
  });

  it('standard input without --format and --journal names both in one message (exit 2), before reading it', async () => {
    const text = JSON.stringify(orders(1)[0]);
    const both = await run(cli('-'), { stdin: text, cwd: tempDir() });
    expect(both.code).toBe(2);
    expect(both.stderr).toBe(
      'error: Importing standard input needs --format csv, json, ndjson or xlsx (standard input has no file name to tell its format) and --journal <name> (the name of its history in the order ledger, which orders journal and orders resolve take).\n' +
        'hint: for example: cat <file> | ordercli orders import - --format ndjson --journal orders-from-stdin\n',
    );
    // A dry run names no history: only the format is missing.
    const dry = await run(cli('-', '--dry-run'), { stdin: text, cwd: tempDir() });
    expect(dry.code).toBe(2);
    expect(dry.stderr).toContain('error: Importing standard input needs --format csv, json, ndjson or xlsx');
    expect(dry.stderr).not.toContain('--journal');
    // refs contacts import reads its input the same way.
    const contacts = await run(
      ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'refs', 'contacts', 'import', '-'],
      { stdin: '', cwd: tempDir() },
    );
    expect(contacts.code).toBe(2);
    expect(contacts.stderr).toContain('needs --format csv, json, ndjson or xlsx');
    expect(contacts.stderr).toContain(
      'and --journal <name> (the name of its history in the order ledger, which orders journal and orders resolve take)',
    );
    expect(contacts.stderr).toContain('--journal contact-references-from-stdin');
    expect(sandbox.requests).toHaveLength(0);
  });

  it('standard input needs --journal, the name of its history (no file), and then imports', async () => {
    const dir = tempDir();
    const text = orders(4)
      .map((o) => JSON.stringify(o))
      .join('\n');
    const refused = await run(cli('-', '--format', 'ndjson'), { stdin: text, cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('needs --journal');
    const done = await run(cli('-', '--format', 'ndjson', '--journal', 'orders-from-stdin', '--json'), {
      stdin: text,
      cwd: dir,
    });
    expect(done.code, done.stderr).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ journal: 'orders-from-stdin', counts: { created: 4 } });
    expect(sandbox.orders()).toHaveLength(4);
    expect(readdirSync(dir)).toEqual([]);
    const history = await ledgerHistory(ledgerRoot(), sandbox.url, ['orders-from-stdin']);
    expect([...history.values()].map((entry) => [entry.status, entry.input, entry.journal])).toEqual(
      Array(4).fill(['created', '(stdin)', 'orders-from-stdin']),
    );
    // The same history named again: a re-run skips them all.
    const again = await run(cli('-', '--format', 'ndjson', '--journal', 'orders-from-stdin', '--json'), {
      stdin: text,
      cwd: dir,
    });
    expect(JSON.parse(again.stdout).counts).toMatchObject({ skipped: 4, created: 0 });
    expect(sandbox.orders()).toHaveLength(4);
  });
});

describe('orders import: the service refuses or fails', () => {
  it('exits 3 at the first 401, sending nothing more, and a re-run with good credentials creates all', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(20));
    const report = join(dir, 'report.ndjson');
    const refused = await run([
      '--base-url',
      sandbox.url,
      '--token',
      'not-a-token',
      'orders',
      'import',
      input,
      '--concurrency',
      '3',
      '--report',
      report,
    ]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('refused the credentials');
    expect(refused.stderr).toContain('Nothing more was sent after this');
    // Only requests already in flight at the first refusal (at most --concurrency) were sent.
    const posts = postsTo(sandbox);
    expect(posts).toBeGreaterThanOrEqual(1);
    expect(posts).toBeLessThanOrEqual(3);
    const lines = readLines(report);
    expect(lines).toHaveLength(20);
    expect(lines.filter((l) => l.status === 'failed' && l.httpStatus === 401)).toHaveLength(posts);
    const notSent = lines.filter((l) => l.status === 'not-sent' && String(l.message).startsWith('not sent'));
    expect(notSent).toHaveLength(20 - posts);

    const again = await run(cli(input));
    expect(again.code, again.stderr).toBe(0);
    expect(createdCounts(sandbox).size).toBe(20);
  });

  it('orders answered 500 are failed (exit 4, in --rejects); a re-run creates them, each once', async () => {
    const dir = tempDir();
    const list = orders(40);
    writeNdjson(dir, 'orders.ndjson', list);
    sandbox.setFaults({ failRate: 0.3 });
    const first = await run(cli('orders.ndjson', '--report', 'report.csv', '--rejects', 'rejects.ndjson'), {
      cwd: dir,
    });
    expect(first.code, first.stderr).toBe(4);
    const report = readCsvReport(join(dir, 'report.csv'));
    const failed = report.filter((r) => r.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) {
      expect(r).toMatchObject({
        httpStatus: '500',
        message:
          '500 Internal Server Error: The sandbox injected this 500 answer; the request was not processed.',
      });
    }
    expect(report.filter((r) => r.status === 'created')).toHaveLength(40 - failed.length);
    // The rejects are the failed orders exactly as written in the input.
    const rejects = readFileSync(join(dir, 'rejects.ndjson'), 'utf8').trimEnd().split('\n');
    expect(rejects).toEqual(failed.map((r) => JSON.stringify(list[Number(r.line) - 1])));
    expect(first.stderr).toContain('Orders not created:');

    sandbox.setFaults({ failRate: 0 });
    const second = await run(cli('orders.ndjson', '--json'), { cwd: dir });
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).counts).toMatchObject({
      created: failed.length,
      skipped: 40 - failed.length,
    });
    const counts = createdCounts(sandbox);
    expect(counts.size).toBe(40);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('429 with Retry-After: every request waits, and all orders are created once', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(16));
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/orders', kind: 'status', status: 429, retryAfter: 1, times: 3 },
    ]);
    const started = Date.now();
    const result = await run(cli(input, '--concurrency', '4'));
    expect(result.code, result.stderr).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(result.stderr).toMatch(/retried\s+3 requests \(3 after 429 Too Many Requests\)/);
    const counts = createdCounts(sandbox);
    expect(counts.size).toBe(16);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('a connection reset after processing is unknown: reported, never re-sent without --retry-unknown', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(10));
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-after', times: 1 }]);
    const first = await run(cli(input, '--concurrency', '2', '--json'));
    expect(first.code).toBe(4);
    const result = JSON.parse(first.stdout);
    expect(result.counts).toMatchObject({ created: 9, unknown: 1 });
    const unknown = result.orders.find((o: { status: string }) => o.status === 'unknown');
    expect(first.stderr).toContain('--retry-unknown');
    // The sandbox did create it: a re-send would make a second one.
    expect(createdCounts(sandbox).get(unknown.externalId)).toBe(1);

    const posts = postsTo(sandbox);
    const again = await run(cli(input, '--json'));
    expect(again.code).toBe(4);
    expect(postsTo(sandbox)).toBe(posts);
    expect(
      JSON.parse(again.stdout).orders.find(
        (o: { externalId: string }) => o.externalId === unknown.externalId,
      ),
    ).toMatchObject({
      status: 'unknown',
      message: expect.stringContaining('check at the service'),
    });
    expect(createdCounts(sandbox).get(unknown.externalId)).toBe(1);
  });

  it('names the first ten orders not created and says where the rest are: the report given, else orders journal and --report', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(14));
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-after', times: 12 }]);
    const first = await run(cli(input, '--concurrency', '1'));
    expect(first.code).toBe(4);
    expect(first.stderr).toContain(
      `  … and 2 more: ordercli orders journal ${input} lists those whose outcome is unknown; for a line each, run the same import again with --report report.csv (it skips those created and sends the failed ones again)\n`,
    );
    expect(first.stderr).not.toContain('(see --report)');

    const posts = postsTo(sandbox);
    const report = join(dir, 'report.csv');
    const again = await run(cli(input, '--report', report));
    expect(again.code).toBe(4);
    expect(postsTo(sandbox)).toBe(posts);
    expect(again.stderr).toContain(`  … and 2 more (see the report ${report})\n`);
    // Each order in doubt says what to do, first of all orders resolve; no stray space before a comma.
    expect(again.stderr).toContain(`${externalId(1)} unknown: outcome unknown since `);
    expect(again.stderr).toContain(
      '; not sent again: check at the service, then record what you found with ordercli orders resolve --created or --not-created (or send it again with --retry-unknown)\n',
    );
    expect(again.stderr).not.toMatch(/ ,/);
  });

  it('--retry-unknown sends an unknown order again (here: reset before the service read it)', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(6));
    sandbox.scriptFaults([{ method: 'POST', path: '/api/v1/orders', kind: 'reset-before-read', times: 1 }]);
    const first = await run(cli(input, '--concurrency', '1', '--json'));
    expect(first.code).toBe(4);
    const unknown = JSON.parse(first.stdout).orders.find((o: { status: string }) => o.status === 'unknown');
    expect(unknown.externalId).toBe(externalId(1));
    expect(createdCounts(sandbox).has(externalId(1))).toBe(false);

    const retried = await run(cli(input, '--retry-unknown', '--json'));
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout).counts).toMatchObject({ created: 1, skipped: 5 });
    expect(createdCounts(sandbox).get(externalId(1))).toBe(1);
    expect(createdCounts(sandbox).size).toBe(6);
  });

  it('exits 1 when the service cannot be reached, and reports the rest as not sent', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(5));
    const result = await run([
      '--base-url',
      'http://127.0.0.1:9',
      '--retries',
      '0',
      'orders',
      'import',
      input,
      '--concurrency',
      '1',
      '--report',
      join(dir, 'r.ndjson'),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Could not connect');
    const lines = readLines(join(dir, 'r.ndjson'));
    expect(lines.map((l) => l.status)).toEqual(Array(5).fill('not-sent'));
    expect(lines[0]!.message).toMatch(/^not sent: Could not connect/);
    // Nothing was sent, so the ledger holds no order of it in a state that blocks a re-run.
    expect((await ledgerHistory(ledgerRoot(), 'http://127.0.0.1:9')).size).toBe(0);
  });
});

describe('orders import: interruption, and journals of earlier releases', () => {
  it('Ctrl-C stops sending, waits for those in flight, leaves the ledger consistent, exits 130', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(60));
    sandbox.setFaults({ latencyMs: 200 });
    const controller = new AbortController();
    // Ctrl-C once the first order exists (not after a fixed delay, which a loaded machine could
    // overrun before anything was created, or after everything was).
    const interrupted = waitFor(() => sandbox.orders().length > 0, 10_000, 'the first order created').then(
      () => controller.abort(),
    );
    const result = await run(cli(input, '--concurrency', '4', '--report', join(dir, 'r.csv')), {
      signal: controller.signal,
    });
    await interrupted;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(
      /Interrupted: \d+ orders created, \d+ not sent; the order ledger holds every outcome: run the same command again to send the rest\./,
    );
    const created = createdCounts(sandbox);
    expect(created.size).toBeGreaterThan(0);
    expect(created.size).toBeLessThan(60);
    // No order is left claimed: each one in flight got its answer before the exit, and those not
    // sent are as if never claimed.
    const history = await ledgerHistory(ledgerRoot(), sandbox.url, [input]);
    expect([...history.keys()].sort()).toEqual([...created.keys()].sort());
    for (const [id, entry] of history) expect(entry.status, id).toBe('created');
    const report = readCsvReport(join(dir, 'r.csv'));
    expect(report).toHaveLength(60);
    expect(report.filter((r) => r.status === 'created')).toHaveLength(created.size);
    expect(report.filter((r) => r.status === 'not-sent')).toHaveLength(60 - created.size);
    expect(result.stderr).toMatch(/not sent +\d+ +the import stopped first/);

    sandbox.setFaults({ latencyMs: 0 });
    const rest = await run(cli(input));
    expect(rest.code, rest.stderr).toBe(0);
    const counts = createdCounts(sandbox);
    expect(counts.size).toBe(60);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('Ctrl-C while the service holds the requests: those in flight are abandoned in doubt, the run ends with 130', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(20));
    // Far longer than any test waits: only abandoning the requests ends the run.
    sandbox.setFaults({ latencyMs: 60_000 });
    const controller = new AbortController();
    const interrupted = waitFor(
      () => sandbox.requests.filter((r) => r.method === 'POST').length >= 2,
      10_000,
      'two requests held by the sandbox',
    ).then(() => controller.abort());
    try {
      const result = await run(cli(input, '--concurrency', '2', '--report', join(dir, 'r.csv')), {
        signal: controller.signal,
      });
      await interrupted;
      expect(result.code, result.stderr).toBe(130);
      const report = readCsvReport(join(dir, 'r.csv'));
      const unknown = report.filter((r) => r.status === 'unknown');
      expect(unknown.length).toBeGreaterThan(0);
      expect(unknown.length).toBeLessThanOrEqual(2);
      expect(unknown[0]?.message).toContain('interrupted after sending');
      expect(report.filter((r) => r.status === 'not-sent')).toHaveLength(20 - unknown.length);
      // In doubt, never sent again by a re-run.
      sandbox.setFaults({ latencyMs: 0 });
      const rest = await run(cli(input));
      expect(rest.code).toBe(4);
      expect(rest.stderr).toMatch(new RegExp(`unknown\\s+${unknown.length}`));
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
  });

  it('folds a journal an earlier release left beside the input: created ones skipped, in flight in doubt, renamed .folded', async () => {
    const dir = tempDir();
    const input = writeNdjson(dir, 'orders.ndjson', orders(4));
    const at = new Date().toISOString();
    const lines = [
      { event: 'run', baseUrl: sandbox.url, at },
      { event: 'sending', externalId: externalId(1), baseUrl: sandbox.url, at, bodyHash: 'x' },
      {
        event: 'created',
        externalId: externalId(1),
        baseUrl: sandbox.url,
        at,
        httpStatus: 201,
        id: 77,
        code: 'SO-77',
      },
      { event: 'sending', externalId: externalId(2), baseUrl: sandbox.url, at, bodyHash: 'y' },
    ];
    writeFileSync(
      `${input}.journal.ndjson`,
      `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"event":"sen`,
    );
    const result = await run(cli(input, '--json'));
    expect(result.code).toBe(4);
    const out = JSON.parse(result.stdout);
    expect(out.counts).toMatchObject({ skipped: 1, unknown: 1, created: 2 });
    expect(out.orders[0]).toMatchObject({ status: 'skipped', id: 77, code: 'SO-77' });
    expect(out.orders[1]).toMatchObject({ status: 'unknown' });
    expect([...createdCounts(sandbox).keys()].sort()).toEqual([externalId(3), externalId(4)]);
    const journal = `${realpathSync(input)}.journal.ndjson`;
    expect(result.stderr).toContain(
      `note: ${journal}, the journal of an earlier ordercli, was folded into the order ledger (2 orders it knew of and the ledger did not) and renamed ${journal}.folded; the ledger is the only record now.\n`,
    );
    expect(readdirSync(dir).sort()).toEqual(['orders.ndjson', 'orders.ndjson.journal.ndjson.folded']);
    // Folded once: the ledger alone refuses them now, and orders journal lists them with the input.
    const again = await run(cli(input, '--json'));
    expect(again.code).toBe(4);
    expect(again.stderr).not.toContain('note:');
    expect(JSON.parse(again.stdout).counts).toMatchObject({ skipped: 3, unknown: 1, created: 0 });
    expect(postsTo(sandbox)).toBe(2);
    const history = await ledgerHistory(ledgerRoot(), sandbox.url, [input]);
    expect(history.get(externalId(1))).toMatchObject({ status: 'created', id: 77 });
    expect(history.get(externalId(2))).toMatchObject({ status: 'in-doubt' });
  });
});

describe('orders import: progress on stderr', () => {
  it('draws a bar on a terminal and keeps stdout clean', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(40));
    sandbox.setFaults({ latencyMs: 30 });
    const result = await run(cli(input, '--concurrency', '2'), { tty: true, columns: 100 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('\r\x1b[2K[');
    expect(result.stderr).toMatch(/█+░*\] \d+\/40 +\d+% · \d+\/s · ETA /);
    expect(result.stdout).toBe('');
  });

  it('writes no terminal control codes when stderr is not a terminal', async () => {
    const input = writeNdjson(tempDir(), 'orders.ndjson', orders(10));
    const result = await run(cli(input));
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('\x1b');
  });
});
