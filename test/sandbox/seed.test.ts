// The sandbox's seed: the fixture files read and checked, and the generated packaging references.
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  findDefaultSeedDir,
  GENERATED_REFERENCE_FIRST_ID,
  generatePackagingReferences,
  loadSeed,
} from '../../src/sandbox/seed.js';
import { ROOT, tempDir } from '../support/cli.js';

/** A copy of the package's seed folder, to damage one file of it. */
function seedCopy(): string {
  const dir = tempDir('ordercli-seed-');
  cpSync(join(ROOT, 'fixtures/sandbox'), dir, { recursive: true });
  return dir;
}

describe('loadSeed', () => {
  it("reads the package's fixtures/sandbox, found from the module's folder", () => {
    expect(findDefaultSeedDir()).toBe(join(ROOT, 'fixtures/sandbox'));
    const seed = loadSeed();
    expect(seed.packagingReferences.length).toBe(46);
    for (const records of Object.values(seed)) {
      expect(records.length).toBeGreaterThan(0);
      expect(records.every((record: { id: unknown }) => Number.isSafeInteger(record.id))).toBe(true);
    }
  });

  it('appends generated references after the fixtures when asked', () => {
    const seed = loadSeed({ extraPackagingReferences: 3 });
    expect(seed.packagingReferences.length).toBe(49);
    expect(seed.packagingReferences.slice(-3).map((reference) => reference.id)).toEqual([
      GENERATED_REFERENCE_FIRST_ID,
      GENERATED_REFERENCE_FIRST_ID + 1,
      GENERATED_REFERENCE_FIRST_ID + 2,
    ]);
  });

  it('refuses a seed file that is not a JSON array of records with integer ids, naming the file', () => {
    const notArray = seedCopy();
    writeFileSync(join(notArray, 'contacts.json'), '{"id": 1}');
    expect(() => loadSeed({ seedDir: notArray })).toThrow(
      `sandbox seed ${notArray}/contacts.json must hold a JSON array`,
    );

    const noId = seedCopy();
    writeFileSync(join(noId, 'customers.json'), '[{"id": 1}, {"name": "x"}]');
    expect(() => loadSeed({ seedDir: noId })).toThrow(
      `sandbox seed ${noId}/customers.json[1] needs an integer id`,
    );

    const broken = seedCopy();
    writeFileSync(join(broken, 'packagings.json'), '[{');
    expect(() => loadSeed({ seedDir: broken })).toThrow(
      `cannot read sandbox seed ${broken}/packagings.json: `,
    );
  });

  it('refuses generated references when a fixture already uses their ids', () => {
    const dir = seedCopy();
    writeFileSync(
      join(dir, 'packaging_references.json'),
      JSON.stringify([{ id: GENERATED_REFERENCE_FIRST_ID + 5, active: true }]),
    );
    expect(loadSeed({ seedDir: dir }).packagingReferences).toHaveLength(1);
    expect(() => loadSeed({ seedDir: dir, extraPackagingReferences: 1 })).toThrow(
      `seed packaging reference ${GENERATED_REFERENCE_FIRST_ID + 5} collides with generated ids from ${GENERATED_REFERENCE_FIRST_ID}`,
    );
  });
});

describe('generatePackagingReferences', () => {
  it('generates the same references every time, after the fixtures', () => {
    const a = generatePackagingReferences(2_000);
    const b = generatePackagingReferences(2_000);
    expect(a).toEqual(b);
    expect(a[0]!.id).toBe(GENERATED_REFERENCE_FIRST_ID);
    expect(new Set(a.map((r) => r.id)).size).toBe(2_000);
    expect(a.some((r) => !r.active)).toBe(true);
    // Some generated products have several packagings, as real catalogs do.
    const perCode = new Map<string, number>();
    for (const r of a)
      perCode.set(r.packaging.product.code, (perCode.get(r.packaging.product.code) ?? 0) + 1);
    expect(Math.max(...perCode.values())).toBeGreaterThan(1);
    expect(Math.min(...perCode.values())).toBe(1);
    // A prefix of a larger set is the smaller set: benchmarks of different sizes share records.
    expect(generatePackagingReferences(50).map((r) => r.label)).toEqual(a.slice(0, 50).map((r) => r.label));
  });
});
