// One set of table conventions for every list (reference lists and the CRM lists of records the
// interface does not describe): readable headers, yes/no, identifiers never cut, a note when
// values are cut; and --json --columns keeps only the chosen fields.
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixture, startShapeServer, tableLines } from '../support/lists.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({}, { resetEach: false });
let partner: Record<string, string>;
let full: Record<string, string>;

beforeAll(() => {
  partner = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
  full = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.full };
});

const oneLine = (text: string) => text.replace(/\s+/g, ' ');

describe('CRM tables on a narrow terminal', () => {
  it('contacts: identifiers whole, long values cut with a note naming them', async () => {
    const result = await runCli(['contacts', 'list'], { tty: true, columns: 80, env: full });
    expect(result.code, result.stderr).toBe(0);
    const lines = tableLines(result.stdout);
    expect(lines[1]).toMatch(/^│\s+ID │ FIRST NAME │ LAST NAME │ EMAIL\s+│ COMPANY\s+│ CITY\s+│$/);
    expect(lines.find((line) => line.includes(' 101 '))).toMatch(/│ elodie\.lefevre@epice\S*… │/);
    expect(oneLine(result.stderr)).toBe(
      'note: phone, jobTitle, customerId left out and long values of email, company cut short with … to fit 80 columns; pick columns with --columns, or use --csv or --json for whole values. ',
    );
    for (const line of result.stderr.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('contacts: an identifier column chosen with --columns is never cut, the others give way', async () => {
    const result = await runCli(['contacts', 'list', '--columns', 'email,customerId,company'], {
      tty: true,
      columns: 50,
      env: full,
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = tableLines(result.stdout);
    expect(lines[1]).toContain('│ CUSTOMER ID │');
    expect(lines.find((line) => line.includes('elodie'))).toMatch(/│ 501\s+│/);
  });

  it('refs contacts: the external reference stays whole at 80 columns', async () => {
    const result = await runCli(['refs', 'contacts', 'list'], { tty: true, columns: 80, env: partner });
    expect(result.code, result.stderr).toBe(0);
    const lines = tableLines(result.stdout);
    expect(lines.find((line) => line.includes(' 301 '))).toMatch(/^│ 301 │ PART-C-0001 │/);
    expect(oneLine(result.stderr)).toContain('cut short with … to fit 80 columns');
  });

  it('says nothing when every value fits', async () => {
    const result = await runCli(['contacts', 'list', '--columns', 'id,city'], {
      tty: true,
      columns: 80,
      env: full,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });

  it('packagings: yes/no piped and as CSV, true/false kept in --json', async () => {
    const piped = await runCli(['packagings', 'list', '--columns', 'id,active'], { env: full });
    expect(piped.stdout.split('\n').slice(0, 1)).toEqual(['1101\tyes']);
    expect(piped.stdout).toContain('1117\tno\n');
    const json = await runCli(['packagings', 'list', '--json'], { env: full });
    expect(JSON.parse(json.stdout)[0].active).toBe(true);
    const details = await runCli(['packagings', 'get', '1101'], { env: full });
    expect(details.stdout).toContain('active\tyes\n');
  });
});

describe('--json with --columns', () => {
  it('keeps the fields of the chosen reference columns, nested as in the records', async () => {
    const result = await runCli(
      ['refs', 'packagings', 'list', '--json', '--columns', 'id,unit,product,active'],
      { env: partner },
    );
    expect(result.code, result.stderr).toBe(0);
    const records = JSON.parse(result.stdout) as unknown[];
    const references = fixture('packaging_references') as {
      id: number;
      active: boolean;
      packaging: { unit: string; unit_factor: number; product: { code: string } };
    }[];
    expect(records).toHaveLength(references.length);
    expect(records[0]).toEqual({
      id: references[0]?.id,
      packaging: {
        unit: references[0]?.packaging.unit,
        unit_factor: references[0]?.packaging.unit_factor,
        product: { code: references[0]?.packaging.product.code },
      },
      active: references[0]?.active,
    });
    const contacts = await runCli(['refs', 'contacts', 'list', '--json', '--columns', 'email,customer'], {
      env: partner,
    });
    expect(JSON.parse(contacts.stdout)[0]).toEqual({
      contact: { email: 'camille.rousseau@maison-rousseau.fr' },
      customer: { name: 'Maison Rousseau' },
    });
  });

  it('keeps the chosen keys of records of unknown shape (CRM contacts), by key or header', async () => {
    const result = await runCli(['contacts', 'list', '--json', '--columns', 'id,Customer ID'], { env: full });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)[0]).toEqual({ id: 101, customerId: 501 });
  });

  it('refuses an unknown column with --json too (exit 2, nothing on stdout)', async () => {
    const result = await runCli(['packagings', 'list', '--json', '--columns', 'id,price'], { env: full });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Unknown column "price" in --columns: choose among id, active, name');
  });

  it('checks the column names against an empty list too', async () => {
    const result = await runCli(
      ['refs', 'packagings', 'list', '--json', '--columns', 'id,price', '--search', 'caviar'],
      { env: partner },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown column "price"');
  });

  it('prints records that are not objects whole, saying --columns does not apply', async () => {
    const server = await startShapeServer({ '/api/v1/contact_references': ['PART-C-0001', 'PART-C-0002'] });
    try {
      const env = { ORDERCLI_BASE_URL: server.url, ORDERCLI_TOKEN: 'any-token' };
      const result = await runCli(['refs', 'contacts', 'list', '--json', '--columns', 'id'], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(['PART-C-0001', 'PART-C-0002']);
      expect(result.stderr).toContain('--columns does not apply, they are printed whole');
    } finally {
      await server.close();
    }
  });

  it('picks nested fields of undocumented records by their dotted path', async () => {
    const server = await startShapeServer({
      '/api/v1/contacts': [
        { id: 7, fullName: 'Émilie Caron', address: { city: 'Rennes', zip: '35000' }, vip: false },
        { id: 8, fullName: 'Jean Nguyễn' },
      ],
    });
    try {
      const env = { ORDERCLI_BASE_URL: server.url, ORDERCLI_TOKEN: 'any-token' };
      const result = await runCli(['contacts', 'list', '--json', '--columns', 'id,address.city,vip'], {
        env,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual([
        { id: 7, address: { city: 'Rennes' }, vip: false },
        { id: 8 },
      ]);
      const table = await runCli(['contacts', 'list', '--columns', 'id,address.city,vip'], { env });
      expect(table.stdout).toBe('7\tRennes\tno\n8\t\t\n');
    } finally {
      await server.close();
    }
  });
});

describe('--json with --columns where records may be bare names', () => {
  it('webhooks available refuses the combination (exit 2, nothing sent)', async () => {
    const before = sandbox.requests.length;
    const result = await runCli(['--json', 'webhooks', 'available', '--columns', 'event'], { env: full });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('drop --columns');
    expect(sandbox.requests.length).toBe(before);
  });
});
