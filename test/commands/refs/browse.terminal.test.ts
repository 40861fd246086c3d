// `refs browse` in small terminal windows, read as the window shows it (the terminal model of
// test/support/terminal.ts, with its rows): the question stays in view on one row with the search,
// redraws leave no copies of it, and codes are never cut (docs/cli-contract.md: identifiers).
import { beforeAll, describe, expect, it } from 'vitest';
import { call, useSandbox } from '../../support/sandbox.js';
import { KEY } from '../../support/session.js';
import { startTerminalSession, type TerminalSession, type TerminalSize } from '../../support/terminal.js';

const sandbox = useSandbox({}, { resetEach: false });
let env: Record<string, string>;
/** Each reference's code (a product code, a contact's external reference), by id. */
const codes = new Map<string, string>();

/** A contact reference whose names are longer than any terminal's row. */
const LONG_CONTACT = {
  contact: {
    externalReference: 'PART-C-LONG-0099',
    firstName: 'Marie-Emmanuelle',
    lastName: 'de La Tour-Montmorency',
    email: 'me.delatour@cooperative.example',
  },
  customer: { name: 'Société coopérative agricole des producteurs de lait du Haut-Jura' },
};

beforeAll(async () => {
  env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner, NO_COLOR: '1' };
  const token = sandbox.tokens.partner;
  const added = await call(sandbox, 'POST', '/api/v1/contact_references', { token, body: LONG_CONTACT });
  expect(added.status).toBe(201);
  const packagings = await call(sandbox, 'GET', '/api/v1/packaging_references', { token });
  for (const record of packagings.body as { id: number; packaging: { product: { code: string } } }[])
    codes.set(String(record.id), record.packaging.product.code);
  const contacts = await call(sandbox, 'GET', '/api/v1/contact_references', { token });
  for (const record of contacts.body as { id: number; contact: { externalReference: string } }[])
    codes.set(String(record.id), record.contact.externalReference);
});

const PACKAGINGS = /^\? Packaging references\b/;
const CONTACTS = /^\? Contact references\b/;

/** The choice rows in the window (`❯ 401  Crème…`, `  402  Crème…`), with their ids. */
function choiceRows(screen: string[]): { id: string; row: string }[] {
  return screen.flatMap((row) => {
    const match = /^[❯ ] +(\d{3,}) {2}/.exec(row);
    return match ? [{ id: match[1]!, row }] : [];
  });
}

/** Every listed reference's code is on its row, whole; the rows fit the window. */
function expectCodesWhole(screen: string[], size: TerminalSize): void {
  const rows = choiceRows(screen);
  expect(rows.length).toBeGreaterThan(0);
  for (const { id, row } of rows) {
    expect(row, `reference ${id}`).toContain(` ${codes.get(id)}`);
    expect(row.length, `reference ${id}`).toBeLessThanOrEqual(size.columns);
  }
}

/** The question's row: there once, in the window, followed by a choice (it does not wrap). */
function questionRow(screen: string[], question: RegExp): string {
  const at = screen.findIndex((row) => question.test(row));
  expect(at, `the question in the window:\n${screen.join('\n')}`).toBeGreaterThanOrEqual(0);
  expect(screen.filter((row) => question.test(row))).toHaveLength(1);
  expect(screen[at + 1]).toMatch(/^[❯ ] +\d/);
  return screen[at]!;
}

/** Opens a list (0 packaging references, 1 contact references) and waits for its first display. */
async function openList(size: TerminalSize, list: 0 | 1): Promise<TerminalSession> {
  const session = startTerminalSession(['refs', 'browse'], env, size);
  await session.waitFor('Which reference list?');
  if (list === 1) session.type(KEY.down);
  session.type(KEY.enter);
  // The first display is whole once its last row (the keys' help) follows the first choice.
  await session.waitFor(list === 0 ? /❯ 401 [\s\S]*navigate/ : /❯ 301 [\s\S]*navigate/);
  return session;
}

async function leave(session: TerminalSession): Promise<void> {
  session.type(KEY.escape);
  await session.waitFor('Which reference list?');
  session.type(KEY.escape);
  expect(await session.done).toBe(0);
}

describe.each([
  { columns: 60, rows: 15 },
  { columns: 80, rows: 24 },
])('refs browse in a $columns×$rows terminal', (size) => {
  it('shows the question on one row at first display, above a page that fits the window', async () => {
    const session = await openList(size, 0);
    const { screen } = session.view();
    expect(screen.length).toBeLessThanOrEqual(size.rows);
    expect(questionRow(screen, PACKAGINGS)).toMatch(/type to filter.*\(46\)|\(46\): type to filter/);
    expect(screen.at(-1)).toBe('↑↓ navigate • ⏎ select');
    expectCodesWhole(screen, size);
    await leave(session);
  });

  it('after several keystrokes, holds the question once (no copy left by a redraw), with the search on its row', async () => {
    const session = await openList(size, 0);
    for (const key of 'biere b') session.type(key);
    await session.waitFor('433  Bière blonde');
    session.type(KEY.down);
    session.type(KEY.down);
    await session.waitFor(/❯ 433 /);
    const { screen, lines } = session.view();
    // Every line the terminal holds, its scrollback too: a copy that scrolled off stays there.
    expect(lines.filter((line) => PACKAGINGS.test(line))).toHaveLength(1);
    expect(
      questionRow(
        screen.filter((row) => !row.startsWith('  4')),
        PACKAGINGS,
      ),
    ).toMatch(/ biere b$/);
    expect(choiceRows(screen).map(({ id }) => id)).toEqual(['431', '432', '433', '434', '446']);
    expectCodesWhole(screen, size);
    await leave(session);
  });

  it('pages down the list with the question in view, once, and every product code whole', async () => {
    const session = await openList(size, 0);
    for (let step = 0; step < 25; step++) session.type(KEY.down);
    await session.waitFor(/❯ 426 /);
    const { screen, lines } = session.view();
    expect(lines.filter((line) => PACKAGINGS.test(line))).toHaveLength(1);
    questionRow(screen, PACKAGINGS);
    expect(choiceRows(screen).map(({ id }) => id)).toContain('425'); // Eau minérale … · EAU-GAZ
    expectCodesWhole(screen, size);
    await leave(session);
  });

  it("keeps a contact's external reference whole, cutting its names instead", async () => {
    const session = await openList(size, 1);
    session.type('haut-jura');
    await session.waitFor(/❯ \d+ {2}Marie-Emm/);
    const { screen } = session.view();
    const [row] = choiceRows(screen);
    expect(row?.row).toMatch(/^❯ \d+ {2}Marie-Emm.*… · PART-C-LONG-0099$/);
    expect(questionRow(screen, CONTACTS)).toMatch(/ haut-jura$/);
    expectCodesWhole(screen, size);
    await leave(session);
  });
});
