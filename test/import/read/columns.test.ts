// The column plan of a CSV or workbook header: columns left out on purpose (`--ignore-columns`,
// `null` in `--map`), and the hint of an unknown column naming both ways.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../../src/core/errors.js';
import { planColumns, readColumnMap } from '../../../src/import/read/columns.js';
import { tempDir } from '../../support/cli.js';

function planError(header: string[], ignored: string[] = []): InputError {
  try {
    planColumns(header, undefined, 'erp.csv', undefined, ignored);
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('the header was accepted');
}

describe('planColumns with columns left out', () => {
  it('leaves out the named headers, in any case and whatever spaces surround them; the others keep their index', () => {
    const columns = planColumns(
      ['externalId', ' Date ', 'customer.name', 'COLIS'],
      undefined,
      'erp.csv',
      undefined,
      ['date', 'Colis'],
    );
    expect(columns.map((column) => [column.index, column.path])).toEqual([
      [0, 'externalId'],
      [2, 'customer.name'],
    ]);
  });

  it('may leave out a contract column too, and names no header that is not there', () => {
    const columns = planColumns(['externalId', 'customer.name'], undefined, 'erp.csv', undefined, [
      'customer.name',
      'Absent',
    ]);
    expect(columns.map((column) => column.path)).toEqual(['externalId']);
  });

  it('an unknown column is still an error; its hint names --ignore-columns and null in --map with its header', () => {
    const error = planError(['externalId', 'N° lot', "Note d'équipe"]);
    expect(error.hint).toBe(
      `if the import does not need these columns, leave them out on purpose: --ignore-columns 'N° lot,Note d'\\''équipe', or map them to null in the --map file ({"N° lot": null, "Note d'équipe": null})`,
    );
  });

  it('a header close to a known column is a likely typo: the hint does not offer it by name', () => {
    const error = planError(['externalId', 'contact.emial']);
    expect(error.problems[0]!.message).toBe('is not a column ordercli knows (did you mean contact.email?)');
    expect(error.hint).toBe(
      'a column the import does not need can be left out on purpose: --ignore-columns <header>[,<header>…], or map its header to null in the --map file ({"<header>": null})',
    );
    // A header with a comma cannot be named in the flag; the map names it.
    expect(planError(['externalId', 'Poids, kg']).hint).toBe(
      'if the import does not need this column, leave it out on purpose: --ignore-columns <header>[,<header>…], or map it to null in the --map file ({"Poids, kg": null})',
    );
  });
});

describe('readColumnMap', () => {
  it('reads a header mapped to null as a column left out', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'map.json'),
      JSON.stringify({ 'N° commande': 'externalId', ' Commentaire ': null, Colis: null }),
    );
    expect(await readColumnMap('map.json', dir)).toEqual({
      renames: { 'N° commande': 'externalId' },
      ignored: ['Commentaire', 'Colis'],
    });
  });

  it('says that null leaves a column out when a target is not a column', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'map.json'), JSON.stringify({ Commentaire: '' }));
    const error = await readColumnMap('map.json', dir).catch((caught: unknown) => caught as InputError);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).problems.at(-1)!.message).toMatch(
      /^the columns are: externalId, .*; a header mapped to null is left out$/,
    );
  });
});
