// The reference commands through the built binary (npm run build first), as users run them.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, runBin, tempDir, testEnv } from '../../support/cli.js';
import { fixture, tableLines, widthOf } from '../../support/lists.js';
import { probe, requireTool } from '../../support/requirements.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox({}, { resetEach: false });

/** util-linux `script` gives the binary a real terminal (a pseudo-terminal) of the width asked. */
const hasScript = requireTool('script', {
  what: 'the packagings table drawn on a real terminal (test/commands/refs/packagings-list.bin.test.ts)',
  missing: probe('script', '--version'),
  how: 'apt-get install -y bsdutils',
});

/** Runs the built binary on a terminal `columns` wide; returns everything the terminal showed. */
function runOnTerminal(args: string[], env: Record<string, string>, columns: number): Promise<string> {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${columns} rows 50; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: ROOT,
      env: testEnv({ ...env, NO_COLOR: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(screen.replace(/\r\n/g, '\n')) : reject(new Error(`exit ${code}: ${screen}`)),
    );
  });
}

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

  it.skipIf(!hasScript)(
    'draws the table on a terminal with cli-table3: at most --limit rows, then a note on stderr',
    async () => {
      const env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
      const screen = await runOnTerminal(
        ['refs', 'packagings', 'list', '--search', 'bière', '--limit', '3'],
        env,
        100,
      );
      const lines = tableLines(screen);
      expect(lines).toHaveLength(3 + 4);
      expect(new Set(lines.map(widthOf))).toEqual(new Set([100]));
      expect(lines[1]).toMatch(/^│\s+ID │ ACTIVE │ LABEL\s+│ PACKAGING\s+│/);
      expect(lines.slice(3, 6).map((line) => line.split('│')[1]?.trim())).toEqual(['431', '432', '433']);
      expect(screen.replace(/\s+/g, ' ')).toContain(
        'note: 3 of 5 packaging references shown, 2 left out; narrow them with --search or --active, show them all with --limit 0, or get every row with --csv, --json or through a pipe (| less).',
      );
    },
  );

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
