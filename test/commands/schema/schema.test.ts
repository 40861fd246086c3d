// `schema <name> [--items] [--output <file>]`: the JSON Schemas on stdout or in a file, usage errors.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  contactReferenceJsonSchema,
  orderItemJsonSchema,
  orderJsonSchema,
  ordersJsonSchema,
} from '../../../src/schemas/json-schema.js';
import { runBin, runCli, tempDir } from '../../support/cli.js';
import { probe, requireTool } from '../../support/requirements.js';

const HAS_BASH = requireTool('bash', {
  what: 'completing the schema names in bash (test/commands/schema/schema.test.ts)',
  missing: probe('bash', '--version'),
  how: 'apt-get install -y bash',
});

describe('schema', () => {
  it('prints each schema as indented JSON on stdout, nothing on stderr', async () => {
    const cases: [string[], unknown][] = [
      [['schema', 'order'], orderJsonSchema()],
      [['schema', 'orders'], ordersJsonSchema()],
      [['schema', 'order', '--items'], orderItemJsonSchema()],
      [['schema', 'orders', '--items'], orderItemJsonSchema()],
      [['schema', 'contact-reference'], contactReferenceJsonSchema()],
    ];
    for (const [args, expected] of cases) {
      const { code, stdout, stderr } = await runCli(args);
      expect(code, args.join(' ')).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    }
  });

  it('writes it to --output and says so on stderr', async () => {
    const dir = tempDir();
    const { code, stdout, stderr } = await runCli(['schema', 'order', '--output', 'order.schema.json'], {
      cwd: dir,
    });
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe('Wrote the JSON Schema of order to order.schema.json.\n');
    expect(JSON.parse(readFileSync(join(dir, 'order.schema.json'), 'utf8'))).toEqual(orderJsonSchema());
  });

  it('refuses an unknown name with exit 2, listing the names', async () => {
    const { code, stdout, stderr } = await runCli(['schema', 'ordre']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      'Unknown schema "ordre": the schemas are order, orders, contact-reference (see ordercli schema --help).',
    );
  });

  it('refuses --items with contact-reference, and a file it cannot write, with exit 2', async () => {
    const items = await runCli(['schema', 'contact-reference', '--items']);
    expect(items.code).toBe(2);
    expect(items.stderr).toContain('--items goes with schema order or orders');
    const dir = tempDir();
    // A missing folder is created; a folder in place of the file is not a file.
    const created = await runCli(['schema', 'order', '--output', 'new/order.schema.json'], { cwd: dir });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'new/order.schema.json'), 'utf8'))).toHaveProperty('$schema');
    mkdirSync(join(dir, 'taken.json'));
    const output = await runCli(['schema', 'order', '--output', 'taken.json'], { cwd: dir });
    expect(output.code).toBe(2);
    expect(output.stderr).toContain(
      'Cannot write the schema to taken.json (EISDIR: it is a folder); nothing was written.',
    );
    expect(output.stderr).not.toContain('    at ');
  });

  it.runIf(HAS_BASH)('completes the names in bash', async () => {
    const { stdout: script } = await runCli(['completion', 'bash']);
    const program = `${script}\nCOMP_WORDS=(ordercli schema ''); COMP_CWORD=2; _ordercli; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' });
    expect(result.stdout.split('\n').filter(Boolean)).toEqual(['order', 'orders', 'contact-reference']);
  });

  it('works through the built binary (npm run build first)', async () => {
    const { code, stdout } = await runBin(['schema', 'order', '--items']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(orderItemJsonSchema());
  });
});
