// Bundles src/ into dist/ with code splitting, so that each command's module (and its heavy
// dependencies) is loaded only by the command that needs it; dependencies stay in node_modules.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const dist = join(root, 'dist');

await rm(dist, { recursive: true, force: true });
await mkdir(dist, { recursive: true });
await writeFile(join(dist, 'version.js'), `export const VERSION = ${JSON.stringify(pkg.version)};\n`);

await build({
  absWorkingDir: root,
  entryPoints: {
    'cli/main': 'src/cli/main.ts',
    index: 'src/index.ts',
  },
  outdir: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: false,
  chunkNames: 'chunks/[name]-[hash]',
  define: { __ORDERCLI_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
