// Opening an input: format detection, stdin (copied, read twice), --map, and the options' errors.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CancelledError, InputError, UsageError } from '../../src/core/errors.js';
import { validateImport } from '../../src/import/check/validate.js';
import { openOrderSource } from '../../src/import/source.js';
import { FIXTURES, lines, readAll, rejection, sourceContext, writeInput } from '../support/import-input.js';

const CSV =
  'externalId,contact.internalReferenceId,item.internalReferenceId,item.orderedQuantity\nS-1,301,401,2\n';

describe('format', () => {
  it.each([
    ['a.csv', 'csv'],
    ['a.TSV', 'csv'],
    ['a.txt', 'csv'],
    ['a.json', 'json'],
    ['a.ndjson', 'ndjson'],
    ['a.jsonl', 'ndjson'],
  ])('follows the extension of %s', async (name, format) => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, name, format === 'csv' ? CSV : '[]');
    expect((await openOrderSource(name, {}, ctx)).format).toBe(format);
  });

  it('follows --format over the extension, and needs it for an unknown extension', async () => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, 'export.dat', CSV);
    const error = await rejection(openOrderSource('export.dat', {}, ctx));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(
      'Cannot tell the format of export.dat from its extension ".dat": name it .csv, .tsv, .txt, .json, .ndjson, .jsonl or .xlsx, or pass --format csv, json, ndjson or xlsx.',
    );
    const source = await openOrderSource('export.dat', { format: 'csv' }, ctx);
    expect((await readAll(source))[0]?.key).toBe('S-1');
    await expect(openOrderSource('export.dat', { format: 'xml' as 'csv' }, ctx)).rejects.toThrow(
      'Unknown format "xml": use --format csv, json, ndjson or xlsx.',
    );
  });

  it('refuses a missing file, a folder, and options that do not apply', async () => {
    const ctx = sourceContext();
    await expect(openOrderSource('missing.csv', {}, ctx)).rejects.toThrow(
      'Cannot read missing.csv: there is no such file.',
    );
    await expect(openOrderSource('.', { format: 'csv' }, ctx)).rejects.toThrow(
      'Cannot read .: it is not a file.',
    );
    writeInput(ctx.cwd, 'a.json', '[]');
    await expect(openOrderSource('a.json', { delimiter: ';' }, ctx)).rejects.toThrow(
      '--delimiter applies to CSV input only.',
    );
    await expect(openOrderSource('a.json', { mapFile: 'm.json' }, ctx)).rejects.toThrow(UsageError);
  });
});

describe('standard input', () => {
  it('is copied to a private file that can be read twice, and removed on close', async () => {
    const ctx = sourceContext(
      undefined,
      Readable.from([Buffer.from(CSV.slice(0, 20)), Buffer.from(CSV.slice(20))]),
    );
    const source = await openOrderSource('-', { format: 'csv' }, ctx);
    expect(source.file).toBe('stdin');
    expect(existsSync(source.path)).toBe(true);
    const first = await readAll(source);
    const second = await readAll(source);
    expect(second.map((order) => order.body)).toEqual(first.map((order) => order.body));
    expect(first[0]?.location.file).toBe('stdin');
    await source.close();
    await source.close();
    expect(existsSync(source.path)).toBe(false);
  });

  it('needs --format', async () => {
    const error = await rejection(openOrderSource('-', {}, sourceContext()));
    expect(error.message).toBe(
      'Standard input has no file name to tell its format: pass --format csv, json, ndjson or xlsx.',
    );
  });
});

describe('--map', () => {
  it('renames the file’s own headers to the contract’s columns', async () => {
    const source = await openOrderSource(
      'export-erp.csv',
      { mapFile: 'export-erp.map.json' },
      sourceContext(FIXTURES),
    );
    // Rejects keep the file's own header.
    expect(source.header).toEqual([
      'N° commande',
      'Réf. client',
      'Contact',
      'Client',
      'Destinataire',
      'Adresse',
      'CP',
      'Ville',
      'Pays',
      'Code article',
      'Conditionnement',
      'Qté',
    ]);
    const orders = await readAll(source);
    expect(orders[0]?.body).toEqual({
      externalId: 'ERP-55001',
      externalReference: 'CDE-7781',
      contact: { internalReferenceId: 306 },
      customer: { name: 'Café des Arts' },
      deliveryAddress: {
        recipient: 'Zoé Barbier',
        street: '22 rue des Arts',
        zipCode: '06000',
        city: 'Nice',
        country: 'FR',
      },
      items: [
        { productCode: 'CAF-MOU', packagingName: 'Paquet 250 g', orderedQuantity: 12 },
        { productCode: 'JUS-POM', orderedQuantity: 24 },
      ],
    });
    expect(orders[0]?.needsProductResolution).toBe(true);
  });

  it('leaves unmapped headers to be contract columns themselves, and names those that are not', async () => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, 'erp.csv', 'Commande;Qté;item.internalReferenceId;Remarque\nX-1;3;401;urgent\n');
    writeInput(
      ctx.cwd,
      'map.json',
      JSON.stringify({ Commande: 'externalId', Qté: 'item.orderedQuantity', Absent: 'customer.name' }),
    );
    const error = await rejection(openOrderSource('erp.csv', { mapFile: 'map.json' }, ctx));
    expect(error).toBeInstanceOf(InputError);
    expect(lines(error.problems!)[0]).toBe('erp.csv:1: Remarque: is not a column ordercli knows');
  });

  it('refuses a map file that is not JSON, not an object, or names unknown columns', async () => {
    const ctx = sourceContext();
    writeInput(ctx.cwd, 'a.csv', CSV);
    writeFileSync(
      join(ctx.cwd, 'bad.json'),
      '{\n  "Qté": "item.orderedQuantity",\n  "CP" "deliveryAddress.zipCode"\n}',
    );
    let error = await rejection(openOrderSource('a.csv', { mapFile: 'bad.json' }, ctx));
    expect(error.message).toBe('The --map file bad.json is not valid JSON; nothing was sent.');
    expect(lines(error.problems!)).toEqual([
      'bad.json:3: column 8: expected : after the property name, found "\\""',
    ]);

    writeFileSync(join(ctx.cwd, 'list.json'), '["externalId"]');
    error = await rejection(openOrderSource('a.csv', { mapFile: 'list.json' }, ctx));
    expect(error.message).toBe('The --map file list.json must hold a JSON object; nothing was sent.');

    writeFileSync(join(ctx.cwd, 'typo.json'), JSON.stringify({ Qté: 'item.quantity', CP: 'zip' }));
    error = await rejection(openOrderSource('a.csv', { mapFile: 'typo.json' }, ctx));
    expect(lines(error.problems!).slice(0, 2)).toEqual([
      'typo.json: Qté: maps to "item.quantity", which is not a column ordercli knows (did you mean item.orderedQuantity?)',
      'typo.json: CP: maps to "zip", which is not a column ordercli knows (did you mean invoicingAddress.zipCode or deliveryAddress.zipCode?)',
    ]);

    await expect(openOrderSource('a.csv', { mapFile: 'nope.json' }, ctx)).rejects.toThrow(
      'Cannot read the --map file nope.json: there is no such file.',
    );
  });
});

describe('Ctrl-C', () => {
  it('stops the validation pass with the signal’s reason', async () => {
    const controller = new AbortController();
    const ctx = { ...sourceContext(), signal: controller.signal };
    writeInput(ctx.cwd, 'a.csv', CSV);
    const source = await openOrderSource('a.csv', {}, ctx);
    controller.abort(new CancelledError());
    await expect(validateImport(source)).rejects.toBeInstanceOf(CancelledError);
  });
});
