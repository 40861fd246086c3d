// List answers in shapes the interface does not document (the contacts and packagings lists show
// no body): wrapped arrays, records of unexpected fields, scalars, objects without a list. They are
// served over real HTTP by a small server, as a service other than the sandbox could answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startShapeServer, tableLines, widthOf } from '../support/lists.js';

const hydraContacts = [
  { '@id': '/api/v1/contacts/7', id: 7, fullName: 'Émilie Caron', address: { city: 'Rennes', zip: '35000' } },
  { '@id': '/api/v1/contacts/8', id: 8, fullName: 'Jean Nguyễn', tags: ['vip', 'grossiste'] },
];
const wrappedPackagings = [
  { id: 'PK-1', title: 'Pot 20 cl', gtin: '3760000007917' },
  { id: 'PK-2', title: 'Carton de 12', gtin: '3760000015837' },
];
// Packaging references with fields other than the interface's: the table follows their keys.
const otherReferences = [{ ref: 901, name: 'Sirop de menthe', enabled: true }];

let server: { url: string; close(): Promise<void> };
beforeAll(async () => {
  server = await startShapeServer({
    '/api/v1/contacts': {
      'hydra:member': hydraContacts,
      'hydra:totalItems': 2,
      '@context': '/api/v1/contexts/Contact',
    },
    '/api/v1/packagings': { data: wrappedPackagings, links: { next: null } },
    '/api/v1/contact_references': ['PART-C-0001', 'PART-C-0002'],
    '/api/v1/packaging_references': { results: otherReferences },
  });
});
afterAll(async () => {
  await server.close();
});

const env = () => ({ ORDERCLI_BASE_URL: server.url, ORDERCLI_TOKEN: 'any-token-will-do' });

describe('undocumented list shapes', () => {
  it('finds records wrapped in hydra:member and derives the columns from their keys', async () => {
    const tty = await runCli(['contacts', 'list'], { tty: true, columns: 120, env: env() });
    expect(tty.code, tty.stderr).toBe(0);
    const lines = tableLines(tty.stdout);
    expect(lines[1]).toMatch(/^│\s+ID │ @ID\s+│ FULL NAME\s+│ ADDRESS CITY │ ADDRESS ZIP │ TAGS\s+│$/);
    expect(lines[3]).toMatch(/│\s+7 │ \/api\/v1\/contacts\/7 │ Émilie Caron │ Rennes\s+│ 35000\s+│\s+│/);
    expect(lines[4]).toContain('│ vip, grossiste │');
    expect(new Set(lines.map(widthOf)).size).toBe(1);
  });

  it('prints the wrapped records with --json, and says what else the wrapper held', async () => {
    const result = await runCli(['contacts', 'list', '--json'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(hydraContacts);
    expect(result.stderr).toContain(
      'wrapped the records in "hydra:member" beside "hydra:totalItems", "@context"',
    );
  });

  it('finds records under "data" and "results", piped and as CSV', async () => {
    const piped = await runCli(['packagings', 'list'], { env: env() });
    expect(piped.stdout).toBe('PK-1\tPot 20 cl\t3760000007917\nPK-2\tCarton de 12\t3760000015837\n');
    const csv = await runCli(['refs', 'packagings', 'list', '--csv'], { env: env() });
    // `name` is one of the keys put first when present.
    expect(csv.stdout).toBe('NAME,REF,ENABLED\r\nSirop de menthe,901,yes\r\n');
    const json = await runCli(['refs', 'packagings', 'list', '--json'], { env: env() });
    expect(JSON.parse(json.stdout)).toEqual(otherReferences);
  });

  it('prints records that are not objects as JSON with a note, never dropping them', async () => {
    const result = await runCli(['refs', 'contacts', 'list'], { tty: true, env: env() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(['PART-C-0001', 'PART-C-0002']);
    expect(result.stderr.replace(/\s+/g, ' ')).toContain(
      'not records a table can show; they are printed as JSON',
    );
  });
});

describe('a body that is not a list', () => {
  let other: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    other = await startShapeServer({
      '/api/v1/contacts': { message: 'Use /api/v2 for contacts', count: 3 },
      // A label with terminal escapes and a tab: the table must neither obey nor break on them.
      '/api/v1/packaging_references': [
        {
          id: 1,
          active: true,
          label: 'Sirop\u001b[2J\u001b[31m rouge\tvif',
          packaging: { name: 'Bouteille' },
        },
      ],
    });
  });
  afterAll(async () => {
    await other.close();
  });

  it('is printed whole as JSON, with a note, exit 0', async () => {
    const result = await runCli(['contacts', 'list', '--csv'], {
      env: { ORDERCLI_BASE_URL: other.url, ORDERCLI_TOKEN: 'token-x' },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ message: 'Use /api/v2 for contacts', count: 3 });
    expect(result.stderr).toContain('in a shape that is not a list; it is printed as JSON');
  });

  it('never lets control characters from the service reach the terminal', async () => {
    const result = await runCli(['refs', 'packagings', 'list'], {
      tty: true,
      columns: 120,
      env: { ORDERCLI_BASE_URL: other.url, ORDERCLI_TOKEN: 'token-x', NO_COLOR: '1' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain('\u001b');
    expect(tableLines(result.stdout)[3]).toContain('│ Sirop\\u001b[2J\\u001b[31m rouge\\tvif │');
    const piped = await runCli(['refs', 'packagings', 'list'], {
      env: { ORDERCLI_BASE_URL: other.url, ORDERCLI_TOKEN: 'token-x' },
    });
    expect(piped.stdout.split('\t')).toHaveLength(7);
  });
});
