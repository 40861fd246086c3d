// `refs contacts import` against a real sandbox: validation first, the ledger keyed by
// contact.externalReference (nothing written beside the input), the service's 409 for an existing one (`exists`, with its id: no
// failure), in-doubt records, report, rejects.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ExcelJS from 'exceljs';
import { beforeEach, describe, expect, it } from 'vitest';
import { type RunOptions, runBin, runCli, tempDir } from '../../support/cli.js';
import { ledgerHistory, readLines } from '../../support/orders.js';
import { useSandbox } from '../../support/sandbox.js';
import { readSheet } from '../../support/workbooks.js';
import { parseXml } from '../../support/xml.js';

const sandbox = useSandbox();

const HEADER = 'contact.externalReference;contact.firstName;contact.lastName;contact.email;customer.name';
const JEANNE = 'PART-C-0101;Jeanne;Roux;jeanne.roux@epicerie-roux.fr;Épicerie Roux';
const HUGO = 'PART-C-0102;Hugo;Marchand;hugo.marchand@fromagerie-marchand.fr;Fromagerie Marchand';
/** Line 4: an e-mail address without @. */
const INES = 'PART-C-0103;Inès;Dubois;ines.dubois-chez-dubois.fr;Boulangerie Dubois';
/** Line 5: the seed's contact reference 301. */
const CAMILLE = 'PART-C-0001;Camille;Rousseau;camille.rousseau@maison-rousseau.fr;Maison Rousseau';
/** Line 6: no last name, no customer. */
const LEA = 'PART-C-0104;Léa;;lea.fabre@cave-fabre.fr;';

const MIXED = `${[HEADER, JEANNE, HUGO, INES, CAMILLE, LEA].join('\r\n')}\r\n`;

/** The config folder of this test's runs: one ledger, as one machine has. */
let config: string;
beforeEach(() => {
  config = tempDir('ordercli-config-');
});

/** Runs the program in this process with this test's config folder (unless the test gives one). */
function run(args: string[], options: RunOptions = {}) {
  return runCli(args, { ...options, env: { ORDERCLI_CONFIG_DIR: config, ...options.env } });
}

/** Runs the built binary with this test's config folder. */
function bin(args: string[], options: Parameters<typeof runBin>[1] = {}) {
  return runBin(args, { ...options, env: { ORDERCLI_CONFIG_DIR: config, ...options.env } });
}

function cli(...args: string[]): string[] {
  return [
    '--base-url',
    sandbox.url,
    '--token',
    sandbox.tokens.partner,
    'refs',
    'contacts',
    'import',
    ...args,
  ];
}

function write(name: string, text: string): { dir: string; path: string } {
  const dir = tempDir();
  const path = join(dir, name);
  writeFileSync(path, text);
  return { dir, path };
}

const posts = () =>
  sandbox.requests.filter(
    (request) => request.method === 'POST' && request.path === '/api/v1/contact_references',
  ).length;

/** The contact references the sandbox holds with this external reference. */
async function heldWith(externalReference: string): Promise<{ id: number }[]> {
  const list = await run([
    '--base-url',
    sandbox.url,
    '--token',
    sandbox.tokens.partner,
    'refs',
    'contacts',
    'list',
    '--json',
  ]);
  return (JSON.parse(list.stdout) as { id: number; contact: { externalReference: string } }[]).filter(
    (record) => record.contact.externalReference === externalReference,
  );
}

function csvReport(path: string): Record<string, string>[] {
  const [header, ...rows] = readFileSync(path, 'utf8').trimEnd().split('\r\n');
  const columns = header!.split(',');
  return rows.map((row) => {
    const cells = row.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((cell) =>
      cell
        .replace(/,$/, '')
        .replace(/^"(.*)"$/, '$1')
        .replace(/""/g, '"'),
    );
    return Object.fromEntries(columns.map((column, i) => [column, cells[i] ?? '']));
  });
}

describe('refs contacts import: validation first', () => {
  it('refuses a file with invalid rows, naming file, line and column, and sends nothing (exit 2)', async () => {
    const { path } = write('contacts.csv', MIXED);
    const result = await run(cli(path));
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      'error: 2 of 5 contact references in ' +
        path +
        ' are invalid; nothing was sent. Fix them, or pass --skip-invalid to send the 3 valid ones.',
    );
    expect(result.stderr).toContain(
      `${path}:4: contact.email: must be an e-mail address such as name@example.com`,
    );
    expect(result.stderr).toContain(`${path}:6: contact.lastName: is required`);
    expect(result.stderr).toContain(`${path}:6: customer.name: is required`);
    expect(posts()).toBe(0);
  });

  it('refuses a column that is not a contact reference field, listing the columns', async () => {
    const { path } = write('contacts.csv', `${HEADER};item.orderedQuantity\n${JEANNE};3\n`);
    const result = await run(cli(path));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${path}:1: item.orderedQuantity: is not a column ordercli knows`);
    expect(result.stderr).toContain(
      'the columns are: contact.externalReference, contact.firstName, contact.lastName, contact.email, customer.name',
    );
    expect(posts()).toBe(0);
  });

  it('refuses the same contact.externalReference twice in one input', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${JEANNE}\n${HUGO}\n${JEANNE}\n`);
    const result = await run(cli(path));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${path}:4: contact.externalReference: "PART-C-0101" is also the contact.externalReference of the contact reference on line 2: each contact reference needs its own`,
    );
    expect(posts()).toBe(0);
  });

  it('a dry run counts, sends nothing, and then says what the ledger holds', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${JEANNE}\n${HUGO}\n`);
    const dry = await run(cli(path, '--dry-run'));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(
      `Dry run of ${path}: 2 contact references read, 2 valid, 0 invalid; nothing was sent.`,
    );
    expect(posts()).toBe(0);
    const imported = await run(cli(path));
    expect(imported.code).toBe(0);
    // Without --report the ids are not shown: the note says where they are.
    expect(imported.stderr).toContain(
      'note: the ids of the contact references created are in ordercli refs contacts list, or in a report: run the same command again with --report ids.csv (nothing is sent again).',
    );
    const again = await run(cli(path, '--dry-run'));
    expect(again.stderr).toContain(
      `The order ledger of ${sandbox.url} records 2 of these contact references as created (a real run skips them) and 0 as in doubt or being sent (a real run does not send them).`,
    );
    expect(readdirSync(dirname(path))).toEqual(['contacts.csv']);
  });
});

describe('refs contacts import: sending', () => {
  it('sends the valid rows once each, with exactly the body of refs contacts add; the existing one (409) is `exists` with its id, and only the invalid ones make exit 4', async () => {
    const { dir, path } = write('contacts.csv', MIXED);
    const report = join(dir, 'report.csv');
    const rejects = join(dir, 'rejects.csv');
    const result = await run(cli(path, '--skip-invalid', '--report', report, '--rejects', rejects));
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toMatch(/finished in [\d.]+ s, 3 contact references sent/);
    expect(result.stderr).toMatch(/created\s+2\n/);
    expect(result.stderr).toMatch(/exists\s+1\s+already at the service: not sent again, no failure\n/);
    expect(result.stderr).toMatch(/failed\s+0\n/);
    expect(result.stderr).toContain('Contact references not created:');
    expect(result.stderr).not.toContain('PART-C-0001 failed');

    const bodies = sandbox.requests
      .filter((request) => request.method === 'POST')
      .map((request) => request.body);
    expect(bodies).toContainEqual({
      contact: {
        externalReference: 'PART-C-0101',
        firstName: 'Jeanne',
        lastName: 'Roux',
        email: 'jeanne.roux@epicerie-roux.fr',
      },
      customer: { name: 'Épicerie Roux' },
    });
    expect(bodies).toHaveLength(3);

    const jeanne = await heldWith('PART-C-0101');
    const hugo = await heldWith('PART-C-0102');
    expect(jeanne).toHaveLength(1);
    expect(hugo).toHaveLength(1);
    expect(await heldWith('PART-C-0001')).toHaveLength(1);

    // The report gives the new ids, ready to paste as internalReferenceId.
    expect(csvReport(report)).toEqual([
      {
        'contact.externalReference': 'PART-C-0101',
        status: 'created',
        httpStatus: '201',
        id: String(jeanne[0]!.id),
        message: '',
        line: '2',
      },
      {
        'contact.externalReference': 'PART-C-0102',
        status: 'created',
        httpStatus: '201',
        id: String(hugo[0]!.id),
        message: '',
        line: '3',
      },
      {
        'contact.externalReference': 'PART-C-0103',
        status: 'invalid',
        httpStatus: '',
        id: '',
        message: 'contact.email: must be an e-mail address such as name@example.com',
        line: '4',
      },
      {
        'contact.externalReference': 'PART-C-0001',
        status: 'exists',
        httpStatus: '409',
        id: '301',
        message:
          'already at the service: 409 Conflict: contact.externalReference "PART-C-0001" is already the contact reference 301',
        line: '5',
      },
      {
        'contact.externalReference': 'PART-C-0104',
        status: 'invalid',
        httpStatus: '',
        id: '',
        message: 'contact.lastName: is required; customer.name: is required',
        line: '6',
      },
    ]);
    // The rejected rows go back as they were, with the file's header, delimiter and line ending;
    // the existing one is not a reject.
    expect(readFileSync(rejects, 'utf8')).toBe(`${[HEADER, INES, LEA].join('\r\n')}\r\n`);
  });

  it('a re-run skips the ones created, with their ids, and sends nothing again: the existing one stays `exists` with its id', async () => {
    const { dir, path } = write('contacts.csv', MIXED);
    expect((await run(cli(path, '--skip-invalid'))).code).toBe(4);
    const before = posts();
    const report = join(dir, 'again.ndjson');
    const again = await run(cli(path, '--skip-invalid', '--report', report));
    expect(again.code).toBe(4);
    // The created ones are skipped; the one the service already had (409) is not sent again.
    expect(posts()).toBe(before);
    const lines = readLines(report);
    expect(lines.map((line) => line.status)).toEqual(['skipped', 'skipped', 'invalid', 'exists', 'invalid']);
    expect(lines[3]).toMatchObject({ 'contact.externalReference': 'PART-C-0001', httpStatus: 409, id: 301 });
    expect(lines[3]!.message).toMatch(
      /^found already there \(the service answered 409\) at .* by refs contacts import.* \(id 301\); not sent again$/,
    );
    expect(lines[0]).toMatchObject({
      'contact.externalReference': 'PART-C-0101',
      id: (await heldWith('PART-C-0101'))[0]!.id,
      message: 'already created by an earlier run',
    });
    expect(await heldWith('PART-C-0101')).toHaveLength(1);
    // The input's history is keyed by contact.externalReference, in the contact references'
    // ledger, and names its command; nothing is written beside the input.
    const history = await ledgerHistory(join(config, 'ledger'), sandbox.url, [path], 'contact-references');
    expect([...history.keys()].sort()).toEqual(['PART-C-0001', 'PART-C-0101', 'PART-C-0102']);
    for (const entry of history.values()) {
      expect(entry).toMatchObject({ status: 'created', by: 'refs contacts import', input: path });
    }
    expect((await ledgerHistory(join(config, 'ledger'), sandbox.url)).size).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['again.ndjson', 'contacts.csv']);
  });

  it('takes JSON and NDJSON records in the body’s own shape, and --json gives the records with their ids', async () => {
    const record = (ref: string, name: string) => ({
      contact: {
        externalReference: ref,
        firstName: name,
        lastName: 'Garnier',
        email: `${name.toLowerCase()}@garnier.fr`,
      },
      customer: { name: `Maison ${name}` },
    });
    const { path: json } = write(
      'contacts.json',
      JSON.stringify([record('PART-C-0201', 'Elsa'), record('PART-C-0202', 'Paul')]),
    );
    const result = await run(cli(json, '--json'));
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.counts).toMatchObject({ total: 2, created: 2 });
    expect(out.records[1]).toMatchObject({
      'contact.externalReference': 'PART-C-0202',
      status: 'created',
      id: expect.any(Number),
    });
    const { path: ndjson } = write(
      'contacts.ndjson',
      `${JSON.stringify(record('PART-C-0203', 'Rose'))}\n[1]\n`,
    );
    const bad = await run(cli(ndjson));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`${ndjson}:2: must be a contact reference (a JSON object), not a list`);
  });

  it('renames a file’s own headers with --map', async () => {
    const { dir, path } = write(
      'contacts.csv',
      'Référence;Prénom;Nom;Courriel;Client\nPART-C-0301;Margaux;Blanc;margaux@blanc.fr;Cave Blanc\n',
    );
    const map = join(dir, 'map.json');
    writeFileSync(
      map,
      JSON.stringify({
        Référence: 'contact.externalReference',
        Prénom: 'contact.firstName',
        Nom: 'contact.lastName',
        Courriel: 'contact.email',
        Client: 'customer.name',
      }),
    );
    const result = await run(cli(path, '--map', map));
    expect(result.code, result.stderr).toBe(0);
    expect(await heldWith('PART-C-0301')).toHaveLength(1);
  });
});

describe('refs contacts import: contact references the service already has', () => {
  it('a 409 "already the contact reference 301" is `exists` with id 301, not a failure: exit 0 on every run (binary)', async () => {
    const { dir } = write('contacts.csv', `${HEADER}\n${JEANNE}\n${CAMILLE}\n`);
    const env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
    const args = (report: string) => ['refs', 'contacts', 'import', 'contacts.csv', '--report', report];

    const first = await bin(args('first.csv'), { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('not created');
    expect(first.stderr).toMatch(/created\s+1\n/);
    expect(first.stderr).toMatch(/exists\s+1\s+already at the service/);
    expect(csvReport(join(dir, 'first.csv'))[1]).toEqual({
      'contact.externalReference': 'PART-C-0001',
      status: 'exists',
      httpStatus: '409',
      id: '301',
      message:
        'already at the service: 409 Conflict: contact.externalReference "PART-C-0001" is already the contact reference 301',
      line: '3',
    });

    const posted = posts();
    const again = await bin(args('again.csv'), { cwd: dir, env });
    expect(again.code, again.stderr).toBe(0);
    expect(posts()).toBe(posted);
    expect(csvReport(join(dir, 'again.csv'))[1]).toMatchObject({
      'contact.externalReference': 'PART-C-0001',
      status: 'exists',
      id: '301',
    });
    expect(await heldWith('PART-C-0001')).toHaveLength(1);
  });

  it('a 409 that names no id is `exists` too, and says where to find the id; --json counts it', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${HUGO}\n`);
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/contact_references', kind: 'status', status: 409, times: 1 },
    ]);
    const result = await run(cli(path, '--json'));
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.counts).toMatchObject({ total: 1, created: 0, exists: 1, failed: 0 });
    expect(out.records[0]).toMatchObject({ status: 'exists', httpStatus: 409, id: null });
    expect(out.records[0].message).toMatch(
      /^already at the service: 409 Conflict: .*; its id is not in the answer: find it with ordercli refs contacts list$/,
    );
  });

  it('another refusal (422, 500) stays a failure (exit 4)', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${HUGO}\n`);
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/contact_references', kind: 'status', status: 422, times: 1 },
    ]);
    const result = await run(cli(path));
    expect(result.code, result.stderr).toBe(4);
    expect(result.stderr).toContain('PART-C-0102 failed: 422 Unprocessable Entity');
  });
});

describe('refs contacts import from an Excel workbook', () => {
  it('reads the sheet through --map, names sheet and cell in problems, and writes rejects as a workbook', async () => {
    const dir = tempDir();
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Contacts');
    sheet.addRow(['Référence', 'Prénom', 'Nom', 'Courriel', 'Client']);
    sheet.addRow([
      'PART-C-0501',
      'Aurélie',
      'Chevalier',
      { text: 'aurelie@chevalier-vins.fr', hyperlink: 'mailto:aurelie@chevalier-vins.fr' },
      'Vins Chevalier',
    ]);
    sheet.addRow(['PART-C-0502', 'Mathis', 'Leroy', 'mathis.leroy-chez-leroy.fr', 'Leroy & Fils']);
    sheet.addRow([
      'PART-C-0001',
      'Camille',
      'Rousseau',
      'camille.rousseau@maison-rousseau.fr',
      'Maison Rousseau',
    ]);
    const path = join(dir, 'contacts.xlsx');
    await workbook.xlsx.writeFile(path);
    const map = join(dir, 'colonnes.json');
    writeFileSync(
      map,
      JSON.stringify({
        Référence: 'contact.externalReference',
        Prénom: 'contact.firstName',
        Nom: 'contact.lastName',
        Courriel: 'contact.email',
        Client: 'customer.name',
      }),
    );

    // Without --map no header names a contact reference column.
    const unmapped = await run(cli(path));
    expect(unmapped.code).toBe(2);
    expect(unmapped.stderr).toContain(`error: ${path} has no contact references to read:`);
    expect(unmapped.stderr).toContain(
      'the header row names the columns: contact.externalReference, contact.firstName, contact.lastName, contact.email, customer.name',
    );

    const refused = await run(cli(path, '--map', map));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `${path}:Contacts!D3: contact.email: must be an e-mail address such as name@example.com`,
    );
    expect(posts()).toBe(0);

    const rejects = join(dir, 'rejects.xlsx');
    const result = await run(cli(path, '--map', map, '--skip-invalid', '--rejects', rejects));
    expect(result.code, result.stderr).toBe(4);
    expect(sandbox.requests.find((request) => request.method === 'POST')?.body).toEqual({
      contact: {
        externalReference: 'PART-C-0501',
        firstName: 'Aurélie',
        lastName: 'Chevalier',
        email: 'aurelie@chevalier-vins.fr',
      },
      customer: { name: 'Vins Chevalier' },
    });
    expect((await readSheet(rejects)).rows).toEqual([
      ['Référence', 'Prénom', 'Nom', 'Courriel', 'Client'],
      ['PART-C-0502', 'Mathis', 'Leroy', 'mathis.leroy-chez-leroy.fr', 'Leroy & Fils'],
    ]);
  });
});

describe('refs contacts import in CI', () => {
  it('writes a JUnit report named by contact.externalReference, and GitHub annotations and a job summary', async () => {
    const { dir } = write('contacts.csv', MIXED);
    const env = {
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: dir,
      GITHUB_STEP_SUMMARY: join(dir, 'step-summary.md'),
    };
    const result = await run(cli('contacts.csv', '--skip-invalid', '--report', 'report.xml'), {
      cwd: dir,
      env,
    });
    expect(result.code, result.stderr).toBe(4);
    const root = parseXml(readFileSync(join(dir, 'report.xml'), 'utf8'));
    expect(root.attributes).toMatchObject({
      name: 'ordercli refs contacts import',
      tests: '5',
      failures: '2',
      skipped: '0',
    });
    const cases = root.children.flatMap((suite) => suite.children);
    expect(cases.map((testcase) => [testcase.attributes.name, testcase.attributes.line])).toEqual([
      ['PART-C-0101', '2'],
      ['PART-C-0102', '3'],
      ['PART-C-0103', '4'],
      ['PART-C-0001', '5'],
      ['PART-C-0104', '6'],
    ]);
    // The one the service already had passes, with what the service said.
    expect(cases[3]!.children[0]).toMatchObject({ name: 'system-out' });
    expect(cases[3]!.children[0]!.text).toContain('contacts.csv:5: already at the service: 409 Conflict:');
    expect(cases[3]!.children[0]!.text).toContain('(id 301)');
    const commands = result.stderr.split('\n').filter((line) => line.startsWith('::'));
    expect(commands).toContain(
      '::error file=contacts.csv,line=4,title=contact.email::contact.email: must be an e-mail address such as name@example.com',
    );
    expect(commands.some((line) => line.includes('PART-C-0001'))).toBe(false);
    const summary = readFileSync(join(dir, 'step-summary.md'), 'utf8');
    expect(summary).toContain('ordercli refs contacts import contacts.csv');
  });
});

describe('refs contacts import: failures', () => {
  it('a dropped connection leaves the record in doubt (binary): not sent again until --retry-unknown, whose 409 gives the id (exit 0)', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${JEANNE}\n${HUGO}\n`);
    // The sandbox creates Jeanne's reference, then drops the connection without answering.
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/contact_references', kind: 'reset-after', times: 1 },
    ]);
    const first = await bin(cli(path, '--concurrency', '1'));
    expect(first.code, first.stderr).toBe(4);
    expect(first.stderr).toMatch(/unknown\s+1/);
    expect(first.stderr).toContain('1 contact references have an unknown outcome');
    expect(first.stderr).toContain('ordercli refs contacts list');
    expect(await heldWith('PART-C-0101')).toHaveLength(1);

    const before = posts();
    const again = await bin(cli(path));
    expect(again.code).toBe(4);
    expect(posts()).toBe(before);
    expect(again.stderr).toContain('PART-C-0101 unknown: outcome unknown since');
    expect(again.stderr).toContain(
      'check at the service (ordercli refs contacts list), then record it with ordercli orders resolve if it is there, or send it again with --retry-unknown if it is not',
    );

    const report = join(dirname(path), 'retried.csv');
    const retried = await bin(cli(path, '--retry-unknown', '--report', report));
    expect(retried.code, retried.stderr).toBe(0);
    expect(posts()).toBe(before + 1);
    expect(retried.stderr).toMatch(/exists\s+1/);
    const held = await heldWith('PART-C-0101');
    expect(held).toHaveLength(1);
    // The 409 named the reference the lost answer would have: its id is in the report.
    expect(csvReport(report)[0]).toMatchObject({
      'contact.externalReference': 'PART-C-0101',
      status: 'exists',
      httpStatus: '409',
      id: String(held[0]!.id),
    });
  });

  it('orders resolve settles a record in doubt in the contact references ledger, and leaves the order ledger alone', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${JEANNE}\n`);
    const config = tempDir('ordercli-config-');
    const env = { env: { ORDERCLI_CONFIG_DIR: config } };
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/contact_references', kind: 'reset-after', times: 1 },
    ]);
    expect((await run(cli(path), env)).code).toBe(4);
    const [created] = await heldWith('PART-C-0101');

    const resolved = await run(
      ['--base-url', sandbox.url, 'orders', 'resolve', path, '--created', `PART-C-0101=${created!.id}`],
      env,
    );
    expect(resolved.code, resolved.stderr).toBe(0);
    const before = posts();
    const again = await run(cli(path), env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/skipped\s+1/);
    expect(posts()).toBe(before);
    // An order with the same key is not refused: contact references have a ledger of their own.
    const ledger = join(config, 'ledger');
    const files = existsSync(ledger) ? readdirSync(ledger, { recursive: true, encoding: 'utf8' }) : [];
    const own = files.filter((file) => file.includes('contact-references'));
    expect(own.some((file) => readIfFile(join(ledger, file)).includes('PART-C-0101'))).toBe(true);
    for (const file of files.filter((file) => !file.includes('contact-references'))) {
      expect(readIfFile(join(ledger, file))).not.toContain('PART-C-0101');
    }
  });

  it('a 403 stops at once with exit 3 and says what it means for contact references', async () => {
    const { path } = write('contacts.csv', `${HEADER}\n${JEANNE}\n${HUGO}\n`);
    sandbox.scriptFaults([
      { method: 'POST', path: '/api/v1/contact_references', kind: 'status', status: 403 },
    ]);
    const result = await run(cli(path, '--concurrency', '1'));
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(
      'error: The service refused POST /api/v1/contact_references (403 Forbidden): the token does not have the rights this request needs.',
    );
    expect(result.stderr).toContain('hint: This token may not create contact references');
    expect(result.stderr).toContain('1 contact references not sent');
    expect(result.stderr).not.toContain('sandbox-partner-token');
  });
});

describe('refs contacts import through the binary', () => {
  it('imports a CSV of valid, invalid and existing rows, then a re-run sends nothing new', async () => {
    const { dir, path } = write('contacts.csv', MIXED);
    const env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
    const refused = await bin(['refs', 'contacts', 'import', 'contacts.csv'], { cwd: dir, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('contacts.csv:4: contact.email:');
    expect(posts()).toBe(0);

    const first = await bin(
      ['refs', 'contacts', 'import', 'contacts.csv', '--skip-invalid', '--report', 'report.csv'],
      { cwd: dir, env },
    );
    expect(first.code, first.stderr).toBe(4);
    expect(first.stdout).toBe('');
    const ids = csvReport(join(dir, 'report.csv'))
      .filter((row) => row.status === 'created')
      .map((row) => Number(row.id));
    expect(ids).toHaveLength(2);
    // The ids are the service's, ready to use as an order's contact.internalReferenceId.
    const listed = await heldWith('PART-C-0102');
    expect(ids).toContain(listed[0]!.id);

    const posted = posts();
    const again = await bin(['refs', 'contacts', 'import', 'contacts.csv', '--skip-invalid'], {
      cwd: dir,
      env,
    });
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/skipped\s+2\s+already created, or being sent by another ordercli/);
    expect(again.stderr).toMatch(/exists\s+1\s+already at the service/);
    expect(posts()).toBe(posted);
    expect(readFileSync(path, 'utf8')).toBe(MIXED);
  });
});

function readIfFile(path: string): string {
  return statSync(path).isFile() ? readFileSync(path, 'utf8') : '';
}
