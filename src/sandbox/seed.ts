/**
 * The sandbox's seed: the records in `fixtures/sandbox/*.json`, plus, for benchmarks, any number of
 * generated packaging references. Seed records never change while the sandbox runs; created
 * orders, contact references and subscriptions live in the store.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Tax {
  name: string;
  rate: number;
  vat: boolean;
}

/** A record of `GET /api/v1/packaging_references`, exactly the interface's fields. */
export interface PackagingReferenceRecord {
  id: number;
  active: boolean;
  label: string;
  packaging: {
    name: string;
    unit: string;
    unit_factor: number;
    product: { code: string; label: string; taxes: Tax[] };
  };
}

export interface ContactReferenceRecord {
  id: number;
  contact: { externalReference: string; firstName: string; lastName: string; email: string };
  customer: { name: string };
  [field: string]: unknown;
}

/** Any record with an id; the interface does not show the fields of contacts, packagings, etc. */
export interface SeedRecord {
  id: number;
  [field: string]: unknown;
}

export interface SeedData {
  contacts: SeedRecord[];
  customers: SeedRecord[];
  packagings: SeedRecord[];
  packagingReferences: PackagingReferenceRecord[];
  contactReferences: ContactReferenceRecord[];
  shippingModes: SeedRecord[];
}

export interface LoadSeedOptions {
  /** Folder holding the seed files; default: the package's `fixtures/sandbox`. */
  seedDir?: string;
  /** Generated packaging references appended after the fixtures (benchmarks). */
  extraPackagingReferences?: number;
}

const SEED_FILES = {
  contacts: 'contacts.json',
  customers: 'customers.json',
  packagings: 'packagings.json',
  packagingReferences: 'packaging_references.json',
  contactReferences: 'contact_references.json',
  shippingModes: 'shipping_modes.json',
} as const satisfies Record<keyof SeedData, string>;

/** Reads the seed files and appends generated packaging references when asked. */
export function loadSeed(options: LoadSeedOptions = {}): SeedData {
  const dir = options.seedDir ?? findDefaultSeedDir();
  const seed: SeedData = {
    contacts: readRecords(dir, SEED_FILES.contacts),
    customers: readRecords(dir, SEED_FILES.customers),
    packagings: readRecords(dir, SEED_FILES.packagings),
    packagingReferences: readRecords(
      dir,
      SEED_FILES.packagingReferences,
    ) as unknown as PackagingReferenceRecord[],
    contactReferences: readRecords(dir, SEED_FILES.contactReferences) as unknown as ContactReferenceRecord[],
    shippingModes: readRecords(dir, SEED_FILES.shippingModes),
  };
  const extra = options.extraPackagingReferences ?? 0;
  if (extra > 0) {
    const firstId = GENERATED_REFERENCE_FIRST_ID;
    const clash = seed.packagingReferences.find((reference) => reference.id >= firstId);
    if (clash)
      throw new Error(`seed packaging reference ${clash.id} collides with generated ids from ${firstId}`);
    seed.packagingReferences = seed.packagingReferences.concat(generatePackagingReferences(extra, firstId));
  }
  return seed;
}

/**
 * The package's `fixtures/sandbox`, found by walking up from this module: the source lives in
 * `src/sandbox/`, the bundle in `dist/` or `dist/chunks/`, so a fixed relative path would break one.
 */
export function findDefaultSeedDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'fixtures', 'sandbox');
    if (existsSync(join(candidate, SEED_FILES.packagingReferences))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the sandbox seed (fixtures/sandbox) above this module');
    dir = parent;
  }
}

function readRecords(dir: string, file: string): SeedRecord[] {
  const path = resolve(dir, file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read sandbox seed ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(parsed)) throw new Error(`sandbox seed ${path} must hold a JSON array`);
  parsed.forEach((record: unknown, index) => {
    const id = (record as { id?: unknown } | null)?.id;
    if (!Number.isSafeInteger(id)) throw new Error(`sandbox seed ${path}[${index}] needs an integer id`);
  });
  return parsed as SeedRecord[];
}

/** Generated references start far above the fixtures' ids so both sets stay stable. */
export const GENERATED_REFERENCE_FIRST_ID = 1_000_001;

const GENERATED_NOUNS = [
  'Biscuits sablés',
  'Confiture',
  'Terrine',
  'Tomme',
  'Sirop',
  'Tisane',
  'Compote',
  'Pâtes fraîches',
  'Rillettes',
  'Nectar',
  'Gâteau breton',
  'Madeleines',
  'Crème dessert',
  'Soupe',
  'Vinaigre',
] as const;
const GENERATED_FLAVOURS = [
  "à l'abricot",
  'à la châtaigne',
  'aux cèpes',
  'au caramel beurre salé',
  'à la framboise',
  'au thym',
  'à la noisette',
  'aux figues',
  'à la lavande',
  'au piment d’Espelette',
  'à la myrtille',
  'aux noix',
] as const;
const GENERATED_QUALIFIERS = [
  'bio',
  'artisanal',
  'de montagne',
  "à l'ancienne",
  'de saison',
  'sans sucres ajoutés',
];
const GENERATED_PACKAGINGS = [
  { name: 'Unité', unit: 'unité', unit_factor: 1 },
  { name: 'Pack de 6', unit: 'unité', unit_factor: 6 },
  { name: 'Carton de 12', unit: 'unité', unit_factor: 12 },
] as const;
const GENERATED_TAXES: Tax[][] = [
  [{ name: 'TVA 5,5 %', rate: 5.5, vat: true }],
  [{ name: 'TVA 20 %', rate: 20, vat: true }],
  [
    { name: 'TVA 20 %', rate: 20, vat: true },
    { name: "Droits d'accise", rate: 3.2, vat: false },
  ],
];

/**
 * Deterministic packaging references for benchmarks: the same count always yields the same records.
 * Products get one to three packagings; about one reference in ten is inactive.
 */
export function generatePackagingReferences(
  count: number,
  firstId: number = GENERATED_REFERENCE_FIRST_ID,
): PackagingReferenceRecord[] {
  const random = mulberry32(0x5eed_0c11);
  const references: PackagingReferenceRecord[] = new Array(count);
  let productNumber = 0;
  let index = 0;
  while (index < count) {
    productNumber++;
    const code = `GEN-${String(productNumber).padStart(6, '0')}`;
    const label = `${pick(GENERATED_NOUNS, random)} ${pick(GENERATED_FLAVOURS, random)} ${pick(GENERATED_QUALIFIERS, random)}`;
    // Shared by the product's packagings, as the fixtures do; nothing mutates seed records.
    const product = { code, label, taxes: pick(GENERATED_TAXES, random) };
    const packagingCount = 1 + Math.floor(random() * GENERATED_PACKAGINGS.length);
    for (let p = 0; p < packagingCount && index < count; p++, index++) {
      const packaging = GENERATED_PACKAGINGS[p]!;
      references[index] = {
        id: firstId + index,
        active: random() >= 0.1,
        label,
        packaging: {
          name: packaging.name,
          unit: packaging.unit,
          unit_factor: packaging.unit_factor,
          product,
        },
      };
    }
  }
  return references;
}

function pick<T>(values: readonly T[], random: () => number): T {
  return values[Math.floor(random() * values.length)]!;
}

/** A small seeded PRNG: `Math.random` cannot be seeded, and benchmarks need the same data each run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
