// The list and get commands against the real sandbox over HTTP: TTY table, piped TSV, --json,
// --csv, --columns, --search/--active, the 403 hints and empty lists.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../../src/sandbox/server.js';
import { runCli } from '../../support/cli.js';
import { fixture, tableLines, widthOf } from '../../support/lists.js';
import { useSandbox } from '../../support/sandbox.js';
import { stripAnsi } from '../../support/session.js';

const sandbox = useSandbox({}, { resetEach: false });
let partner: Record<string, string>;
let full: Record<string, string>;

beforeAll(() => {
  partner = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
  full = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.full };
});

const packagingReferences = fixture('packaging_references');
const contactReferences = fixture('contact_references');
const contacts = fixture('contacts');
const packagings = fixture('packagings');

/** The ids in the first column of TSV output. */
function tsvIds(stdout: string): string[] {
  return stdout
    .trimEnd()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t')[0] ?? '');
}

describe('refs packagings list', () => {
  it('prints a framed table on a TTY: aligned with accents, French taxes, unit × factor', async () => {
    const result = await runCli(['refs', 'packagings', 'list'], { tty: true, columns: 200, env: partner });
    expect(result.code, result.stderr).toBe(0);
    const lines = tableLines(result.stdout);
    // Top rule, header, rule, one line per reference, bottom rule.
    expect(lines).toHaveLength(packagingReferences.length + 4);
    const widths = new Set(lines.map(widthOf));
    expect(widths.size, lines.join('\n')).toBe(1);
    expect([...widths][0]).toBeLessThanOrEqual(200);
    expect(lines[1]).toMatch(
      /│\s+ID │ ACTIVE │ LABEL\s+│ PACKAGING\s+│ UNIT × FACTOR\s+│ PRODUCT\s+│ TAXES\s+│/,
    );
    const crf = lines.find((line) => line.includes(' 401 '));
    expect(crf).toMatch(
      /│ 401 │ yes\s+│ Crème fraîche épaisse 30 % MG\s+│ Pot 20 cl\s+│ pot × 1\s+│ CRF-30\s+│ TVA 5,5 %\s+│/,
    );
    const beer = lines.find((line) => line.includes(' 431 '));
    expect(beer).toContain("TVA 20 %, Droits d'accise 3,2 %");
    expect(lines.find((line) => line.includes(' 417 '))).toMatch(/│ 417 │ no /);
    expect(result.stderr).toBe('');
  });

  it('cuts the least important columns first when the terminal is narrower than the table', async () => {
    const result = await runCli(['refs', 'packagings', 'list'], { tty: true, columns: 120, env: partner });
    const lines = tableLines(result.stdout);
    for (const line of lines) expect(widthOf(line)).toBe(120);
    // The labels stay whole; the taxes are cut.
    expect(lines.find((line) => line.includes(' 406 '))).toContain(
      '│ Camembert de Normandie AOP au lait cru │',
    );
    expect(lines.find((line) => line.includes(' 439 '))).toMatch(/│ TVA 20 %… │$/);
    expect(lines.find((line) => line.includes(' 401 '))).toMatch(/│ TVA 5,5 % │$/);
  });

  it('fits an 80-column terminal: long cells cut with …, the taxes left out with a note', async () => {
    const result = await runCli(['refs', 'packagings', 'list'], { tty: true, columns: 80, env: partner });
    expect(result.code, result.stderr).toBe(0);
    const lines = tableLines(result.stdout);
    for (const line of lines) expect(widthOf(line)).toBeLessThanOrEqual(80);
    expect(new Set(lines.map(widthOf)).size).toBe(1);
    expect(lines[1]).not.toContain('TAXES');
    expect(result.stdout).toContain('…');
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(
      'note: taxes left out and long values of label, packaging, unit cut short with … to fit 80 columns; pick columns with --columns, or use --csv or --json for whole values.',
    );
  });

  it('prints tab-separated rows without decoration when piped', async () => {
    const result = await runCli(['refs', 'packagings', 'list'], { env: partner });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(packagingReferences.length);
    expect(lines[0]).toBe('401\tyes\tCrème fraîche épaisse 30 % MG\tPot 20 cl\tpot × 1\tCRF-30\tTVA 5,5 %');
    expect(result.stdout).not.toMatch(/[┌│└─]|\x1b/);
    expect(result.stderr).toBe('');
  });

  it('prints the records exactly as the service returned them with --json', async () => {
    const result = await runCli(['refs', 'packagings', 'list', '--json'], { tty: true, env: partner });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(packagingReferences);
    expect(result.stdout).toBe(`${JSON.stringify(packagingReferences, null, 2)}\n`);
  });

  it('writes the table rows as RFC 4180 CSV with --csv', async () => {
    const result = await runCli(['refs', 'packagings', 'list', '--csv'], { tty: true, env: partner });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\r\n');
    expect(lines[0]).toBe('ID,ACTIVE,LABEL,PACKAGING,UNIT × FACTOR,PRODUCT,TAXES');
    expect(lines[1]).toBe('401,yes,Crème fraîche épaisse 30 % MG,Pot 20 cl,pot × 1,CRF-30,"TVA 5,5 %"');
    expect(lines).toContain('416,yes,"Œufs frais bio, calibre moyen",Boîte de 6,œuf × 6,OEU-BIO,"TVA 5,5 %"');
    expect(lines).toHaveLength(packagingReferences.length + 2);
    expect(lines.at(-1)).toBe('');
  });

  it('shows the columns chosen with --columns, in that order, by key or header', async () => {
    const csv = await runCli(
      ['refs', 'packagings', 'list', '--csv', '--columns', 'id,product-label,Packaging'],
      {
        env: partner,
      },
    );
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\r\n').slice(0, 2)).toEqual([
      'ID,PRODUCT LABEL,PACKAGING',
      '401,Crème fraîche épaisse 30 % MG,Pot 20 cl',
    ]);
    const tsv = await runCli(['refs', 'packagings', 'list', '--columns', 'taxes,id'], { env: partner });
    expect(tsv.stdout.split('\n')[0]).toBe('TVA 5,5 %\t401');
    const table = await runCli(['refs', 'packagings', 'list', '--columns', 'id,label'], {
      tty: true,
      env: partner,
    });
    expect(tableLines(table.stdout)[1]).toMatch(/^│\s+ID │ LABEL\s+│$/);
  });

  it('refuses an unknown column with exit 2, naming the known ones', async () => {
    const result = await runCli(['refs', 'packagings', 'list', '--columns', 'id,price'], { env: partner });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown column "price" in --columns: choose among id, active, label');
    expect(result.stdout).toBe('');
  });

  it('searches label, product code and label, packaging name, ignoring case and accents', async () => {
    const creme = await runCli(['refs', 'packagings', 'list', '--search', 'CREME'], { env: partner });
    // "écrémé" (414, 415) is not a word starting with "creme".
    expect(tsvIds(creme.stdout)).toEqual(['401', '402']);
    const oeufs = await runCli(['refs', 'packagings', 'list', '--search', 'oeufs'], { env: partner });
    expect(tsvIds(oeufs.stdout)).toEqual(['416', '417']);
    const code = await runCli(['refs', 'packagings', 'list', '--search', 'bie-blo'], { env: partner });
    expect(tsvIds(code.stdout)).toEqual(['431', '432', '433']);
    const packaging = await runCli(['refs', 'packagings', 'list', '--search', 'carton bouteilles'], {
      env: partner,
    });
    expect(tsvIds(packaging.stdout)).toEqual(['433', '436']);
    // The data has a curly apostrophe (l’ancienne); the user types a straight one.
    const moutarde = await runCli(['refs', 'packagings', 'list', '--search', "l'ancienne dijon"], {
      env: partner,
    });
    expect(tsvIds(moutarde.stdout)).toEqual(['423']);
  });

  it('keeps only active references with --active, combined with --search and --json', async () => {
    const active = await runCli(['refs', 'packagings', 'list', '--active'], { env: partner });
    const expected = packagingReferences.filter((r) => r.active === true).map((r) => String(r.id));
    expect(tsvIds(active.stdout)).toEqual(expected);
    expect(expected.length).toBeLessThan(packagingReferences.length);
    const json = await runCli(['refs', 'packagings', 'list', '--active', '--search', 'œufs', '--json'], {
      env: partner,
    });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(packagingReferences.filter((r) => r.id === 416));
  });

  it('notes an empty result on stderr and exits 0', async () => {
    const result = await runCli(['refs', 'packagings', 'list', '--search', 'caviar'], {
      tty: true,
      env: partner,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('No packaging references match --search "caviar".\n');
    const json = await runCli(['refs', 'packagings', 'list', '--search', 'caviar', '--json'], {
      env: partner,
    });
    expect(json.stdout).toBe('[]\n');
  });

  it('refuses --json with --csv (exit 2)', async () => {
    const result = await runCli(['refs', 'packagings', 'list', '--json', '--csv'], { env: partner });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Choose one of --json and --csv.');
  });
});

describe('refs contacts list', () => {
  it('prints the contact references on a TTY, piped, --json, --csv and --columns', async () => {
    const tty = await runCli(['refs', 'contacts', 'list'], { tty: true, columns: 120, env: partner });
    expect(tty.code, tty.stderr).toBe(0);
    const lines = tableLines(tty.stdout);
    expect(lines).toHaveLength(contactReferences.length + 4);
    expect(new Set(lines.map(widthOf)).size).toBe(1);
    expect(lines[1]).toMatch(/ID │ REFERENCE\s+│ FIRST NAME │ LAST NAME │ EMAIL\s+│ CUSTOMER\s+│/);
    expect(lines.find((line) => line.includes(' 302 '))).toMatch(
      /│ 302 │ PART-C-0002\s+│ Gaëlle\s+│ Morvan\s+│ gaelle\.morvan@biocoop-iroise\.fr\s+│ Biocoop de l'Iroise\s+│/,
    );

    const piped = await runCli(['refs', 'contacts', 'list'], { env: partner });
    expect(piped.stdout.split('\n')[0]).toBe(
      '301\tPART-C-0001\tCamille\tRousseau\tcamille.rousseau@maison-rousseau.fr\tMaison Rousseau',
    );

    const json = await runCli(['refs', 'contacts', 'list', '--json'], { env: partner });
    expect(JSON.parse(json.stdout)).toEqual(contactReferences);

    const csv = await runCli(['refs', 'contacts', 'list', '--csv', '--columns', 'id,customer,email'], {
      env: partner,
    });
    expect(csv.stdout.split('\r\n').slice(0, 3)).toEqual([
      'ID,CUSTOMER,EMAIL',
      '301,Maison Rousseau,camille.rousseau@maison-rousseau.fr',
      "302,Biocoop de l'Iroise,gaelle.morvan@biocoop-iroise.fr",
    ]);
  });
});

describe('contacts and packagings (CRM and catalog access)', () => {
  it('lists the contacts with columns taken from their keys, headed as the reference tables, on a TTY, piped, --json and --csv', async () => {
    const tty = await runCli(['contacts', 'list'], { tty: true, columns: 200, env: full });
    expect(tty.code, tty.stderr).toBe(0);
    const lines = tableLines(tty.stdout);
    expect(lines).toHaveLength(contacts.length + 4);
    expect(lines[1]).toMatch(
      /^│\s+ID │ FIRST NAME │ LAST NAME\s+│ EMAIL\s+│ COMPANY\s+│ CITY\s+│ PHONE\s+│ JOB TITLE\s+│ CUSTOMER ID │$/,
    );
    expect(lines.find((line) => line.includes(' 103 '))).toContain('Fromagerie Garçon & Fils');

    const piped = await runCli(['contacts', 'list', '--columns', 'id,email'], { env: full });
    expect(piped.stdout.split('\n')[0]).toBe('101\telodie.lefevre@epicerie-fine-lefevre.fr');

    const json = await runCli(['contacts', 'list', '--json'], { env: full });
    expect(JSON.parse(json.stdout)).toEqual(contacts);

    const csv = await runCli(['contacts', 'list', '--csv', '--columns', 'lastName,customerId'], {
      env: full,
    });
    expect(csv.stdout.split('\r\n').slice(0, 2)).toEqual(['LAST NAME,CUSTOMER ID', 'Lefèvre,501']);
  });

  it('lists the packagings the same way', async () => {
    const tty = await runCli(['packagings', 'list'], { tty: true, columns: 200, env: full });
    expect(tty.code, tty.stderr).toBe(0);
    const lines = tableLines(tty.stdout);
    expect(lines[1]).toMatch(/^│\s+ID │ ACTIVE │ NAME\s+│ UNIT\s+│ UNIT FACTOR │ PRODUCT CODE/);
    // yes and no, as in the reference tables (the service sends true and false).
    expect(lines.find((line) => line.includes(' 1101 '))).toMatch(/^│\s+1101 │ yes\s+│ Pot 20 cl/);
    expect(lines.find((line) => line.includes(' 1117 '))).toMatch(/^│\s+1117 │ no\s+│/);
    const piped = await runCli(['packagings', 'list', '--columns', 'id,name,ean'], { env: full });
    expect(piped.stdout.split('\n')[0]).toBe('1101\tPot 20 cl\t3760000007917');
    const json = await runCli(['packagings', 'list', '--json'], { env: full });
    expect(JSON.parse(json.stdout)).toEqual(packagings);
    const csv = await runCli(['packagings', 'list', '--csv', '--columns', 'productLabel,unit_factor'], {
      env: full,
    });
    expect(csv.stdout.split('\r\n').slice(0, 3)).toEqual([
      'PRODUCT LABEL,UNIT FACTOR',
      'Crème fraîche épaisse 30 % MG,1',
      'Crème fraîche épaisse 30 % MG,12',
    ]);
  });

  it('gets one record: fields on a TTY, field/value lines piped, as received with --json', async () => {
    const tty = await runCli(['contacts', 'get', '104'], { tty: true, env: full });
    expect(tty.code, tty.stderr).toBe(0);
    expect(tableLines(tty.stdout).find((line) => line.includes('company'))).toMatch(
      /│ company\s+│ Cave Saint-Émilion\s+│/,
    );
    const piped = await runCli(['packagings', 'get', '1101'], { env: full });
    expect(piped.stdout).toContain('ean\t3760000007917\n');
    const json = await runCli(['contacts', 'get', '104', '--json'], { env: full });
    expect(JSON.parse(json.stdout)).toEqual(contacts.find((c) => c.id === 104));
  });

  it('explains a 403 with the partner token: exit 3, the access needed, the reference list to use', async () => {
    const cases = [
      { args: ['contacts', 'list'], access: 'CRM access', instead: 'ordercli refs contacts list' },
      { args: ['contacts', 'get', '101'], access: 'CRM access', instead: 'ordercli refs contacts list' },
      { args: ['packagings', 'list'], access: 'catalog access', instead: 'ordercli refs packagings list' },
      {
        args: ['packagings', 'get', '1101'],
        access: 'catalog access',
        instead: 'ordercli refs packagings list',
      },
    ];
    for (const { args, access, instead } of cases) {
      const result = await runCli(args, { env: partner });
      expect(result.code, args.join(' ')).toBe(3);
      expect(result.stdout).toBe('');
      const hint = stripAnsi(result.stderr)
        .split('\n')
        .find((line) => line.startsWith('hint:'));
      expect(hint).toContain(`needs a token with ${access}`);
      expect(hint).toContain(instead);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stderr).not.toContain(sandbox.tokens.partner);
    }
  });

  it('says where to find the ids when a record does not exist (exit 1)', async () => {
    const result = await runCli(['contacts', 'get', '999'], { env: full });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Not found: GET /api/v1/contacts/999');
    expect(result.stderr).toContain('hint: See the existing ids with ordercli contacts list.');
  });
});

describe('empty lists', () => {
  let empty: Sandbox;
  beforeAll(async () => {
    // A seed with every list empty: the real sandbox, serving nothing.
    const dir = mkdtempSync(join(tmpdir(), 'ordercli-empty-seed-'));
    for (const name of [
      'contacts',
      'customers',
      'packagings',
      'packaging_references',
      'contact_references',
      'shipping_modes',
    ]) {
      writeFileSync(join(dir, `${name}.json`), '[]');
    }
    empty = await startSandbox({ port: 0, quiet: true, seedDir: dir });
  });
  afterAll(async () => {
    await empty.close();
  });

  it('prints a note on stderr, nothing on stdout, and exits 0 in every format', async () => {
    const env = { ORDERCLI_BASE_URL: empty.url, ORDERCLI_TOKEN: empty.tokens.full };
    const tty = await runCli(['refs', 'contacts', 'list'], { tty: true, env });
    expect(tty).toEqual({
      code: 0,
      stdout: '',
      stderr: 'No contact references: add one with ordercli refs contacts add.\n',
    });
    const piped = await runCli(['refs', 'packagings', 'list'], { env });
    expect(piped).toEqual({ code: 0, stdout: '', stderr: 'No packaging references.\n' });
    const contactsTty = await runCli(['contacts', 'list'], { tty: true, env });
    expect(contactsTty).toEqual({ code: 0, stdout: '', stderr: 'No contacts.\n' });
    const csv = await runCli(['refs', 'packagings', 'list', '--csv'], { env });
    expect(csv.stdout).toBe('ID,ACTIVE,LABEL,PACKAGING,UNIT × FACTOR,PRODUCT,TAXES\r\n');
    const json = await runCli(['packagings', 'list', '--json'], { env });
    expect(json).toMatchObject({ code: 0, stdout: '[]\n' });
  });
});
