import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';

describe('orders import with many invalid orders', () => {
  it('lists the first thousand problems, counts the rest, and sends nothing (exit 2)', async () => {
    const dir = tempDir();
    const rows = ['externalId,contact.internalReferenceId,item.internalReferenceId,item.orderedQuantity'];
    for (let i = 1; i <= 1005; i++) rows.push(`BAD-${i},301,401,0`);
    const file = join(dir, 'bad.csv');
    writeFileSync(file, `${rows.join('\n')}\n`);
    const result = await runCli(['--base-url', 'http://127.0.0.1:9', 'orders', 'import', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('1005 of 1005 orders');
    expect(result.stderr).toContain(`${file}:1001: item.orderedQuantity`);
    expect(result.stderr).not.toContain(`${file}:1002: item.orderedQuantity`);
    expect(result.stderr).toContain('… and 5 more invalid orders, not listed');
  });
});
