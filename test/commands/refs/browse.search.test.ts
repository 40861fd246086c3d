// `refs browse` on a long list: counts with thousands separators, and "Back" to the list types
// the last search in again (the user picks the next of the same kind without retyping it).
import { beforeAll, describe, expect, it } from 'vitest';
import { useSandbox } from '../../support/sandbox.js';
import { KEY, startSession } from '../../support/session.js';
import { screenLines } from '../../support/terminal.js';

const sandbox = useSandbox({ extraPackagingReferences: 1_500 }, { resetEach: false });
let env: Record<string, string>;
beforeAll(() => {
  env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
});

describe('refs browse on 1,546 packaging references', () => {
  it('counts with thousands separators, and Back to the list keeps the search', async () => {
    const session = startSession(['refs', 'browse'], env);
    await session.waitFor('Which reference list?');
    session.type(KEY.enter);
    await session.waitFor('type to filter (1,546)');
    session.type('biere bl');
    await session.waitFor('433  Bière blonde 33 cl · Carton de 24 bouteilles');
    session.type(KEY.enter);
    await session.waitFor('Next?');
    session.type(KEY.enter); // Back to the packaging references
    await session.waitFor('type to filter (1,546)');
    // The search is there again, typed in, and the list filtered by it.
    await session.waitFor('433  Bière blonde 33 cl · Carton de 24 bouteilles');
    const screen = screenLines(session.io.stdoutText());
    const prompt = screen.filter((line) => line.includes('type to filter (1,546)')).at(-1);
    expect(prompt).toMatch(/Esc to go back biere bl$/);
    session.type(KEY.escape);
    await session.waitFor('Which reference list?');
    session.type(KEY.escape);
    expect(await session.done).toBe(0);
  });
});
