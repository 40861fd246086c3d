// `auth status` against a real sandbox: one GET /api/v1/contacts says whether the token is
// accepted and with which access (full: an answer; partner: 403), exit 3 when refused or missing,
// 1 when the service cannot be reached; where the token and the webhook key come from; --json;
// and never a secret, nor a piece of one, in any output.
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, configFolder, runBin, runCli } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const FULL = 'tok-Fq7Zr2Lw9Xk4Pm8';
const PARTNER = 'tok-Hd3Vn6Jc1Tb5Ys0';
const WEBHOOK_KEY = 'whk-Qe4Ua9Gi2Ro7Wz3';
const sandbox = useSandbox({ tokens: { full: FULL, partner: PARTNER }, webhookKey: WEBHOOK_KEY });

/** A config folder whose default profile holds these values (mode 0600, as ordercli writes it). */
function configWith(profile: Record<string, string>): string {
  return configFolder({ default: profile });
}

/** A port of 127.0.0.1 that nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every piece of 5 characters of a secret: none may appear anywhere. */
function expectNoPieceOf(secrets: string[], result: CliResult): void {
  const output = result.stdout + result.stderr;
  for (const secret of secrets) {
    for (let at = 0; at + 5 <= secret.length; at++) {
      expect(output, `a piece of a secret (${secret.slice(at, at + 5)}) was printed`).not.toContain(
        secret.slice(at, at + 5),
      );
    }
  }
}

describe('auth status', () => {
  it('a full token given by flag: exit 0, full access, with one GET /api/v1/contacts (built binary)', async () => {
    const result = await runBin(['--base-url', sandbox.url, '--token', FULL, 'auth', 'status']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Base URL:     ${sandbox.url} (from --base-url)\n`);
    expect(result.stdout).toContain('Token:        set (from --token), sent as Authorization: Bearer\n');
    expect(result.stdout).toContain(
      'Service:      accepts the token: full access (CRM and catalog); GET /api/v1/contacts answered 200 OK\n',
    );
    expect(result.stderr).toBe('');
    expect(sandbox.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /api/v1/contacts 200',
    ]);
    expectNoPieceOf([FULL], result);
  });

  it('a partner token from ORDERCLI_TOKEN: exit 0, partner access, the source named', async () => {
    const result = await runCli(['--base-url', sandbox.url, 'auth', 'status'], {
      env: { ORDERCLI_TOKEN: PARTNER },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'Token:        set (from ORDERCLI_TOKEN), sent as Authorization: Bearer\n',
    );
    expect(result.stdout).toContain('accepts the token: partner access');
    expect(result.stdout).toContain('GET /api/v1/contacts answered 403 Forbidden');
    expect(sandbox.requests).toHaveLength(1);
    expectNoPieceOf([PARTNER], result);
    // The raw token in another header, as --auth-header sends it: the sandbox reads X-Api-Key.
    const header = await runCli(['--base-url', sandbox.url, '--auth-header', 'X-Api-Key', 'auth', 'status'], {
      env: { ORDERCLI_TOKEN: FULL },
    });
    expect(header.code, header.stderr).toBe(0);
    expect(header.stdout).toContain(
      'Token:        set (from ORDERCLI_TOKEN), sent in the X-Api-Key header\n',
    );
    expect(header.stdout).toContain('full access');
    expectNoPieceOf([FULL], header);
  });

  it('token, base URL and webhook key from the profile; the environment wins over the profile, and says so', async () => {
    const dir = configWith({ 'base-url': sandbox.url, token: FULL, 'webhook-key': WEBHOOK_KEY });
    const fromProfile = await runCli(['auth', 'status'], { env: { ORDERCLI_CONFIG_DIR: dir } });
    expect(fromProfile.code, fromProfile.stderr).toBe(0);
    expect(fromProfile.stdout).toContain(`Profile:      default (${join(dir, 'config.json')})\n`);
    expect(fromProfile.stdout).toContain(`Base URL:     ${sandbox.url} (from the profile "default")\n`);
    expect(fromProfile.stdout).toContain('Token:        set (from the profile "default")');
    expect(fromProfile.stdout).toContain('Webhook key:  set (from the profile "default")\n');
    expect(fromProfile.stdout).toContain('full access');

    const fromEnv = await runCli(['auth', 'status'], {
      env: { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_TOKEN: PARTNER, ORDERCLI_WEBHOOK_KEY: 'whk-Ev9Kx2Lp6' },
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toContain('Token:        set (from ORDERCLI_TOKEN)');
    expect(fromEnv.stdout).toContain('Webhook key:  set (from ORDERCLI_WEBHOOK_KEY)\n');
    expect(fromEnv.stdout).toContain('partner access');
    expectNoPieceOf([FULL, PARTNER, WEBHOOK_KEY, 'whk-Ev9Kx2Lp6'], fromProfile);
    expectNoPieceOf([FULL, PARTNER, WEBHOOK_KEY, 'whk-Ev9Kx2Lp6'], fromEnv);
  });

  it('--json: the report as an object, the same for a refused token (exit 3)', async () => {
    const dir = configWith({ 'webhook-key': WEBHOOK_KEY });
    const result = await runCli(['--base-url', sandbox.url, '--json', 'auth', 'status'], {
      env: { ORDERCLI_CONFIG_DIR: dir, ORDERCLI_TOKEN: FULL },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      profile: 'default',
      configPath: join(dir, 'config.json'),
      baseUrl: { value: sandbox.url, source: 'flag', sourceName: '--base-url' },
      token: { set: true, header: 'Authorization', source: 'env', sourceName: 'ORDERCLI_TOKEN' },
      webhookKey: { set: true, source: 'profile', sourceName: 'profile' },
      service: { request: 'GET /api/v1/contacts', result: 'accepted', status: 200, access: 'full' },
    });

    const refused = await runCli(
      ['--base-url', sandbox.url, '--json', 'auth', 'status', '--auth-header', 'X-Api-Key'],
      {
        env: { ORDERCLI_TOKEN: 'tok-Zx81Qw55Rt' },
      },
    );
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      token: { set: true, header: 'X-Api-Key', source: 'env' },
      webhookKey: { set: false, source: null, sourceName: null },
      service: { result: 'refused', status: 401, access: null },
    });
    expectNoPieceOf([FULL, WEBHOOK_KEY, 'tok-Zx81Qw55Rt'], result);
    expectNoPieceOf(['tok-Zx81Qw55Rt'], refused);
  });

  it('a token the service refuses: exit 3, the report then the error naming where the token came from (built binary)', async () => {
    const bad = 'tok-Rb4Mc8Nd2';
    const result = await runBin(['--base-url', sandbox.url, 'auth', 'status'], {
      env: { ORDERCLI_TOKEN: bad },
    });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain(
      'Service:      refuses the token; GET /api/v1/contacts answered 401 Unauthorized\n',
    );
    expect(result.stderr).toContain('error: The service refused the credentials for GET /api/v1/contacts');
    expect(result.stderr).toContain('hint: The token comes from ORDERCLI_TOKEN');
    expectNoPieceOf([bad], result);
    // Even the trace of --verbose shows no piece of it.
    const traced = await runCli(['--verbose', '--base-url', sandbox.url, '--token', bad, 'auth', 'status']);
    expect(traced.code).toBe(3);
    expect(traced.stderr).toContain('GET');
    expectNoPieceOf([bad], traced);
  });

  it('an unreachable base URL (a closed port of 127.0.0.1): exit 1, "not reached" (built binary)', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await runBin(['--base-url', url, '--token', FULL, '--retries', '0', 'auth', 'status']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('Service:      not reached (GET /api/v1/contacts)\n');
    expect(result.stderr).toContain(`error: Could not connect to ${url}`);
    expectNoPieceOf([FULL], result);
    const json = await runCli([
      '--base-url',
      url,
      '--token',
      FULL,
      '--retries',
      '0',
      '--json',
      'auth',
      'status',
    ]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).service).toEqual({
      request: 'GET /api/v1/contacts',
      result: 'unreachable',
      status: null,
      access: null,
    });
  });

  it('no token: exit 3 without asking the service; no base URL: exit 2', async () => {
    const noToken = await runCli(['--base-url', sandbox.url, 'auth', 'status']);
    expect(noToken.code).toBe(3);
    expect(noToken.stdout).toContain('Token:        not set');
    expect(noToken.stdout).toContain('Service:      not asked\n');
    expect(noToken.stderr).toContain('error: No token, so the service was not asked.');
    expect(sandbox.requests).toEqual([]);
    const noUrl = await runCli(['--token', FULL, 'auth', 'status']);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stdout).toContain('Base URL:     not set');
    expect(noUrl.stderr).toContain('No service address');
    expectNoPieceOf([FULL], noUrl);
  });
});
