/**
 * What `npm pack` publishes works on its own: the tarball is installed in an empty project (npm
 * prefers its cache, which the project's own install filled, and asks the registry for what it
 * lacks: on a fresh machine the cache holds the dependencies' tarballs but not their registry
 * metadata, which an `--offline` install needs), and its `ordercli` binary prints its help, fetches
 * a record from a sandbox and runs the demo, whose fixtures must therefore be in the tarball —
 * under Node 20 (this one), 22 and 24. Node 22 and 24 are the `node` package run by npx: from the
 * npm cache when it is there, otherwise downloaded once from the registry, like any install step.
 * Tests, sources and bench results must not be in the tarball. Inside the clone of
 * fresh-clone.test.ts (ORDERCLI_IN_FRESH_CLONE: a fresh machine's cache), only under Node 20.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ROOT } from '../support/cli.js';
import { describeRun, exec, releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
let sandbox: Sandbox;
let app: string;
let tarballFiles: string[];
let env: NodeJS.ProcessEnv;

const inFreshClone = Boolean(process.env.ORDERCLI_IN_FRESH_CLONE);

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true });
  env = releaseEnv(dirs.make('ordercli-config-'));
  const packDir = dirs.make('ordercli-pack-');
  // `npm pack` runs `prepare`, which rebuilds dist/ (swapped in atomically, see scripts/build.mjs).
  const pack = await exec('npm', ['pack', '--json', '--pack-destination', packDir], {
    cwd: ROOT,
    env,
    timeoutMs: 120_000,
  });
  if (pack.code !== 0) throw new Error(describeRun('npm pack', pack));
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as {
    filename: string;
    files: { path: string }[];
  }[];
  if (!info) throw new Error(`npm pack printed no result: ${pack.stdout}`);
  tarballFiles = info.files.map((file) => file.path);

  app = dirs.make('ordercli-app-');
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'ordercli-pack-check', version: '1.0.0', private: true }, null, 2)}\n`,
  );
  const install = await exec(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(packDir, info.filename)],
    { cwd: app, env, timeoutMs: 150_000 },
  );
  if (install.code !== 0)
    throw new Error(
      `${describeRun('npm install --prefer-offline <tarball>', install)}\n` +
        'It takes what the npm cache lacks from the npm registry: check that the registry is reachable.',
    );
}, 180_000);

afterAll(async () => {
  await sandbox?.close();
  dirs.cleanup();
});

/** The path of a Node `major` binary: npx --offline first, then npx with the registry (120 s). */
async function nodeBinary(major: number): Promise<string> {
  const cwd = dirs.make('ordercli-npx-');
  const env = releaseEnv(dirs.make('ordercli-config-'));
  const args = ['-y', `node@${major}`, '-p', 'process.execPath + "\\n" + process.version'];
  let result = await exec('npx', ['--offline', ...args], { cwd, env, timeoutMs: 60_000 });
  let how = 'from the npm cache';
  if (result.code !== 0) {
    result = await exec('npx', args, { cwd, env, timeoutMs: 120_000 });
    how = 'downloaded from the registry';
  }
  if (result.code !== 0) throw new Error(describeRun(`npx node@${major}`, result));
  const [path, version] = result.stdout.trim().split('\n').slice(-2);
  if (!path || !version?.startsWith(`v${major}.`))
    throw new Error(`npx node@${major} printed ${JSON.stringify(result.stdout)}`);
  console.log(`pack: Node ${version} ${how} (${path})`);
  return path;
}

/** Runs the installed package's bin with a given node binary. */
function ordercliWith(node: string) {
  const bin = join(app, 'node_modules/ordercli/bin/ordercli.js');
  return (args: string[]) => exec(node, [bin, ...args], { cwd: app, env, timeoutMs: 60_000 });
}

describe('the npm tarball', () => {
  it('lists in package.json "files" what the installed tool needs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toEqual(expect.arrayContaining(['bin', 'dist', 'fixtures', 'README.md']));
    expect(tarballFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/ordercli.js',
        'dist/cli/main.js',
        'fixtures/orders/orders.csv',
      ]),
    );
    expect(tarballFiles.some((path) => path.startsWith('fixtures/sandbox/'))).toBe(true);
  });

  it('holds no tests, sources, bench results or build leftovers', () => {
    const unwanted = tarballFiles.filter((path) =>
      /^(test|src|bench|scripts|node_modules|coverage)\/|^\.dist-|^dist-old-|^\.ci\/|\.tgz$|\.journal\.ndjson$/.test(
        path,
      ),
    );
    expect(unwanted).toEqual([]);
  });
});

if (inFreshClone) console.log('pack: under Node 20 only (ORDERCLI_IN_FRESH_CLONE is set)');
describe.each(inFreshClone ? [20] : [20, 22, 24])('the installed ordercli under Node %i', (major) => {
  let ordercli: (args: string[]) => ReturnType<typeof exec>;

  beforeAll(async () => {
    // Node 20 is the one running the tests; the .bin shim is what users type.
    ordercli =
      major === 20
        ? (args) => exec(join(app, 'node_modules/.bin/ordercli'), args, { cwd: app, env, timeoutMs: 60_000 })
        : ordercliWith(await nodeBinary(major));
  }, 200_000);

  it('prints its help', async () => {
    const result = await ordercli(['--help']);
    expect(result.code, describeRun('ordercli --help', result)).toBe(0);
    expect(result.stdout).toContain('Usage: ordercli');
    for (const command of ['demo', 'orders', 'refs', 'get [options] <entity> <id>', 'listen', 'sandbox'])
      expect(result.stdout).toContain(`\n  ${command}`);
  });

  it('gets packaging reference 401 from a sandbox', async () => {
    const result = await ordercli([
      '--base-url',
      sandbox.url,
      '--token',
      sandbox.tokens.partner,
      'get',
      'packaging_references',
      '401',
    ]);
    expect(result.code, describeRun('ordercli get', result)).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: 401 });
  });

  it('runs the demo (the fixtures are in the tarball)', async () => {
    const result = await ordercli(['demo']);
    expect(result.code, describeRun('ordercli demo', result)).toBe(0);
    expect(result.stdout).toContain('orders validated');
  });
});
