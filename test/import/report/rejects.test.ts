// --rejects: invalid orders written back in the input's own format, and read again unchanged.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateImport } from '../../../src/import/check/validate.js';
import { openRejects, writeRejects } from '../../../src/import/report/rejects.js';
import { openOrderSource } from '../../../src/import/source.js';
import { readAll, sourceContext, writeInput } from '../../support/import-input.js';

async function rejectsOf(name: string, content: string | Buffer, rejectsName: string) {
  const ctx = sourceContext();
  writeInput(ctx.cwd, name, content);
  const source = await openOrderSource(name, {}, ctx);
  const validation = await validateImport(source);
  const path = join(ctx.cwd, rejectsName);
  const written = await writeRejects(path, source, validation.invalid);
  return { ctx, source, validation, path, written, bytes: readFileSync(path) };
}

describe('rejects', () => {
  it('writes CSV rows back with the original header, delimiter, line ending and BOM', async () => {
    const text =
      '\uFEFFexternalId;contact.internalReferenceId;deliveryAddress.street;item.internalReferenceId;item.orderedQuantity\r\n' +
      'A-1;301;"Bât. B; 2e\r\nétage";401;2\r\n' +
      'A-1;;;402;"2,5"\r\n' +
      'A-2;302;"rue ""du"" Lac";403;1\r\n' +
      'A-3;303;;404;0;extra\r\n';
    const { validation, bytes, written, ctx } = await rejectsOf('commandes.csv', text, 'rejects.csv');
    expect(validation.invalid.map((order) => order.key)).toEqual(['A-1', 'A-3']);
    expect(written).toBe(2);
    expect(bytes.toString('utf8')).toBe(
      '\uFEFFexternalId;contact.internalReferenceId;deliveryAddress.street;item.internalReferenceId;item.orderedQuantity\r\n' +
        'A-1;301;"Bât. B; 2e\r\nétage";401;2\r\n' +
        // Quoted in the input, but a comma needs no quotes in a semicolon-separated file.
        'A-1;;;402;2,5\r\n' +
        'A-3;303;;404;0;extra\r\n',
    );
    // The rejects file reads back as the same orders.
    const again = await readAll(await openOrderSource('rejects.csv', {}, ctx));
    expect(again.map((order) => order.body)).toEqual(validation.invalid.map((order) => order.body));
  });

  it('writes JSON orders back as an array, text that was not JSON exactly as it was', async () => {
    const text =
      '[\n{"externalId": "B-1", "items": []},\n{"externalId": "B-2", "contact": {"id": 1}, "items": [{"packaging": 1, "orderedQuantity": 1}]},\n{"externalId": oops},\n7\n]';
    const { bytes, written } = await rejectsOf('orders.json', text, 'rejects.json');
    expect(written).toBe(3);
    expect(bytes.toString('utf8')).toBe(
      '[\n  {\n    "externalId": "B-1",\n    "items": []\n  },\n{"externalId": oops},\n7\n]\n',
    );
  });

  it('writes NDJSON lines back one per order', async () => {
    const text =
      '{"externalId":"C-1","items":[]}\n{"externalId":"C-2","contact":{"id":1},"items":[{"packaging":1,"orderedQuantity":1}]}\nnot json\n';
    const { bytes } = await rejectsOf('orders.ndjson', text, 'rejects.ndjson');
    expect(bytes.toString('utf8')).toBe('{"externalId":"C-1","items":[]}\nnot json\n');
  });

  it('writes orders one at a time; with none, the writer is an empty file and writeRejects leaves none', async () => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, 'a.csv', 'externalId,item.orderedQuantity\n');
    const source = await openOrderSource('a.csv', {}, ctx);
    const writer = await openRejects(join(ctx.cwd, 'none.csv'), source);
    expect(await writer.close()).toBe(0);
    expect(readFileSync(join(ctx.cwd, 'none.csv'), 'utf8')).toBe('externalId,item.orderedQuantity\n');
    writeFileSync(join(ctx.cwd, 'none.json'), 'an earlier run');
    expect(await writeRejects(join(ctx.cwd, 'none.json'), { format: 'json' }, [])).toBe(0);
    expect(existsSync(join(ctx.cwd, 'none.json'))).toBe(false);
  });
});
