/**
 * The commands of the README and of docs/*.md run as typed after `npm install` in a clone:
 * - every command line of their code blocks starts (and every command piped into or nested in it
 *   starts) with a command that exists then: `npx ordercli`, `npm`, a shell builtin or a standard
 *   tool; plain `ordercli` is not on the PATH after `npm install` (docs/commands.md, generated from
 *   `--help`, is left out: it shows the usage of the installed command);
 * - a representative set of the README's lines runs for real, exactly as written but for the
 *   sandbox's address (the README's 127.0.0.1:4780 becomes the test sandbox's free port), through
 *   the real npx in a project folder whose node_modules holds this ordercli;
 * - two examples of docs/*.md run the same way, with the output the docs show;
 * - the sandbox banner shown in the README is what `npx ordercli sandbox` prints, and the README's
 *   way of fixing the webhook key fixes it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { ROOT } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { commandLines, documents, readDocument, simpleCommands } from './markdown.js';
import { describeRun, releaseEnv, sh, TempDirs } from './support.js';

const dirs = new TempDirs();
const children: ChildProcess[] = [];

/** Commands a reader has after `npm install` in a clone, besides `npx ordercli`. */
const SHELL_COMMANDS = new Set(['npm', 'export', 'echo', 'printenv', 'cd', 'source', 'printf', 'wait']);
const TOOLS = new Set([
  'cat',
  'head',
  'grep',
  'ls',
  'cut',
  'sha256sum',
  'jq',
  'git',
  'node',
  'iconv',
  'timeout',
]);

describe('the commands in README.md and docs/*.md', () => {
  const files = documents().filter((file) => file !== 'docs/commands.md');

  it('find command lines to check (the parser reads the README)', () => {
    const readme = commandLines('README.md', readDocument('README.md')).map((c) => c.text);
    expect(readme.some((text) => text.startsWith('npm install && npx ordercli demo  '))).toBe(true);
    expect(readme).toContain('npx ordercli orders create --file fixtures/orders/bad.json');
    expect(readme.length).toBeGreaterThan(15);
    expect(simpleCommands('printenv TOKEN | FOO=1 npx ordercli login --x "a | b" # c')).toEqual([
      ['printenv', 'TOKEN'],
      ['npx', 'ordercli', 'login', '--x', 'a | b'],
    ]);
    expect(simpleCommands('source <(ordercli completion bash) && echo $?')).toEqual([
      ['source'],
      ['ordercli', 'completion', 'bash'],
      ['echo', '$?'],
    ]);
  });

  it('start with a command that exists after npm install (npx ordercli, not ordercli)', () => {
    const problems: string[] = [];
    for (const file of files) {
      for (const command of commandLines(file, readDocument(file))) {
        for (const words of simpleCommands(command.text)) {
          const [first, second] = words;
          const where = `${command.file}:${command.line}: ${command.text}`;
          if (first === 'ordercli')
            problems.push(`${where}\n    ordercli is not on the PATH after npm install: write npx ordercli`);
          else if (first === 'npx' && second !== 'ordercli')
            problems.push(`${where}\n    npx runs only ordercli in these examples, not ${second}`);
          else if (first !== 'npx' && !SHELL_COMMANDS.has(first!) && !TOOLS.has(first!))
            problems.push(`${where}\n    ${first} is not a command a reader has after npm install`);
        }
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('use only standard tools that exist on this machine', () => {
    for (const tool of TOOLS) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
      expect(found.status, `${tool} is not installed here`).toBe(0);
    }
  });
});

describe('the README, run as typed against a sandbox', () => {
  let sandbox: Sandbox;
  let project: string;
  let env: NodeJS.ProcessEnv;
  let exports: string;
  const readme = readDocument('README.md');
  const typed = new Set(commandLines('README.md', readme).map((command) => command.text));

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, quiet: true });
    // A project that has installed ordercli: npx finds it in node_modules/.bin, as in a clone.
    project = dirs.make('ordercli-readme-');
    writeFileSync(join(project, 'package.json'), '{ "name": "readme-check", "private": true }\n');
    mkdirSync(join(project, 'node_modules/.bin'), { recursive: true });
    symlinkSync(ROOT, join(project, 'node_modules/ordercli'));
    symlinkSync('../ordercli/bin/ordercli.js', join(project, 'node_modules/.bin/ordercli'));
    // The README's examples run from the root of the repository, with their files in fixtures/orders/.
    cpSync(join(ROOT, 'fixtures/orders'), join(project, 'fixtures/orders'), { recursive: true });
    env = releaseEnv(dirs.make('ordercli-config-'), { NO_COLOR: '1' });
    exports = line('export ORDERCLI_BASE_URL=http://127.0.0.1:4780 ORDERCLI_TOKEN=sandbox-partner-token');
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await sandbox?.close();
    dirs.cleanup();
  });

  /** A README command line, checked to be in the README, with the test sandbox's address. */
  function line(text: string): string {
    expect(typed, `the README has no command line ${JSON.stringify(text)}`).toContain(text);
    return text.replaceAll('http://127.0.0.1:4780', sandbox.url);
  }

  /** Runs the README's export line, then these README lines, in one shell in the project. */
  function run(...lines: string[]) {
    return sh([exports, ...lines.map(line)].join('\n'), { cwd: project, env, timeoutMs: 60_000 });
  }

  it('creates one order, then refuses the invalid one with exit 2 and every problem', async () => {
    const created = await run('npx ordercli orders create --file fixtures/orders/order.json');
    expect(created.code, describeRun('orders create', created)).toBe(0);
    expect(created.stdout).toMatch(/^Created order SO-\d{4}-\d{6} \(id \d+\)\.\n$/);

    const refused = await run('npx ordercli orders create --file fixtures/orders/bad.json', 'echo $?');
    expect(refused.stdout.trim()).toBe('2');
    expect(refused.stderr).toContain(
      'fixtures/orders/bad.json is not a valid order (3 problems); nothing was sent.',
    );
    for (const field of ['contact', 'deliveryAddress.country', 'items[0].orderedQuantity'])
      expect(refused.stderr).toContain(`fixtures/orders/bad.json: ${field}: `);
  }, 60_000);

  it('imports orders.csv, and sends nothing the second time', async () => {
    const first = await run('npx ordercli orders import fixtures/orders/orders.csv --report report.csv');
    expect(first.code, describeRun('orders import', first)).toBe(0);
    expect(first.stdout + first.stderr).toMatch(/created +3/);
    const again = await run(
      'npx ordercli orders import fixtures/orders/orders.csv          # run it again: nothing is sent twice',
    );
    expect(again.code, describeRun('orders import again', again)).toBe(0);
    expect(again.stdout + again.stderr).toMatch(/skipped +3/);
  }, 60_000);

  it('lists packaging references as the README shows them', async () => {
    const result = await run(
      'npx ordercli refs packagings list --search bière --columns id,label,packaging | cat',
    );
    expect(result.code, describeRun('refs packagings list', result)).toBe(0);
    expect(result.stdout).toContain('431\tBière blonde 33 cl\tBouteille 33 cl\n');
    expect(result.stdout).toContain('432\tBière blonde 33 cl\tPack de 6 bouteilles\n');
    // The README's rows are the real ones.
    for (const row of result.stdout.trim().split('\n').slice(0, 2)) expect(readme).toContain(row);
  }, 60_000);

  it('gets records and lists webhook events with get, orders get, api and webhooks available', async () => {
    await run('npx ordercli orders create --file fixtures/orders/order.json');
    const result = await run(
      'npx ordercli get shipping_modes 2                   # GET /api/v1/<entity>/{id}, any entity kind',
      'npx ordercli orders get 10001',
      'npx ordercli api GET /api/v1/shipping_modes         # any request, same auth, retries and errors',
      'npx ordercli webhooks available',
      'npx ordercli config path',
    );
    expect(result.code, describeRun('get, orders get, api, webhooks available', result)).toBe(0);
    expect(result.stdout).toContain('"code": "SO-');
    expect(result.stdout).toContain('sales_order_validated');
    expect(result.stdout).toContain('config.json');
  }, 90_000);

  /** Starts a README sandbox line (with --port 0 added) through npx; resolves with its banner. */
  async function banner(text: string): Promise<string> {
    const command = `${line(text).replace(/\s+#.*$/, '')} --port 0`;
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: project,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    // Without the banner in time, the assertion below says what was printed instead.
    await waitFor(
      () => stdout.includes('Press Ctrl-C to stop.') || child.exitCode !== null,
      30_000,
      `the banner of ${command}`,
    ).catch(() => undefined);
    process.kill(-child.pid!, 'SIGINT');
    await closed;
    expect(stdout, `${command}\n${stderr}`).toContain('Press Ctrl-C to stop.');
    return stdout;
  }

  it('shows the banner of npx ordercli sandbox as it is, the example key aside', async () => {
    const printed = await banner('npx ordercli sandbox');
    const url = /Sandbox listening on (http:\S+)/.exec(printed)?.[1] ?? '';
    const key = /webhook key {5}(\S+)/.exec(printed)?.[1] ?? '';
    const shown = /\$ npx ordercli sandbox\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const readmeKey = /webhook key {5}(\S+)/.exec(shown)?.[1] ?? '';
    expect(key).toMatch(/^whk_[0-9a-f]{48}$/);
    expect(readmeKey).toMatch(/^whk_[0-9a-f]{48}$/);
    expect(printed.replaceAll(url, 'http://127.0.0.1:4780').replace(key, readmeKey)).toBe(shown);
    expect(printed).toContain('(random, new at each start: --webhook-key <key> keeps one)');
  }, 60_000);

  /** Runs a docs/*.md command line (checked to be in that file) in `dir` of a copy of fixtures/orders. */
  async function runDoc(file: string, text: string) {
    const lines = commandLines(file, readDocument(file)).map((command) => command.text);
    expect(lines, `${file} has no command line ${JSON.stringify(text)}`).toContain(text);
    const dir = join(project, 'docs-run');
    cpSync(join(ROOT, 'fixtures/orders'), dir, { recursive: true });
    return sh([exports, text].join('\n'), { cwd: dir, env, timeoutMs: 60_000 });
  }

  it('runs examples of docs/*.md as typed, with the output they show', async () => {
    const dryRun = await runDoc(
      'docs/orders-input.md',
      'npx ordercli orders import commandes-excel.csv --dry-run',
    );
    expect(dryRun.code, describeRun('orders import --dry-run', dryRun)).toBe(0);
    expect(readDocument('docs/orders-input.md')).toContain(dryRun.stderr.trim().split('\n').at(-1));
    const contacts = await runDoc(
      'docs/refs.md',
      'npx ordercli refs contacts list --columns id,email | head -2',
    );
    expect(contacts.code, describeRun('refs contacts list', contacts)).toBe(0);
    expect(readDocument('docs/refs.md')).toContain(`| head -2\n${contacts.stdout}`);
  }, 60_000);

  it('fixes the webhook key the way the README says', async () => {
    const printed = await banner(
      'npx ordercli sandbox --webhook-key whk_local_dev_key    # or: export ORDERCLI_WEBHOOK_KEY=whk_local_dev_key',
    );
    expect(printed).toMatch(/webhook key {5}whk_local_dev_key {3}\(from --webhook-key\)\n/);
  }, 60_000);
});
