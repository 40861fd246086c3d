// `login`, interactive and with --with-token, against the sandbox: one check request, a profile
// saved with mode 0600, and the token in no output.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';
import { KEY, type Session, startSession, stripAnsi } from '../../support/session.js';
import { screenLines } from '../../support/terminal.js';

// Tokens that appear nowhere else, so that finding one in an output means it leaked.
const sandbox = useSandbox({
  tokens: { full: 'tok_full_7f3a9c2e51d84b06', partner: 'tok_partner_2b8e61f0c7a94d35' },
});

interface SavedConfig {
  profiles: Record<string, Record<string, string>>;
}

function readConfig(dir: string): SavedConfig {
  return JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as SavedConfig;
}

function modeOf(dir: string): number {
  return statSync(join(dir, 'config.json')).mode & 0o777;
}

/** Types an answer into an input prompt after waiting for its question (nothing: Enter alone). */
async function answer(session: Session, question: string, text: string): Promise<void> {
  await session.waitFor(question);
  session.type(text);
  session.type(KEY.enter);
}

describe('login --with-token', () => {
  it('checks the token with one request, saves the profile with mode 0600, never prints the token', async () => {
    const dir = tempDir();
    const token = sandbox.tokens.partner;
    const result = await runCli(['login', '--with-token', '--base-url', sandbox.url], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: `${token}\n`,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`Logged in to ${sandbox.url}`);
    expect(result.stderr).toContain('Saved in profile "default"');
    expect(`${result.stdout}${result.stderr}`).not.toContain(token);
    expect(`${result.stdout}${result.stderr}`).not.toContain('[redacted]');
    expect(sandbox.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/v1/webhooks/available']);
    expect(modeOf(dir)).toBe(0o600);
    expect(readConfig(dir).profiles.default).toEqual({ 'base-url': sandbox.url, token });

    // The saved profile is used from now on, and config shows the token redacted.
    const list = await runCli(['refs', 'packagings', 'list', '--search', 'pate'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^403\t/);
    const shown = await runCli(['config', 'get', 'token'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(shown.stdout).toBe('******** (set)\n');
  });

  it('saves a new named profile with the auth header from the flags, and reports it with --json', async () => {
    const dir = tempDir();
    const token = sandbox.tokens.full;
    const result = await runCli(
      [
        '--profile',
        'staging',
        'login',
        '--with-token',
        '--base-url',
        sandbox.url,
        '--auth-header',
        'X-Api-Key',
        '--json',
      ],
      { env: { ORDERCLI_CONFIG_DIR: dir }, stdin: token },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      profile: 'staging',
      baseUrl: sandbox.url,
      authHeader: 'X-Api-Key',
      configPath: join(dir, 'config.json'),
    });
    expect(result.stderr).toContain('sent in the X-Api-Key header');
    expect(`${result.stdout}${result.stderr}`).not.toContain(token);
    expect(readConfig(dir).profiles.staging).toEqual({
      'base-url': sandbox.url,
      token,
      'auth-header': 'X-Api-Key',
    });
    expect(modeOf(dir)).toBe(0o600);
    const contacts = await runCli(['--profile', 'staging', 'contacts', 'list', '--columns', 'id'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
    });
    expect(contacts.code, contacts.stderr).toBe(0);
    expect(contacts.stdout.split('\n')[0]).toBe('101');
  });

  it('takes the base URL from the environment and notes that an environment token wins over the profile', async () => {
    const dir = tempDir();
    const result = await runCli(['login', '--with-token'], {
      env: {
        ORDERCLI_CONFIG_DIR: dir,
        ORDERCLI_BASE_URL: sandbox.url,
        ORDERCLI_TOKEN: 'tok_other_env_value',
      },
      stdin: sandbox.tokens.partner,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'note: ORDERCLI_TOKEN is set in the environment to another value, and takes precedence over the profile.',
    );
    // The base URL from the environment is the one saved: nothing to warn about.
    expect(result.stderr).not.toContain('ORDERCLI_BASE_URL');
    expect(readConfig(dir).profiles.default?.token).toBe(sandbox.tokens.partner);
  });

  it('saves nothing when the service refuses the token (exit 3)', async () => {
    const dir = tempDir();
    const wrong = 'tok_wrong_0d6c4e8a1b29f735';
    const result = await runCli(['login', '--with-token', '--base-url', sandbox.url], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: wrong,
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('The service refused the credentials for GET /api/v1/webhooks/available');
    expect(result.stderr).toContain('hint: Nothing was saved.');
    expect(`${result.stdout}${result.stderr}`).not.toContain(wrong);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('refuses without a base URL, with an empty token, or with a token of several words (exit 2)', async () => {
    const dir = tempDir();
    const noUrl = await runCli(['login', '--with-token'], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: 'abc-def',
    });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toContain('with --with-token, pass --base-url <url> or set ORDERCLI_BASE_URL');
    const empty = await runCli(['login', '--with-token', '--base-url', sandbox.url], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: '\n',
    });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('No token on stdin');
    const twoWords = await runCli(['login', '--with-token', '--base-url', sandbox.url], {
      env: { ORDERCLI_CONFIG_DIR: dir },
      stdin: 'Bearer tok_abcdef\n',
    });
    expect(twoWords.code).toBe(2);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    expect(sandbox.requests).toHaveLength(0);
  });

  it('refuses to prompt without a terminal, pointing at --with-token (exit 2)', async () => {
    const result = await runCli(['login'], { env: { ORDERCLI_BASE_URL: sandbox.url } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ordercli login --with-token --base-url <url>');
  });
});

describe('login on a terminal', () => {
  it('asks for the base URL, the token (not echoed) and the header, checks them, and saves them', async () => {
    const dir = tempDir();
    const token = sandbox.tokens.partner;
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir });
    await answer(session, 'Base URL of the service', 'ftp://example.com');
    await session.waitFor('The base URL must start with https://');
    // Clear the wrong value, then type the right one.
    session.type('\x7f'.repeat(20));
    session.type(sandbox.url);
    session.type(KEY.enter);
    await answer(session, 'API token (not shown)', token);
    await answer(session, 'Header to send the token in', '');
    expect(await session.done).toBe(0);
    const output = `${session.io.stdoutText()}${session.io.stderrText()}`;
    expect(output).not.toContain(token);
    // Not even masked: the prompt shows nothing of what is typed.
    expect(output).not.toContain('[redacted]');
    expect(output).not.toContain(token.slice(0, 8));
    expect(stripAnsi(session.io.stderrText())).toContain(`Logged in to ${sandbox.url}`);
    expect(readConfig(dir).profiles.default).toEqual({ 'base-url': sandbox.url, token });
    expect(modeOf(dir)).toBe(0o600);
  });

  it('Escape goes back one question, offering the answer given there, and erases the question it leaves', async () => {
    const dir = tempDir();
    const token = sandbox.tokens.partner;
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir });
    await answer(session, 'Base URL of the service', sandbox.url);
    await session.waitFor('API token (not shown)');
    session.type(KEY.escape);
    // Back at the base URL, offered again; the token question is no longer on the screen.
    await session.waitFor(`Base URL of the service (${sandbox.url})`);
    expect(screenLines(session.io.stdoutText()).filter((line) => line.includes('API token'))).toEqual([]);
    session.type(KEY.enter);
    await answer(session, 'API token (not shown)', token);
    await session.waitFor('Header to send the token in');
    session.type(KEY.escape);
    await answer(session, 'API token (not shown)', token);
    await answer(session, 'Header to send the token in', '');
    expect(await session.done).toBe(0);
    expect(readConfig(dir).profiles.default).toEqual({ 'base-url': sandbox.url, token });
    const screen = screenLines(session.io.stdoutText()).filter((line) => line !== '');
    expect(screen.filter((line) => line.includes('Header to send the token in'))).toHaveLength(1);
  });

  it('Escape erases the answer it goes back to: each question is on the screen once', async () => {
    const dir = tempDir();
    const token = sandbox.tokens.partner;
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir });
    await answer(session, 'Base URL of the service', 'http://127.0.0.1:1');
    await session.waitFor('API token (not shown)');
    session.type(KEY.escape);
    await session.waitFor('Base URL of the service (http://127.0.0.1:1)');
    session.type('\x7f'); // the offered answer dropped: type the right one
    session.type(sandbox.url);
    session.type(KEY.enter);
    await answer(session, 'API token (not shown)', token);
    await answer(session, 'Header to send the token in', 'X-Api-Key');
    expect(await session.done, session.io.stderrText()).toBe(0);
    const screen = screenLines(session.io.stdoutText()).filter((line) => line !== '');
    expect(screen).toEqual([
      `✔ Base URL of the service ${sandbox.url}`,
      '✔ API token (not shown)',
      '✔ Header to send the token in (empty: Authorization: Bearer) X-Api-Key',
    ]);
  });

  it('says why a token is refused and asks for it again, then saves the right one; --with-token still exits 3', async () => {
    const dir = tempDir();
    const wrong = 'tok_wrong_5e1a7c93d2b04f68';
    const token = sandbox.tokens.partner;
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_BASE_URL: sandbox.url });
    await answer(session, 'Base URL of the service', ''); // the default, from ORDERCLI_BASE_URL
    await answer(session, 'API token (not shown)', wrong);
    await answer(session, 'Header to send the token in', '');
    await session.waitFor(`The service at ${sandbox.url} refused the token (401 Unauthorized)`);
    await answer(session, 'API token (not shown)', token);
    await answer(session, 'Header to send the token in', '');
    expect(await session.done, session.io.stderrText()).toBe(0);
    expect(readConfig(dir).profiles.default).toEqual({ 'base-url': sandbox.url, token });
    expect(sandbox.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/webhooks/available',
      'GET /api/v1/webhooks/available',
    ]);
    const output = `${session.io.stdoutText()}${session.io.stderrText()}`;
    expect(output).not.toContain(wrong.slice(0, 12));
    expect(output).not.toContain(token.slice(0, 12));
    // Why, once, above the token asked again; each question shown once.
    const screen = screenLines(session.io.stdoutText()).filter((line) => line !== '');
    expect(screen[0]).toBe(`✔ Base URL of the service ${sandbox.url}`);
    expect(screen[1]).toBe(
      `The service at ${sandbox.url} refused the token (401 Unauthorized); nothing was saved.`,
    );
    expect(screen.slice(-2)).toEqual([
      '✔ API token (not shown)',
      '✔ Header to send the token in (empty: Authorization: Bearer)',
    ]);
    // Wrapped at words to the terminal's width: read as one text.
    expect(screen.join(' ').replace(/\s+/g, ' ')).toContain(
      'Check the token, and that the service reads it as Authorization: Bearer. 2 more tries (Esc goes back to the base URL, Ctrl-C leaves).',
    );
    expect(screen.filter((line) => line.includes('API token'))).toHaveLength(1);

    // Without a terminal there is no one to ask: a refused token is exit 3, nothing saved.
    const other = tempDir();
    const piped = await runCli(['login', '--with-token', '--base-url', sandbox.url], {
      env: { ORDERCLI_CONFIG_DIR: other },
      stdin: wrong,
    });
    expect(piped.code).toBe(3);
    expect(piped.stderr).toContain('The service refused the credentials for GET /api/v1/webhooks/available');
    expect(existsSync(join(other, 'config.json'))).toBe(false);
  });

  it(`gives up after ${3} refused tokens on a terminal (exit 3, nothing saved)`, async () => {
    const dir = tempDir();
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_BASE_URL: sandbox.url });
    await answer(session, 'Base URL of the service', '');
    for (const [attempt, left] of [
      [1, '2 more tries'],
      [2, 'One more try'],
      [3, undefined],
    ] as const) {
      await answer(session, 'API token (not shown)', `tok_wrong_attempt_${attempt}`);
      await answer(session, 'Header to send the token in', '');
      if (left !== undefined) await session.waitFor(left);
    }
    expect(await session.done).toBe(3);
    expect(stripAnsi(session.io.stderrText())).toContain(
      'The service refused the credentials for GET /api/v1/webhooks/available',
    );
    expect(sandbox.requests).toHaveLength(3);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('Escape at the first question leaves, erasing it, and saves nothing (exit 130)', async () => {
    const dir = tempDir();
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir });
    await session.waitFor('Base URL of the service');
    session.type(KEY.escape);
    expect(await session.done).toBe(130);
    expect(session.io.stderrText()).toContain('Login abandoned; nothing was saved.');
    expect(screenLines(session.io.stdoutText()).filter((line) => line !== '')).toEqual([]);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
  });

  it('leaves nothing saved when the user presses Ctrl-C (exit 130)', async () => {
    const dir = tempDir();
    const session = startSession(['login'], { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_BASE_URL: sandbox.url });
    await answer(session, 'Base URL of the service', ''); // the default, from ORDERCLI_BASE_URL
    await session.waitFor('API token');
    session.type('tok_half');
    session.type(KEY.ctrlC);
    expect(await session.done).toBe(130);
    expect(existsSync(join(dir, 'config.json'))).toBe(false);
    expect(sandbox.requests).toHaveLength(0);
  });
});
