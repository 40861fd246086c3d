/**
 * `npm run lint` checks the layers of src/ (dependency-cruiser, .dependency-cruiser.mjs): no
 * runtime import cycle, nothing but src/cli imports from src/cli (commands reach Context in
 * src/command-support), nothing outside src/cli and src/commands imports from src/commands, only
 * they and src/command-support import from it, api/io/config/schemas import no pipeline (import,
 * webhooks, sandbox, refs), src/core imports nothing else from src. Checked on scratch projects
 * with this repository's lint:layers script and rules: one laid out right (with a type-only
 * cycle, which is allowed), one breaking each rule.
 */
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { describeRun, exec, releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

const ours = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** The layers as they should be: core at the bottom, a verb typing its flags from its group's index. */
const GOOD: Record<string, string> = {
  'src/core/errors.ts': 'export class UsageError extends Error {}\n',
  'src/api/client.ts': "import { UsageError } from '../core/errors.js';\nexport const client = UsageError;\n",
  'src/commands/demo/index.ts':
    "export interface DemoFlags { file?: string }\nexport async function register() { const { run } = await import('./demo.js'); return run; }\n",
  'src/commands/demo/demo.ts':
    "import { client } from '../../api/client.js';\nimport type { Context } from '../../command-support/context.js';\nimport type { DemoFlags } from './index.js';\nexport function run(flags: DemoFlags, ctx: Context) { return [client, flags, ctx]; }\n",
  'src/command-support/context.ts':
    "import { client } from '../api/client.js';\nexport class Context { api = client; }\n",
  'src/cli/program.ts':
    "import { register } from '../commands/demo/index.js';\nimport { Context } from '../command-support/context.js';\nexport const program = [register, Context];\n",
  'src/index.ts': "export { program } from './cli/program.js';\n",
};

/** The same with one break of each rule. */
const BAD: Record<string, string> = {
  ...GOOD,
  // core imports from a layer above it
  'src/core/errors.ts': "import '../api/client.js';\nexport class UsageError extends Error {}\n",
  // a layer below the commands imports from one
  'src/io/output.ts':
    "import { register } from '../commands/demo/index.js';\nexport const output = register;\n",
  // a command imports from the top layer
  'src/commands/get/get.ts': "import { program } from '../../cli/program.js';\nexport const get = program;\n",
  // command support imports a command
  'src/command-support/command-help.ts':
    "import { register } from '../commands/demo/index.js';\nexport const help = register;\n",
  // a pipeline imports command support
  'src/webhooks/listen-session.ts':
    "import { Context } from '../command-support/context.js';\nexport const session = Context;\n",
  // the client imports a pipeline
  'src/api/errors.ts': "import '../webhooks/notify.js';\nexport {};\n",
  'src/webhooks/notify.ts': 'export const notify = 1;\n',
  // a runtime cycle
  'src/import/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
  'src/import/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
};

function scratchProject(files: Record<string, string>): string {
  const dir = dirs.make('ordercli-layers-');
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'scratch', private: true, type: 'module', scripts: { 'lint:layers': ours.scripts['lint:layers'] } })}\n`,
  );
  copyFileSync(join(ROOT, '.dependency-cruiser.mjs'), join(dir, '.dependency-cruiser.mjs'));
  copyFileSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function lintLayers(dir: string) {
  return exec('npm', ['run', '--silent', 'lint:layers'], {
    cwd: dir,
    env: releaseEnv(dir),
    timeoutMs: 90_000,
  });
}

describe('npm run lint: the layers of src/', () => {
  it('is part of the lint stage of npm test', () => {
    expect(ours.scripts.test?.split(/[ +]/)).toContain('lint');
    expect(ours.scripts.lint).toContain('npm run --silent lint:layers');
  });

  it('passes layers laid out right, a cycle through a type-only import included', async () => {
    const result = await lintLayers(scratchProject(GOOD));
    expect(result.code, describeRun('npm run lint:layers', result)).toBe(0);
  });

  it('fails on each broken rule, naming the rule and the import', async () => {
    const result = await lintLayers(scratchProject(BAD));
    const output = result.stdout + result.stderr;
    expect(result.code, describeRun('npm run lint:layers', result)).not.toBe(0);
    expect(output).toMatch(/core-is-the-bottom: src\/core\/errors\.ts → src\/api\/client\.ts/);
    expect(output).toMatch(/commands-under-cli-only: src\/io\/output\.ts → src\/commands\/demo\/index\.ts/);
    expect(output).toMatch(/cli-is-the-top: src\/commands\/get\/get\.ts → src\/cli\/program\.ts/);
    expect(output).toMatch(
      /commands-under-cli-only: src\/command-support\/command-help\.ts → src\/commands\/demo\/index\.ts/,
    );
    expect(output).toMatch(
      /command-support-for-commands: src\/webhooks\/listen-session\.ts → src\/command-support\/context\.ts/,
    );
    expect(output).toMatch(/pipelines-above-services: src\/api\/errors\.ts → src\/webhooks\/notify\.ts/);
    expect(output).toMatch(/no-circular: src\/import\/a\.ts → \s*src\/import\/b\.ts/);
    expect(output).not.toMatch(/no-circular: src\/commands\/demo/);
  });
});
