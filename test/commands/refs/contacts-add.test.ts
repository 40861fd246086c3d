// `refs contacts add` against the sandbox: flags or --file, checked before anything is sent.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';

const sandbox = useSandbox();
let env: Record<string, string>;
beforeAll(() => {
  env = { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.partner };
});

const FLAGS = [
  '--external-reference',
  'PART-C-0042',
  '--first-name',
  'Jeanne',
  '--last-name',
  'Roux',
  '--email',
  'jeanne.roux@epicerie-roux.fr',
  '--customer',
  'Épicerie Roux',
];

const posts = () => sandbox.requests.filter((request) => request.method === 'POST');

describe('refs contacts add', () => {
  it('creates a contact reference from the flags, prints it and the snippet, and lists it afterwards', async () => {
    const result = await runCli(['refs', 'contacts', 'add', ...FLAGS], { env });
    expect(result.code, result.stderr).toBe(0);
    const fields = Object.fromEntries(
      result.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split('\t')),
    );
    expect(fields).toMatchObject({
      'contact.externalReference': 'PART-C-0042',
      'contact.email': 'jeanne.roux@epicerie-roux.fr',
      'customer.name': 'Épicerie Roux',
    });
    const id = Number(fields.id);
    expect(Number.isInteger(id)).toBe(true);
    expect(result.stderr).toContain(`"contact": {"internalReferenceId": ${id}}`);

    const list = await runCli(['refs', 'contacts', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toContainEqual({
      id,
      contact: {
        externalReference: 'PART-C-0042',
        firstName: 'Jeanne',
        lastName: 'Roux',
        email: 'jeanne.roux@epicerie-roux.fr',
      },
      customer: { name: 'Épicerie Roux' },
    });
  });

  it('prints what the service returned with --json', async () => {
    const result = await runCli(['refs', 'contacts', 'add', ...FLAGS, '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id: expect.any(Number),
      customer: { name: 'Épicerie Roux' },
    });
  });

  it('takes the whole body from --file (unknown fields kept) or stdin', async () => {
    const dir = tempDir();
    const file = join(dir, 'contact.json');
    const body = {
      contact: {
        externalReference: 'PART-C-0050',
        firstName: 'Yves',
        lastName: 'Le Bihan',
        email: 'yves@ty-coz.bzh',
      },
      customer: { name: 'Ty Coz', siret: '12345678900011' },
    };
    writeFileSync(file, `\uFEFF${JSON.stringify(body)}`);
    const fromFile = await runCli(['refs', 'contacts', 'add', '--file', 'contact.json', '--json'], {
      env,
      cwd: dir,
    });
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({
      customer: { name: 'Ty Coz', siret: '12345678900011' },
    });
    const fromStdin = await runCli(['refs', 'contacts', 'add', '--file', '-', '--json'], {
      env,
      stdin: JSON.stringify({ ...body, contact: { ...body.contact, externalReference: 'PART-C-0051' } }),
    });
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(posts()).toHaveLength(2);
  });

  it('lists every problem by flag and sends nothing when the contact is invalid (exit 2)', async () => {
    const result = await runCli(
      [
        'refs',
        'contacts',
        'add',
        '--external-reference',
        'PART-C-0043',
        '--first-name',
        'Jeanne',
        '--email',
        'jeanne-at-roux',
      ],
      { env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('The contact reference is invalid; nothing was sent.');
    expect(result.stderr).toContain('command line: --last-name: is required');
    expect(result.stderr).toContain('command line: --email: must be an e-mail address');
    expect(result.stderr).toContain('command line: --customer: is required');
    expect(result.stdout).toBe('');
    expect(posts()).toHaveLength(0);
  });

  it('names the file and field of a problem in --file, and refuses a file that is not JSON', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({ contact: { externalReference: 'X', firstName: 'A', lastName: 'B', email: 'a@b.fr' } }),
    );
    writeFileSync(join(dir, 'broken.json'), '{"contact": ');
    const bad = await runCli(['refs', 'contacts', 'add', '--file', 'bad.json'], { env, cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bad.json: customer: is required');
    const broken = await runCli(['refs', 'contacts', 'add', '--file', 'broken.json'], { env, cwd: dir });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain('broken.json is not valid JSON; nothing was sent.');
    expect(posts()).toHaveLength(0);
  });

  it('refuses both --file and flags, or neither (exit 2)', async () => {
    const both = await runCli(['refs', 'contacts', 'add', '--file', 'x.json', '--email', 'a@b.fr'], { env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('either with --file or with the field flags, not both');
    const neither = await runCli(['refs', 'contacts', 'add'], { env });
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain(
      '--external-reference, --first-name, --last-name, --email and --customer, or with --file',
    );
  });
});
