// The reference commands through the built binary (npm run build first), as users run them.
import { describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { fixture } from '../../support/lists.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({}, { resetEach: false });

describe('bin/ordercli.js refs', () => {
  it('lists packaging references as CSV, as JSON, and piped, then exits by itself', async () => {
    const env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
    const csv = await runBin(['refs', 'packagings', 'list', '--active', '--search', 'bière', '--csv'], {
      env,
    });
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\r\n')).toEqual([
      'ID,ACTIVE,LABEL,PACKAGING,UNIT × FACTOR,PRODUCT,TAXES',
      `431,yes,Bière blonde 33 cl,Bouteille 33 cl,bouteille × 1,BIE-BLO-33,"TVA 20 %, Droits d'accise 3,2 %"`,
      `432,yes,Bière blonde 33 cl,Pack de 6 bouteilles,bouteille × 6,BIE-BLO-33,"TVA 20 %, Droits d'accise 3,2 %"`,
      `433,yes,Bière blonde 33 cl,Carton de 24 bouteilles,bouteille × 24,BIE-BLO-33,"TVA 20 %, Droits d'accise 3,2 %"`,
      `434,yes,Bière ambrée d'abbaye,Bouteille 75 cl,bouteille × 1,BIE-AMB,"TVA 20 %, Droits d'accise 3,2 %"`,
      '',
    ]);
    const json = await runBin(['refs', 'contacts', 'list', '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual(fixture('contact_references'));
    const piped = await runBin(['refs', 'contacts', 'list', '--columns', 'id,last-name'], { env });
    expect(piped.stdout.split('\n').slice(0, 2)).toEqual(['301\tRousseau', '302\tMorvan']);
  });

  it('exits 3 with the access hint when a partner token lists the contacts', async () => {
    const result = await runBin(['contacts', 'list'], {
      env: { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('hint: ordercli contacts needs a token with CRM access');
    expect(result.stdout).toBe('');
  });

  it('logs in with --with-token and uses the saved profile', async () => {
    const env = { ORDERCLI_CONFIG_DIR: tempDir() };
    const login = await runBin(['login', '--with-token', '--base-url', sandbox.url], {
      env,
      stdin: sandbox.tokens.full,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(`${login.stdout}${login.stderr}`).not.toContain(sandbox.tokens.full);
    const contact = await runBin(['contacts', 'get', '101', '--json'], { env });
    expect(contact.code, contact.stderr).toBe(0);
    expect(JSON.parse(contact.stdout)).toMatchObject({ id: 101, lastName: 'Lefèvre' });
  });

  it('prints a completion script', async () => {
    const result = await runBin(['completion', 'bash']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('complete -o default -F _ordercli ordercli');
  });
});
