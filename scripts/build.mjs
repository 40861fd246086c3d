// Bundles src/ into dist/ with code splitting, so that each command's module (and its heavy
// dependencies) is loaded only by the command that needs it; dependencies stay in node_modules.
import { chmod, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const dist = join(root, 'dist');
// Built beside dist/ and swapped in at the end, so that a build never leaves a half-empty dist/
// under a command (or a test) that is running from it. A build that changes nothing (a test's
// `npm pack`, whose `prepare` builds again) leaves dist/ alone: between the two renames of a swap
// there is no dist/, and a command loading a chunk just then would fail.
/**
 * Dependencies bundled into dist/ rather than loaded from node_modules: commander (into the main
 * chunk: it spares every start-up the resolution of its files and the CommonJS-to-ESM wrapping),
 * zod and csv-parse (one chunk each instead of dozens of files to resolve and load: a fifth of
 * the start-up of an import, measured by bench/import). All are pinned to exact versions.
 */
const BUNDLED = new Set(['commander', 'zod', 'csv-parse']);
const staging = await mkdtemp(join(root, '.dist-'));

await writeFile(join(staging, 'version.js'), `export const VERSION = ${JSON.stringify(pkg.version)};\n`);

try {
  await build({
    absWorkingDir: root,
    entryPoints: {
      'cli/main': 'src/cli/main.ts',
      index: 'src/index.ts',
    },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Dependencies load from node_modules, except those in BUNDLED (see there).
    external: Object.keys(pkg.dependencies).filter((name) => !BUNDLED.has(name)),
    banner: {
      js: "import { createRequire as __ordercliRequire } from 'node:module'; const require = __ordercliRequire(import.meta.url);",
    },
    // Each file names its map (.js.map beside it); Node reads them only when source maps are on,
    // which bin/ordercli.js does under ORDERCLI_DEBUG, so a stack trace names a line of src/.
    sourcemap: 'linked',
    // The maps point into src/, which the package does not ship; its text would only add weight.
    sourcesContent: false,
    chunkNames: 'chunks/[name]-[hash]',
    // The inspector's page (listen --inspect) is bundled as its text.
    loader: { '.html': 'text' },
    define: { __ORDERCLI_VERSION__: JSON.stringify(pkg.version) },
    logLevel: 'warning',
    // Less to parse at every start-up; names are kept so that stack traces stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
  });
} catch (error) {
  await rm(staging, { recursive: true, force: true });
  throw error;
}

// mkdtemp makes a folder only its owner may enter: a package installed by root must be readable
// by every user, like any package's files (esbuild writes the files and sub-folders that way).
await chmod(staging, 0o755);
if (await sameFiles(staging, dist)) {
  await rm(staging, { recursive: true, force: true });
  process.exit(0);
}
const old = `${dist}-old-${process.pid}`;
await rename(dist, old).catch(() => undefined);
await rename(staging, dist);
await rm(old, { recursive: true, force: true });

/** Whether two folders hold the same files with the same bytes (false when `b` does not exist). */
async function sameFiles(a, b) {
  const list = (folder) =>
    readdir(folder, { recursive: true, withFileTypes: true }).then(
      (entries) =>
        entries
          .filter((entry) => entry.isFile())
          .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(folder.length))
          .sort(),
      () => undefined,
    );
  const [left, right] = await Promise.all([list(a), list(b)]);
  if (!left || !right || left.join('\n') !== right.join('\n')) return false;
  for (const file of left) {
    const [x, y] = await Promise.all([readFile(join(a, file)), readFile(join(b, file))]);
    if (!x.equals(y)) return false;
  }
  return true;
}
