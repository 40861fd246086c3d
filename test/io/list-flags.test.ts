// --limit: on a terminal a table shows at most that many rows (1000 unless told, 0 for all), with
// a note on stderr saying how many were left out and how to get them; piped rows, --csv and
// --json are never limited. Against the real sandbox, with 1,100 generated references added.
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixture, tableLines } from '../support/lists.js';
import { useSandbox } from '../support/sandbox.js';

const EXTRA = 1100;
const sandbox = useSandbox({ extraPackagingReferences: EXTRA }, { resetEach: false });
const total = fixture('packaging_references').length + EXTRA;
const env = () => ({ ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner });
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
/** Rows of a framed table: its lines less the two rules, the header and the bottom rule. */
const tableRows = (stdout: string) => tableLines(stdout).length - 4;

describe('--limit', () => {
  it('shows 1000 rows on a terminal by default, and says how many were left out and how to get them', async () => {
    // Two short columns: no value is cut, so the row limit's note is the only one.
    const result = await runCli(['refs', 'packagings', 'list', '--columns', 'id,active'], {
      tty: true,
      columns: 200,
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(tableRows(result.stdout)).toBe(1000);
    expect(tableLines(result.stdout).at(-1)).toMatch(/^└─/);
    expect(oneLine(result.stderr)).toBe(
      `note: 1000 of ${total} packaging references shown, ${total - 1000} left out; narrow them with --search or --active, show them all with --limit 0, or get every row with --csv, --json or through a pipe (| less).`,
    );
  });

  it('shows the number of rows asked for, and every row with --limit 0', async () => {
    const five = await runCli(['refs', 'packagings', 'list', '--limit', '5'], {
      tty: true,
      columns: 200,
      env: env(),
    });
    expect(five.code, five.stderr).toBe(0);
    expect(tableRows(five.stdout)).toBe(5);
    expect(tableLines(five.stdout)[3]).toMatch(/^│ 401 │/);
    expect(oneLine(five.stderr)).toContain(
      `note: 5 of ${total} packaging references shown, ${total - 5} left out;`,
    );

    const all = await runCli(['refs', 'packagings', 'list', '--limit', '0', '--columns', 'id,active'], {
      tty: true,
      columns: 200,
      env: env(),
    });
    expect(all.code, all.stderr).toBe(0);
    expect(tableRows(all.stdout)).toBe(total);
    expect(all.stderr).toBe('');
  });

  it('names only the ways a list has: no --search for the contact references', async () => {
    const result = await runCli(['refs', 'contacts', 'list', '--limit', '2'], {
      tty: true,
      columns: 200,
      env: env(),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(tableRows(result.stdout)).toBe(2);
    const contacts = fixture('contact_references').length;
    expect(oneLine(result.stderr)).toBe(
      `note: 2 of ${contacts} contact references shown, ${contacts - 2} left out; show them all with --limit 0, or get every row with --csv, --json or through a pipe (| less).`,
    );
  });

  it('never limits piped rows, --csv or --json', async () => {
    for (const limit of [[], ['--limit', '5']]) {
      const piped = await runCli(['refs', 'packagings', 'list', ...limit], { env: env() });
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stdout.trimEnd().split('\n')).toHaveLength(total);
      expect(piped.stderr).toBe('');

      const csv = await runCli(['refs', 'packagings', 'list', '--csv', ...limit], { tty: true, env: env() });
      expect(csv.stdout.trimEnd().split('\r\n')).toHaveLength(total + 1);
      expect(csv.stderr).toBe('');

      const json = await runCli(['refs', 'packagings', 'list', '--json', ...limit], {
        tty: true,
        env: env(),
      });
      expect(JSON.parse(json.stdout)).toHaveLength(total);
      expect(json.stderr).toBe('');
    }
  });

  it('refuses a limit that is not a whole number of rows (exit 2), before asking the service', async () => {
    for (const value of ['-1', 'x', '1.5', '']) {
      const before = sandbox.requests.length;
      const result = await runCli(['contacts', 'list', '--limit', value], { env: env() });
      expect(result.code, value).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(
        `error: --limit must be a whole number of rows (0 for all), not ${JSON.stringify(value)}.`,
      );
      expect(sandbox.requests.length).toBe(before);
    }
  });
});
