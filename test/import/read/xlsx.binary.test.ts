// The built binary imports a workbook as a user runs it: saxes and numfmt (and exceljs, which
// writes a workbook of rejects) load from the installed package (they stay out of the bundle and
// out of start-up), and the sandbox receives the orders exactly as the interface shows them.
// Needs `npm run build`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runBin, tempDir } from '../../support/cli.js';
import { useSandbox } from '../../support/sandbox.js';
import { FRENCH_BODIES, writeFrenchOrders, writeMap } from '../../support/workbooks.js';

const sandbox = useSandbox();

describe('orders import of a workbook through the built binary', () => {
  it('sends the orders of the French workbook, then a re-run sends nothing', async () => {
    const dir = tempDir();
    const input = await writeFrenchOrders(dir);
    // Both runs on one machine: one config folder, so one order ledger.
    const env = { ORDERCLI_CONFIG_DIR: tempDir('ordercli-config-') };
    const args = [
      '--base-url',
      sandbox.url,
      '--token',
      sandbox.tokens.partner,
      'orders',
      'import',
      input,
      '--map',
      writeMap(dir),
    ];
    const result = await runBin(args, { env, timeoutMs: 120_000 });
    expect(result.code, result.stderr).toBe(0);
    const bodies = sandbox.requests
      .filter((request) => request.method === 'POST' && request.path === '/api/v1/orders')
      .map((request) => request.body);
    expect(bodies.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(FRENCH_BODIES);
    const again = await runBin(args, { env, timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/skipped\s+2/);
    expect(sandbox.orders()).toHaveLength(2);
  });

  it('keeps exceljs, numfmt and saxes out of the start-up chunk', () => {
    const main = readFileSync(join(ROOT, 'dist/cli/main.js'), 'utf8');
    expect(main).not.toMatch(/from\s*["'](exceljs|numfmt|saxes)["']/);
    // They are imported by the chunks of the workbook reader and writer only, with import().
    const chunks = readdirSync(join(ROOT, 'dist/chunks')).filter((name) => name.endsWith('.js'));
    const importers = chunks.filter((name) =>
      /import\(["']exceljs["']\)/.test(readFileSync(join(ROOT, 'dist/chunks', name), 'utf8')),
    );
    expect(importers.length).toBeGreaterThan(0);
  });

  it('keeps pg out of every chunk but the one of the PostgreSQL ledger, which loads it with import()', () => {
    const main = readFileSync(join(ROOT, 'dist/cli/main.js'), 'utf8');
    expect(main).not.toMatch(/["']pg["']/);
    const chunks = readdirSync(join(ROOT, 'dist/chunks')).filter((name) => name.endsWith('.js'));
    const texts = chunks.map((name) => readFileSync(join(ROOT, 'dist/chunks', name), 'utf8'));
    expect(texts.filter((text) => /from\s*["']pg["']/.test(text))).toEqual([]);
    expect(texts.filter((text) => /import\(["']pg["']\)/.test(text))).toHaveLength(1);
  });
});
