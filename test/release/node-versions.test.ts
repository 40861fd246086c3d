/**
 * The built CLI works under Node 22 and 24 (the README says it is tested on them; the project's
 * own Node is 20). Each runtime is the `node` package run by npx: from the npm cache when it is
 * there (no network), otherwise downloaded once from the registry, like any install step.
 * Under each: --help, a GET against a sandbox, and the demo.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { BIN, ROOT } from '../support/cli.js';
import { describeRun, exec, releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, quiet: true });
});

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
  console.log(`node-versions: Node ${version} ${how} (${path})`);
  return path;
}

describe.each([22, 24])('the built CLI under Node %i', (major) => {
  let node: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    node = await nodeBinary(major);
    env = releaseEnv(dirs.make('ordercli-config-'));
  }, 200_000);

  const ordercli = (args: string[]) => exec(node, [BIN, ...args], { cwd: ROOT, env, timeoutMs: 60_000 });

  it('prints its help', async () => {
    const result = await ordercli(['--help']);
    expect(result.code, describeRun('ordercli --help', result)).toBe(0);
    expect(result.stdout).toContain('Usage: ordercli');
    expect(result.stdout).toContain('\n  demo');
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

  it('runs the demo', async () => {
    const result = await ordercli(['demo']);
    expect(result.code, describeRun('ordercli demo', result)).toBe(0);
    expect(result.stdout).toContain('orders validated');
  });
});
