// `orders create` through the CLI against a real sandbox: created, dry run, every refusal.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { FIXTURES } from '../../support/import-input.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });

const ORDER = JSON.parse(readFileSync(join(FIXTURES, 'order.json'), 'utf8')) as Record<string, unknown>;

function create(...args: string[]): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner, 'orders', 'create', ...args];
}

/** Writes an order file in a fresh folder and returns that folder (the cwd of the run). */
function orderFile(name: string, content: unknown): string {
  const dir = tempDir();
  writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return dir;
}

function posts(): number {
  return sandbox.requests.filter((request) => request.method === 'POST').length;
}

describe('orders create', () => {
  it('creates the order of a file and prints its code and id', async () => {
    const result = await runCli(create('--file', 'order.json'), { cwd: FIXTURES });
    expect(result.code, result.stderr).toBe(0);
    const [created] = sandbox.orders();
    expect(result.stdout).toBe(`Created order ${created?.code} (id ${created?.id}).\n`);
    expect(created).toMatchObject(ORDER);
    expect(posts()).toBe(1);
    // Sent as written: no field added or dropped, zip codes still text.
    expect(sandbox.requests[0]?.body).toEqual(ORDER);
  });

  it('prints the service’s answer with --json', async () => {
    const result = await runCli(['--json', ...create('--file', 'order.json')], { cwd: FIXTURES });
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(answer).toMatchObject({
      id: sandbox.orders()[0]?.id,
      code: sandbox.orders()[0]?.code,
      externalId: 'WEB-2001',
    });
  });

  it('reads the order from standard input with --file -', async () => {
    const result = await runCli(create('--file', '-'), { stdin: JSON.stringify(ORDER) });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Created order SO-\d{4}-000001 \(id \d+\)\.\n$/);
  });

  it('prints the exact body with --dry-run and sends nothing', async () => {
    const result = await runCli(create('--file', 'order.json', '--dry-run'), { cwd: FIXTURES });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(ORDER);
    expect(result.stderr).toContain('Nothing was sent.');
    expect(sandbox.requests).toEqual([]);
  });

  it('resolves item.productCode from the packaging references, in a dry run too', async () => {
    const cwd = orderFile('order.json', {
      ...ORDER,
      items: [
        { productCode: 'MIE-ACA', orderedQuantity: 2 },
        { productCode: 'EAU-GAZ', packagingName: 'Pack de 6 bouteilles 1 L', orderedQuantity: 5 },
      ],
    });
    const dry = await runCli(create('--file', 'order.json', '--dry-run'), { cwd });
    expect(dry.code, dry.stderr).toBe(0);
    expect((JSON.parse(dry.stdout) as { items: unknown }).items).toEqual([
      { internalReferenceId: 413, orderedQuantity: 2 },
      { internalReferenceId: 425, orderedQuantity: 5 },
    ]);
    expect(posts()).toBe(0);
    const result = await runCli(create('--file', 'order.json'), { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(sandbox.orders()[0]?.items).toEqual([
      { internalReferenceId: 413, orderedQuantity: 2 },
      { internalReferenceId: 425, orderedQuantity: 5 },
    ]);
  });

  it('refuses an invalid order with every problem, exit 2, nothing sent', async () => {
    const cwd = orderFile('bad-order.json', {
      externalId: 'X-1',
      contact: { internalReferenceId: 304, email: 'not-an-email' },
      deliveryAddress: { country: 'France' },
      items: [
        { internalReferenceId: 403, orderedQuantity: 0 },
        { orderedQuantity: 2 },
        { productCode: 'CRF-30', orderedQuantity: 1 },
        { internalReferenceId: 401, orderedQuantity: 2.5 },
      ],
    });
    const result = await runCli(create('--file', 'bad-order.json'), { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        'error: bad-order.json is not a valid order (6 problems); nothing was sent.',
        '  bad-order.json: items[2].productCode: product CRF-30 has 2 active packagings: name one with packagingName; candidates: 401 Crème fraîche épaisse 30 % MG (Pot 20 cl); 402 Crème fraîche épaisse 30 % MG (Carton de 12 pots 20 cl)',
        '  bad-order.json: contact.email: must be an e-mail address such as name@example.com',
        '  bad-order.json: deliveryAddress.country: must be a two-letter upper-case country code such as FR',
        '  bad-order.json: items[0].orderedQuantity: must be a whole number above zero, not 0',
        '  bad-order.json: items[1]: name the packaging with one of packaging, externalReferenceId, internalReferenceId',
        '  bad-order.json: items[3].orderedQuantity: must be a whole number, not number 2.5',
        '',
      ].join('\n'),
    );
    expect(posts()).toBe(0);
  });

  it('names the line and column of malformed JSON', async () => {
    const cwd = orderFile(
      'broken.json',
      '{\n  "externalId": "X-2",\n  "contact": {"internalReferenceId": 304}\n  "items": []\n}\n',
    );
    const result = await runCli(create('--file', 'broken.json'), { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'error: broken.json is not valid JSON (line 4, column 3); nothing was sent.\n' +
        '  broken.json:4: column 3: expected , or } after a property value, found "\\""\n',
    );
    expect(sandbox.requests).toEqual([]);
  });

  it.each([
    [
      'a list',
      '[{"externalId": "A"}]',
      'error: list.json must hold one order, a JSON object; nothing was sent.\n  list.json: it holds a list: import several orders with ordercli orders import\n',
    ],
    [
      'a number',
      '42',
      'error: list.json must hold one order, a JSON object; nothing was sent.\n  list.json: it holds number\n',
    ],
  ])('refuses a file holding %s', async (_what, content, stderr) => {
    const result = await runCli(create('--file', 'list.json'), { cwd: orderFile('list.json', content) });
    expect(result).toMatchObject({ code: 2, stderr });
  });

  it('refuses a missing file and a missing --file', async () => {
    let result = await runCli(create('--file', 'nope.json'), { cwd: tempDir() });
    expect(result).toMatchObject({
      code: 2,
      stderr: 'error: Cannot read nope.json: there is no such file.\n',
    });
    result = await runCli(create());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("required option '--file <path|->' not specified");
  });

  it('reports the service’s refusal with its details, exit 1', async () => {
    const cwd = orderFile('order.json', {
      ...ORDER,
      items: [{ internalReferenceId: 499, orderedQuantity: 1 }],
    });
    const result = await runCli(create('--file', 'order.json'), { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'error: The service rejected POST /api/v1/orders as invalid (422 Unprocessable Entity).',
    );
    expect(result.stderr).toContain('items[0].internalReferenceId: no packaging reference has id 499');
    expect(result.stdout).toBe('');
  });

  it('works as installed (the built binary)', async () => {
    const result = await runBin(create('--file', 'order.json'), { cwd: FIXTURES });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `Created order ${sandbox.orders()[0]?.code} (id ${sandbox.orders()[0]?.id}).\n`,
    );
  });
});
