// Hostile and huge inputs to `orders import` and `orders create`: refused with exit 2 before
// anything is sent (the sandbox receives nothing), with short messages that never carry a
// control character of the input to the terminal.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { CSV_HEADER, csvOf, order } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

function orders(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', ...args];
}

function write(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

/** The header, one valid order, then `row` (line 3). */
function csvWith(row: string): string {
  return `${csvOf(1)}${row}\n`;
}

/** One CSV order (externalId BIG) of `items` item rows: about 12 bytes of body per row. */
function csvOfItems(items: number): string {
  const rows = [`${CSV_HEADER}`, 'BIG,PO-1,301,Client,401,1'];
  for (let i = 1; i < items; i++) rows.push('BIG,,,,402,1');
  return `${rows.join('\n')}\n`;
}

function expectNothingSent(): void {
  expect(sandbox.requests.map((request) => `${request.method} ${request.path}`)).toEqual([]);
}

describe('size limits', () => {
  it('refuses a CSV with a 50 MiB cell (exit 2, file:line: field, nothing sent) without holding it', async () => {
    const cell = Buffer.alloc(50 * 1024 * 1024, 'x');
    const input = write(
      'big-cell.csv',
      Buffer.concat([Buffer.from(csvWith('EXT-2,PO-2,301,"')), cell, Buffer.from('",401,1\n')]),
    );
    const result = await runBin(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `${input}:3: customer.name: is larger than 1 MiB, over the 64 KiB limit for one cell`,
    );
    expect(result.stderr).toContain('--max-cell-bytes');
    expect(result.stderr.length).toBeLessThan(1000);
    expectNothingSent();
  });

  it('refuses a CSV cell over 64 KiB, and takes it with --max-cell-bytes', async () => {
    const input = write('cell.csv', csvWith(`EXT-2,PO-2,301,${'é'.repeat(40 * 1024)},401,1`));
    const refused = await runCli(orders('import', input));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(
      `${input}:3: customer.name: is 80 KiB long, over the 64 KiB limit for one value: shorten it, or raise the limit with --max-cell-bytes`,
    );
    expect(refused.stderr.length).toBeLessThan(1000);
    expectNothingSent();

    const taken = await runCli(orders('import', input, '--max-cell-bytes', '100KiB'));
    expect(taken.code, taken.stderr).toBe(0);
    expect(sandbox.orders()).toHaveLength(2);
  });

  it('refuses an order over 1 MiB (a CSV order of many rows), and validates it with --max-order-bytes', async () => {
    const input = write('many-items.csv', csvOfItems(30_000));
    const refused = await runCli(orders('import', input));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `${input}:2: the order's JSON body is 1\\.\\d MiB, over the 1 MiB limit: split the order, or raise the limit with --max-order-bytes`,
      ),
    );
    expectNothingSent();

    const raised = await runCli(orders('import', input, '--max-order-bytes', '4MiB', '--dry-run'));
    expect(raised.code, raised.stderr).toBe(0);
    expect(raised.stderr).toContain('1 order read, 1 valid, 0 invalid');
  });

  it('refuses an NDJSON line over 1 MiB without reading it whole, with the other orders listed', async () => {
    const big = { ...order(2), customer: { name: 'x'.repeat(3 * 1024 * 1024) } };
    const input = write('big.ndjson', `${JSON.stringify(order(1))}\n${JSON.stringify(big)}\n`);
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `${input}:2: this line is larger than 1 MiB, the largest order ordercli sends: split the order, or raise the limit with --max-order-bytes`,
    );
    expect(result.stderr.length).toBeLessThan(1000);
    expectNothingSent();
  });

  it('refuses a JSON array element over 1 MiB and a string value over 64 KiB in another', async () => {
    const big = {
      ...order(1),
      items: Array.from({ length: 30_000 }, () => ({ internalReferenceId: 401, orderedQuantity: 1 })),
    };
    const long = { ...order(2), externalReference: 'y'.repeat(70 * 1024) };
    const input = write('orders.json', JSON.stringify([big, long], null, 1));
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`${input}:2: this order is larger than 1 MiB`);
    expect(result.stderr).toMatch(
      /orders\.json:\d+: externalReference: is 70 KiB long, over the 64 KiB limit for one value/,
    );
    expectNothingSent();
  });

  it('orders create refuses a file over 1 MiB and a value over 64 KiB; the options raise both', async () => {
    const big = write(
      'big.json',
      JSON.stringify({ ...order(1), externalReference: 'z'.repeat(1100 * 1024) }),
    );
    const refused = await runCli(orders('create', '--file', big));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`${big} is larger than 1 MiB; nothing was sent.`);
    const long = write(
      'long.json',
      JSON.stringify({ ...order(1), externalReference: 'z'.repeat(100 * 1024) }),
    );
    const refusedValue = await runCli(orders('create', '--file', long));
    expect(refusedValue.code, refusedValue.stderr).toBe(2);
    expect(refusedValue.stderr).toContain(
      `${long}: externalReference: is 100 KiB long, over the 64 KiB limit`,
    );
    expectNothingSent();

    const dry = await runCli(
      orders('create', '--file', big, '--max-order-bytes', '2MiB', '--max-cell-bytes', '2MiB', '--dry-run'),
    );
    expect(dry.code, dry.stderr).toBe(0);
    const created = await runCli(orders('create', '--file', long, '--max-cell-bytes', '128KiB'));
    expect(created.code, created.stderr).toBe(0);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('refuses a limit option that is not a size', async () => {
    const input = write('o.csv', csvOf(1));
    const result = await runCli(orders('import', input, '--max-cell-bytes', 'lots'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--max-cell-bytes takes a size in bytes such as 1048576, 64KiB or 2MiB, not "lots".',
    );
  });
});

describe('encodings other than UTF-8', () => {
  const text = `${csvOf(2)}`;
  it.each([
    [
      'UTF-16LE with a byte order mark',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
      'little-endian, with a byte order mark',
      'iconv -f UTF-16 -t UTF-8',
    ],
    [
      'UTF-16LE without a byte order mark',
      Buffer.from(text, 'utf16le'),
      'little-endian, without a byte order mark',
      'iconv -f UTF-16LE -t UTF-8',
    ],
  ])('refuses a CSV in %s, saying how to save it as UTF-8', async (_name, bytes, what, iconv) => {
    const input = write('unicode.csv', bytes);
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `error: ${input} is UTF-16 text (${what}), but ordercli reads UTF-8: save it from Excel as "CSV UTF-8 (Comma delimited)" (not "Unicode Text"), or convert it with ${iconv}; nothing was sent.`,
    );
    expect(result.stderr).toContain(`${input}:1: the file is UTF-16 text`);
    expect(result.stderr).not.toContain('\u0000');
    expect(result.stderr).not.toContain('does not know');
    expectNothingSent();
  });

  it('refuses a Windows-1252 CSV, naming the line of the first byte that is not UTF-8', async () => {
    const latin1 = Buffer.from(
      `${csvOf(2)}EXT-3,PO-3,301,Soci\u00e9t\u00e9 G\u00e9n\u00e9rale,401,1\n`,
      'latin1',
    );
    const input = write('excel-1252.csv', latin1);
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `error: ${input} is not UTF-8 text (line 4 has a byte UTF-8 does not allow): save it from Excel as "CSV UTF-8 (Comma delimited)", or convert it with iconv -f WINDOWS-1252 -t UTF-8`,
    );
    expect(result.stderr).toContain(`${input}:4: byte 0xE9 ("é" in Windows-1252) is not UTF-8`);
    expectNothingSent();
  });

  it('refuses a byte that is not UTF-8 far into a large file (not in the first chunk read)', async () => {
    const rows = csvOf(3000);
    const input = write(
      'late.csv',
      Buffer.concat([Buffer.from(rows), Buffer.from('EXT-9999,PO,301,Caf\u00e9,401,1\n', 'latin1')]),
    );
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(`${input}:3002: byte 0xE9 ("é" in Windows-1252) is not UTF-8`);
    expectNothingSent();
  });

  it('refuses UTF-16 NDJSON, a Windows-1252 JSON array and a UTF-16 file to orders create', async () => {
    const ndjson = write(
      'orders.ndjson',
      Buffer.concat([
        Buffer.from([0xfe, 0xff]),
        Buffer.from(`${JSON.stringify(order(1))}\n`, 'utf16le').swap16(),
      ]),
    );
    const one = await runCli(orders('import', ndjson));
    expect(one.code, one.stderr).toBe(2);
    expect(one.stderr).toContain(
      `${ndjson} is UTF-16 text (big-endian, with a byte order mark), but ordercli reads UTF-8: save it as UTF-8, or convert it with iconv -f UTF-16 -t UTF-8`,
    );

    const json = write(
      'orders.json',
      Buffer.from(
        JSON.stringify([order(1), { ...order(2), externalReference: 'Soci\u00e9t\u00e9' }], null, 2),
        'latin1',
      ),
    );
    const two = await runCli(orders('import', json));
    expect(two.code, two.stderr).toBe(2);
    expect(two.stderr).toMatch(/orders\.json:\d+: byte 0x[0-9A-F]{2} \(".+" in Windows-1252\) is not UTF-8/);

    const single = write('order.json', Buffer.from(JSON.stringify(order(1)), 'utf16le'));
    const three = await runCli(orders('create', '--file', single));
    expect(three.code, three.stderr).toBe(2);
    expect(three.stderr).toContain(`${single} is UTF-16 text (little-endian, without a byte order mark)`);
    expectNothingSent();
  });
});

describe('control characters and long values in messages', () => {
  it('escapes an ESC sequence in a header and in a cell', async () => {
    const header = CSV_HEADER.replace('customer.name', 'customer\u001b[2J\u001b[31m.nom');
    const input = write('esc.csv', `${header}\nEXT-1,PO-1,301,Client,401,1\n`);
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain('\u001b');
    expect(result.stderr).toContain('("customer\\u001b[2J\\u001b[31m.nom")');
    expect(result.stderr).toContain(
      `${input}:1: customer\\u001b[2J\\u001b[31m.nom: is not a column ordercli knows`,
    );

    const cells = write('esc-cell.csv', `${CSV_HEADER}\nEXT-1,PO-1,301,Client,401,\u001b]0;owned\u0007\t3\n`);
    const cell = await runCli(orders('import', cells));
    expect(cell.code, cell.stderr).toBe(2);
    expect(cell.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(cell.stderr).toContain(
      `${cells}:2: item.orderedQuantity: must be a whole number above zero, not "\\u001b]0;owned\\u0007\\t3"`,
    );
    expectNothingSent();
  });

  it('escapes control characters in quoted values and in the problem list of a partial import', async () => {
    const id = 'EXT-\u001b[2J';
    const input = write(
      'esc.ndjson',
      [
        { ...order(1), externalId: id },
        { ...order(2), externalId: id },
        { ...order(3), externalId: `${id}-3`, items: [] },
      ]
        .map((o) => JSON.stringify(o))
        .join('\n'),
    );
    const result = await runCli(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain('\u001b');
    expect(result.stderr).toContain(
      `${input}:2: externalId: "EXT-\\u001b[2J" is also the externalId of the order on line 1`,
    );
    const skipped = await runCli(orders('import', input, '--skip-invalid'));
    expect(skipped.code, skipped.stderr).toBe(4);
    expect(skipped.stderr).not.toContain('\u001b');
    expect(skipped.stderr).toContain(`${input}:3 EXT-\\u001b[2J-3 invalid`);
    expect(sandbox.orders()).toHaveLength(1);
  });

  it('quotes a 900 KB header cell as a short excerpt, and lists thousands of unknown columns briefly', async () => {
    const long = write('long-header.csv', `externalId,${'h'.repeat(900_000)}\nEXT-1,x\n`);
    const one = await runCli(orders('import', long));
    expect(one.code, one.stderr).toBe(2);
    expect(one.stderr).toContain(`"${'h'.repeat(60)}…"`);
    expect(one.stderr.length).toBeLessThan(2000);

    const many = Array.from({ length: 20_000 }, (_, i) => `column${i}`).join(',');
    const wide = write('wide.csv', `externalId,${many}\nEXT-1\n`);
    const two = await runCli(orders('import', wide));
    expect(two.code, two.stderr).toBe(2);
    expect(two.stderr).toContain(
      'has 20000 columns ordercli does not know ("column0", "column1", "column2", "column3", "column4", and 19995 more)',
    );
    expect(two.stderr).toContain('… and 19980 more problems with the header');
    expect(two.stderr.length).toBeLessThan(5000);
    expectNothingSent();
  });

  it('the binary answers a 5 MB header line with a short error', async () => {
    const input = write('huge-header.csv', `externalId,${'H'.repeat(5 * 1024 * 1024)}\nEXT-1,x\n`);
    const result = await runBin(orders('import', input));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `The first line of ${input} is longer than 1 MiB, too long to be the header of a CSV file of orders; nothing was sent.`,
    );
    expect(result.stderr.length).toBeLessThan(1000);
    expectNothingSent();
  });
});
