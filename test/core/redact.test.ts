/**
 * Secrets stay secret: `--verbose` traces mask secret-named JSON fields of bodies (nested at any
 * depth) and every known secret; commands that print a service answer mask its secret fields
 * unless --show-secrets is given. Against the real sandbox, in-process.
 */
import { describe, expect, it } from 'vitest';
import {
  isSecretField,
  REDACTED,
  Redactor,
  redactSecretFields,
  redactUrlPassword,
  urlPasswords,
} from '../../src/core/redact.js';
import { runCli, tempDir } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox();
const HOOK = 'http://127.0.0.1:9/hooks';

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.full,
    ORDERCLI_CONFIG_DIR: tempDir(),
    ...extra,
  };
}

describe('secret field names', () => {
  it('are matched by their words, in any spelling', () => {
    for (const name of [
      'key',
      'token',
      'secret',
      'password',
      'apiKey',
      'api_key',
      'webhookKey',
      'WEBHOOK-KEY',
      'accessToken',
      'refresh_token',
      'clientSecret',
      'secretValue',
      'X-Auth-Token',
    ])
      expect(isSecretField(name), name).toBe(true);
    for (const name of [
      'id',
      'event',
      'url',
      'tokenType',
      'keyId',
      'monkey',
      'keyboard',
      'code',
      'description',
    ])
      expect(isSecretField(name), name).toBe(false);
  });

  it('are masked nested at any depth, in objects and arrays; the rest is untouched', () => {
    const answer = {
      id: 1,
      data: {
        subscription: { webhookKey: 'k1', url: 'u' },
        list: [{ token: 't2' }, { secret: { a: 's3', b: true } }],
      },
      password: null,
    };
    const { value, fields } = redactSecretFields(answer);
    expect(fields).toEqual(['data.subscription.webhookKey', 'data.list[0].token', 'data.list[1].secret']);
    expect(value).toEqual({
      id: 1,
      data: {
        subscription: { webhookKey: REDACTED, url: 'u' },
        list: [{ token: REDACTED }, { secret: { a: REDACTED, b: true } }],
      },
      password: null,
    });
    const plain = { id: 2, items: [{ code: 'x' }] };
    expect(redactSecretFields(plain).value).toBe(plain);
  });

  it('a trace body is masked by field name, even when it does not parse, and known secrets by value', () => {
    const redactor = new Redactor();
    redactor.addSecret('the-api-token');
    expect(redactor.redactBody('{"a":{"key":"whk_1234"},"note":"the-api-token"}')).toBe(
      `{"a":{"key":"${REDACTED}"},"note":"${REDACTED}"}`,
    );
    expect(redactor.redactBody('{"id":1,"apiKey": "abcdef", "url":"http://x"')).toBe(
      `{"id":1,"apiKey": "${REDACTED}", "url":"http://x"`,
    );
  });
});

describe('--verbose traces', () => {
  it('webhooks subscribe: the key of the answer is not in the response trace', async () => {
    const result = await runCli(
      ['--verbose', 'webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', HOOK],
      { env: env() },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^< \{.*"key":"\[redacted\]".*\}$/m);
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });

  it('api PUT: secret fields of the request body are masked in the request trace', async () => {
    const body = JSON.stringify({
      event: 'sales_order_validated',
      url: HOOK,
      meta: { password: 'hunter2-hunter2' },
    });
    const result = await runCli(['--verbose', 'api', 'PUT', 'webhooks', '--data', body], { env: env() });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('"password":"[redacted]"');
    expect(result.stdout + result.stderr).not.toContain('hunter2-hunter2');
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });

  it('the webhook key from the environment is masked in every trace line', async () => {
    const result = await runCli(['--verbose', 'api', 'GET', `orders?note=${sandbox.webhookKey}`], {
      env: env({ ORDERCLI_WEBHOOK_KEY: sandbox.webhookKey }),
    });
    expect(result.stderr).toContain('> GET ');
    expect(result.stdout + result.stderr).not.toContain(sandbox.webhookKey);
  });
});

describe('commands that print a service answer', () => {
  async function subscribe(): Promise<void> {
    const result = await runCli(
      ['webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', HOOK],
      {
        env: env(),
      },
    );
    expect(result.code).toBe(0);
  }

  it('api GET webhooks: keys redacted, with one note on stderr; --show-secrets prints them', async () => {
    await subscribe();
    const hidden = await runCli(['api', 'GET', 'webhooks'], { env: env() });
    expect(hidden.code).toBe(0);
    expect(JSON.parse(hidden.stdout)[0].key).toBe(REDACTED);
    expect(hidden.stderr).toBe(
      'note: 1 secret field of the answer redacted ([0].key); --show-secrets prints it.\n',
    );
    expect(hidden.stdout + hidden.stderr).not.toContain(sandbox.webhookKey);

    // Even when the key is the configured one (which the redactor knows), --show-secrets shows it.
    const shown = await runCli(['api', 'GET', 'webhooks', '--show-secrets'], {
      env: env({ ORDERCLI_WEBHOOK_KEY: sandbox.webhookKey }),
    });
    expect(JSON.parse(shown.stdout)[0].key).toBe(sandbox.webhookKey);
    expect(shown.stderr).toBe('');
  });

  it('get <entity> <id>: redacted by default, shown with --show-secrets', async () => {
    await subscribe();
    const hidden = await runCli(['get', 'webhooks', '1'], { env: env() });
    expect(hidden.code).toBe(0);
    expect(JSON.parse(hidden.stdout)).toMatchObject({ id: 1, key: REDACTED });
    expect(hidden.stderr).toContain('(key); --show-secrets prints it');
    const shown = await runCli(['get', 'webhooks', '1', '--show-secrets'], { env: env() });
    expect(JSON.parse(shown.stdout).key).toBe(sandbox.webhookKey);
  });

  it('webhooks subscribe --show-secrets prints the key once; without it, never', async () => {
    const hidden = await runCli(
      ['--json', 'webhooks', 'subscribe', '--event', 'sales_order_validated', '--url', HOOK],
      { env: env() },
    );
    expect(JSON.parse(hidden.stdout).key).toBe(REDACTED);
    expect(hidden.stderr).toContain('--show-secrets (prints it)');
    expect(hidden.stdout + hidden.stderr).not.toContain(sandbox.webhookKey);
    const shown = await runCli(
      [
        '--json',
        'webhooks',
        'subscribe',
        '--event',
        'sales_order_validated',
        '--url',
        HOOK,
        '--show-secrets',
      ],
      { env: env() },
    );
    expect(JSON.parse(shown.stdout).key).toBe(sandbox.webhookKey);
    expect(shown.stderr).toContain('printed above as asked (--show-secrets)');
    expect(shown.stderr).not.toContain(sandbox.webhookKey);
  });
});

describe('lists, records and error details', () => {
  it('a list or a record whose fields are secrets shows them masked, in every format, with a note', async () => {
    const { unwrapList } = await import('../../src/api/references.js');
    const { writeListAnswer, writeRecord } = await import('../../src/io/list-output.js');
    const { createTestIO } = await import('../../src/io/memory.js');
    const records = [{ id: 1, name: 'a', apiKey: 'ak_secret_value_1' }];
    for (const json of [true, false]) {
      const io = createTestIO();
      await writeListAnswer(io, unwrapList(records), { what: 'things', columns: [] }, { json });
      expect(io.stdoutText()).toContain(REDACTED);
      expect(io.stdoutText()).not.toContain('ak_secret_value_1');
      expect(io.stderrText()).toContain('note: 1 secret field of the answer redacted ([0].apiKey)');
    }
    const io = createTestIO();
    await writeRecord(io, records[0]);
    expect(io.stdoutText()).not.toContain('ak_secret_value_1');
  });

  it("an error's details from the service mask secret fields", async () => {
    const { describeServiceDetails } = await import('../../src/api/errors.js');
    const lines = describeServiceDetails({ subscription: { url: 'x', secret: 'shh-its-a-secret' } }).join(
      '\n',
    );
    expect(lines).toContain('"secret": "[redacted]"');
    expect(lines).not.toContain('shh-its-a-secret');
    expect(describeServiceDetails('{"token": "tok_abcdef"').join('\n')).not.toContain('tok_abcdef');
  });
});

describe('the password of a URL (a PostgreSQL ledger)', () => {
  it('is everything between the first colon of the user info and the last @, parsed or not', () => {
    const cases: [string, string, string[]][] = [
      ['postgres://ci:s3cret@db:5432/x', 'postgres://ci:***@db:5432/x', ['s3cret']],
      // Not a URL at all for the parser: `/` and `@` unencoded in the password.
      [
        'postgres://ci:Tr0ub4dor/horse@localhost:56543/shared',
        'postgres://ci:***@localhost:56543/shared',
        ['Tr0ub4dor/horse'],
      ],
      [
        'postgres://ci:p@ss:w/rd%@localhost:56543/shared',
        'postgres://ci:***@localhost:56543/shared',
        ['p@ss:w/rd%'],
      ],
      // Percent-encoded: masked as written, and known decoded too.
      [
        'postgresql://u:p%40ss%3Aw%2Frd@db/x?sslmode=require',
        'postgresql://u:***@db/x?sslmode=require',
        ['p%40ss%3Aw%2Frd', 'p@ss:w/rd'],
      ],
      [
        'postgres://db/x?sslmode=require&password=hunter22',
        'postgres://db/x?sslmode=require&password=***',
        ['hunter22'],
      ],
      ['postgres://ci@db/x', 'postgres://ci@db/x', []],
      ['/var/lib/ordercli/ledger', '/var/lib/ordercli/ledger', []],
    ];
    for (const [url, shown, passwords] of cases) {
      expect(redactUrlPassword(url), url).toBe(shown);
      expect(urlPasswords(url), url).toEqual(passwords);
    }
  });

  it('is masked in every stream once registered with the redactor', () => {
    const redactor = new Redactor();
    for (const password of urlPasswords('postgres://ci:p@ss:w/rd%@localhost/x')) redactor.addSecret(password);
    expect(redactor.redact('pg said: password p@ss:w/rd% refused')).toBe(
      `pg said: password ${REDACTED} refused`,
    );
  });
});
