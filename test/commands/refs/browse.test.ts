// `refs browse` driven by keystrokes through real prompt streams (a PassThrough stdin that claims to
// be a terminal), against the sandbox over HTTP.
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';
import { KEY, startSession, stripAnsi } from '../../support/session.js';

const sandbox = useSandbox({}, { resetEach: false });
let env: Record<string, string>;
beforeAll(() => {
  env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
});

describe('refs browse', () => {
  it('searches packaging references, shows every field with the taxes, prints the item snippet, quits with 0', async () => {
    const session = startSession(['refs', 'browse'], env);
    await session.waitFor('Which reference list?');
    session.type(KEY.enter); // Packaging references, the default
    await session.waitFor('type to filter (46)');
    session.type('biere bl');
    await session.waitFor('433  Bière blonde 33 cl · Carton de 24 bouteilles');
    expect(session.screen()).not.toMatch(/434 {2}Bière ambrée/);
    session.type(KEY.down);
    session.type(KEY.enter);
    await session.waitFor('Next?');
    const screen = session.screen();
    expect(screen).toContain(
      'Packaging reference 432: Bière blonde 33 cl · Pack de 6 bouteilles · BIE-BLO-33',
    );
    expect(screen).toMatch(/│ packaging\.product\.taxes\[1\]\.name │ Droits d'accise\s+│/);
    expect(screen).toMatch(/│ packaging\.product\.taxes\[1\]\.rate │ 3\.2\s+│/);
    expect(screen).toContain("Taxes: TVA 20 %, Droits d'accise 3,2 %");
    expect(screen).toContain(
      'To use it in the "items" of an order:\n  {"internalReferenceId": 432, "orderedQuantity": 1}',
    );
    session.type(KEY.down + KEY.down);
    session.type(KEY.enter); // Quit
    expect(await session.done).toBe(0);
    expect(session.io.stderrText()).toBe('');
  });

  it('picks a contact reference, goes back to the list with Escape, and leaves with Escape (exit 0)', async () => {
    const session = startSession(['refs', 'browse'], env);
    await session.waitFor('Which reference list?');
    session.type(KEY.down);
    session.type(KEY.enter);
    await session.waitFor('type to filter (8)');
    session.type('GAELLE'); // Gaëlle, whatever the case and accents
    await session.waitFor("302  Gaëlle Morvan · Biocoop de l'Iroise · PART-C-0002");
    session.type(KEY.enter);
    await session.waitFor('Next?');
    expect(session.screen()).toContain('To use it in an order:\n  "contact": {"internalReferenceId": 302}');
    expect(session.screen()).toMatch(/│ contact\.email\s+│ gaelle\.morvan@biocoop-iroise\.fr │/);
    session.type(KEY.escape); // back to the search
    await session.waitFor('type to filter (8)');
    session.type(KEY.escape); // back to the lists
    await session.waitFor('Which reference list?');
    session.type(KEY.escape); // leave
    expect(await session.done).toBe(0);
  });

  it('goes from one list to the other and warns when the picked reference is inactive', async () => {
    sandbox.reset();
    const session = startSession(['refs', 'browse'], env);
    await session.waitFor('Which reference list?');
    session.type(KEY.enter);
    await session.waitFor('type to filter (46)');
    session.type('417'); // an exact id is found too
    await session.waitFor('417  Œufs frais bio, calibre moyen · Plateau de 30 · OEU-BIO (inactive)');
    session.type(KEY.enter);
    await session.waitFor('Next?');
    expect(session.io.stderrText()).toContain(
      'this reference is inactive: the service refuses it in an order',
    );
    session.type(KEY.down);
    session.type(KEY.enter); // Choose another list
    await session.waitFor('Which reference list?');
    session.type(KEY.enter); // packaging references again, the last list used
    await session.waitFor('type to filter (46)');
    session.type(KEY.escape);
    await session.waitFor('Which reference list?');
    session.type(KEY.up);
    session.type(KEY.enter); // Quit (the list wraps around)
    expect(await session.done).toBe(0);
    // The list was fetched once, however often it was browsed.
    expect(sandbox.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /api/v1/packaging_references',
    ]);
  });

  it('exits 130 without a stack trace on Ctrl-C', async () => {
    const session = startSession(['refs', 'browse'], env);
    await session.waitFor('Which reference list?');
    session.type(KEY.enter);
    await session.waitFor('type to filter');
    session.type('cr');
    session.type(KEY.ctrlC);
    expect(await session.done).toBe(130);
    expect(stripAnsi(session.io.stderrText())).toBe('error: Interrupted.\n');
  });

  it('refuses to run without a terminal (exit 2), naming the commands to use instead', async () => {
    const piped = await runCli(['refs', 'browse'], { env });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('refs browse is interactive and stdin and stdout must both be a terminal');
    expect(piped.stderr).toContain('ordercli refs packagings list --search <text>');
    expect(piped.stderr).toContain('ordercli refs contacts list');
    const ci = await runCli(['refs', 'browse'], { env: { ...env, CI: 'true' }, tty: true });
    expect(ci.code).toBe(2);
    expect(ci.stderr).toContain('prompts are turned off (--yes or CI)');
  });
});
