/**
 * What `npm pack` publishes works on its own: the tarball is installed in an empty project, with
 * npm offline (every dependency comes from the npm cache the project's own install filled), and
 * its `ordercli` binary prints its help, fetches a record from a sandbox and runs the demo, whose
 * fixtures must therefore be in the tarball. Tests, sources and bench results must not be.
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

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true });
  env = releaseEnv(dirs.make('ordercli-config-'), { npm_config_offline: 'true' });
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
    ['install', '--offline', '--no-audit', '--no-fund', join(packDir, info.filename)],
    { cwd: app, env, timeoutMs: 150_000 },
  );
  if (install.code !== 0)
    throw new Error(
      `${describeRun('npm install --offline <tarball>', install)}\n` +
        'ENOTCACHED means the npm cache lacks a dependency: run npm install once with the network.',
    );
}, 180_000);

afterAll(async () => {
  await sandbox?.close();
  dirs.cleanup();
});

function ordercli(args: string[]) {
  return exec(join(app, 'node_modules/.bin/ordercli'), args, { cwd: app, env, timeoutMs: 60_000 });
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

  it('installs a working ordercli: --help', async () => {
    const result = await ordercli(['--help']);
    expect(result.code, describeRun('ordercli --help', result)).toBe(0);
    expect(result.stdout).toContain('Usage: ordercli');
    for (const command of ['demo', 'orders', 'refs', 'get <entity> <id>', 'listen', 'sandbox'])
      expect(result.stdout).toContain(`\n  ${command}`);
  });

  it('installs a working ordercli: get packaging_references 401 from a sandbox', async () => {
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

  it('installs a working ordercli: demo (the fixtures are in the tarball)', async () => {
    const result = await ordercli(['demo']);
    expect(result.code, describeRun('ordercli demo', result)).toBe(0);
    expect(result.stdout).toContain('orders validated');
  });
});
