// Every CI recipe of README.md and docs/ runs as written, in an empty folder, against the sandbox:
// the GitHub workflows (`# .github/workflows/…` blocks) job by job as a runner runs them
// (test/support/actions-runner.ts; `uses: <owner>/ordercli@<ref>` is this checkout's action.yml),
// the GitLab jobs (`# .gitlab-ci.yml`) script by script, the step lists and the install commands.
// The only substitutions: the install from a clone of the repository is pointed at this checkout
// (a link, and `npm install --global` into a private prefix, offline), GitHub's own actions are
// played (checkout, setup-node, cache, upload-artifact), and a `services: postgres` container is a
// throwaway PostgreSQL cluster. A recipe with a step or an expression nobody plays fails.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  conditionHolds,
  type Job,
  newStepFiles,
  type RunContext,
  runSteps,
  type Step,
} from '../support/actions-runner.js';
import { ROOT, tempDir, testEnv } from '../support/cli.js';
import { type RunningPostgres, requirePostgres, startPostgres } from '../support/postgres.js';
import { useSandbox } from '../support/sandbox.js';
import { documents, readDocument } from './markdown.js';

const sandbox = useSandbox();

const HEADER =
  'externalId,contact.internalReferenceId,customer.name,item.internalReferenceId,item.orderedQuantity';
const ROWS = ['R-1,301,Bar,401,1', 'R-2,302,Café,402,2', 'R-3,303,Tabac,403,1'];

interface Recipe {
  doc: string;
  line: number;
  kind: 'github' | 'gitlab' | 'steps' | 'install';
  text: string;
}

/** The recipes of the docs: fenced yaml (workflows, GitLab jobs, step lists) and the install commands. */
function recipes(): Recipe[] {
  const found: Recipe[] = [];
  for (const doc of documents()) {
    const text = readDocument(doc);
    for (const match of text.matchAll(/^( *)```(yaml|sh)\n([\s\S]*?)^\1```/gm)) {
      const body = match[3]!.replace(new RegExp(`^${match[1]}`, 'gm'), '');
      const line = text.slice(0, match.index).split('\n').length;
      const first = body.split('\n', 1)[0]!;
      if (match[2] === 'sh') {
        if (body.includes('ordercli.git')) found.push({ doc, line, kind: 'install', text: body });
      } else if (first.startsWith('# .github/workflows/'))
        found.push({ doc, line, kind: Array.isArray(parse(body)) ? 'steps' : 'github', text: body });
      else if (first.startsWith('# .gitlab-ci.yml')) found.push({ doc, line, kind: 'gitlab', text: body });
      else if (Array.isArray(parse(body))) found.push({ doc, line, kind: 'steps', text: body });
    }
  }
  return found;
}

/** The commands that install ordercli from a clone, pointed at this checkout (no network). */
function localInstall(script: string, globalPrefix: string): string {
  return script
    .replace(
      /npx --yes -p ajv-cli@\d+ -p ajv-formats@\d+ -- ajv validate/g,
      `node "${join(ROOT, 'test/support/ajv-validate.mjs')}"`,
    )
    .split('\n')
    .map((line) => {
      const indent = /^\s*/.exec(line)![0];
      const command = line.trim();
      let match = /^git clone .*https:\/\/github\.com\/<owner>\/ordercli\.git (\S+)$/.exec(command);
      if (match) return `${indent}ln -s "${ROOT}" ${match[1]}`;
      match = /^npm ci --prefix (\S+)( --no-audit --no-fund)?$/.exec(command);
      // The checkout is installed and built already: `npm ci` there would replace what runs the tests.
      if (match) return `${indent}test -f ${match[1]}/dist/cli/main.js`;
      match = /^npm install --global (\.\/\S+)$/.exec(command);
      if (match)
        return `${indent}npm install --global --offline --no-audit --no-fund --prefix "${globalPrefix}" ${match[1]}`;
      if (/\b(git clone|npm (ci|install|i)\b)/.test(command))
        throw new Error(`an install command no test plays: ${command}`);
      return line;
    })
    .join('\n');
}

/** A checkout of a repository that holds the orders the recipes import. */
function checkoutInto(workspace: string): void {
  for (const folder of ['orders', 'exports']) {
    mkdirSync(join(workspace, folder), { recursive: true });
    writeFileSync(join(workspace, folder, 'orders.csv'), `${[HEADER, ...ROWS].join('\n')}\n`);
  }
  cpSync(join(ROOT, 'fixtures/orders/order.json'), join(workspace, 'orders/order.json'));
}

let postgres: RunningPostgres | undefined;
let schemas = 0;
/** A ledger of its own for each recipe: a new schema of the cluster (or a folder without one). */
function freshLedger(): string {
  if (!postgres) return join(tempDir('ordercli-shared-ledger-'), 'ledger');
  return `${postgres.url}${postgres.url.includes('?') ? '&' : '?'}schema=recipe_${++schemas}`;
}
const hasPostgres = requirePostgres('the CI recipes that use a PostgreSQL ledger');
beforeAll(async () => {
  if (hasPostgres) postgres = await startPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

function createdOrders(): string[] {
  return sandbox.orders().map((order) => String((order as { externalId?: string }).externalId));
}

/** Plays GitHub's own actions for a workspace, with a cache shared by the runs of one recipe. */
function playGitHubActions(cache: string) {
  return (step: Step, inputs: Record<string, string>, ctx: RunContext): void => {
    const uses = step.uses!;
    if (uses.startsWith('actions/checkout@')) {
      checkoutInto(ctx.workspace);
      return;
    }
    if (uses.startsWith('actions/setup-node@')) {
      expect(Number(inputs['node-version'])).toBeGreaterThanOrEqual(20);
      return;
    }
    if (uses.startsWith('actions/cache/restore@')) {
      const saved = join(cache, inputs.path!);
      if (existsSync(saved)) cpSync(saved, join(ctx.workspace, inputs.path!), { recursive: true });
      return;
    }
    if (uses.startsWith('actions/cache/save@')) {
      const path = join(ctx.workspace, inputs.path!);
      rmSync(join(cache, inputs.path!), { recursive: true, force: true });
      if (existsSync(path)) cpSync(path, join(cache, inputs.path!), { recursive: true });
      return;
    }
    if (uses.startsWith('actions/upload-artifact@')) return;
    throw new Error(`no player for uses: ${uses}`);
  };
}

interface Workflow {
  on: Record<string, unknown> | string[] | string;
  env?: Record<string, string>;
  jobs: Record<string, Job & { services?: Record<string, { image: string }> }>;
}

function events(workflow: Workflow): string[] {
  const on = workflow.on;
  return typeof on === 'string' ? [on] : Array.isArray(on) ? on : Object.keys(on);
}

/** Runs the jobs of a workflow that an event starts, in order; what each did. */
async function runWorkflow(workflow: Workflow, event: string, cache: string, ledgerUrl: string) {
  const ran: { job: string; ok: boolean; log: string }[] = [];
  for (const [name, job] of Object.entries(workflow.jobs)) {
    const workspace = tempDir('ordercli-recipe-');
    const globalPrefix = tempDir('ordercli-global-');
    const github = { event_name: event, run_id: String(Date.now()), run_attempt: '1', workspace };
    const failed = ran.some((job) => !job.ok);
    const jobContext = { inputs: {}, github, vars: {}, secrets: {}, env: {}, steps: {}, failed };
    if (job.if !== undefined && !conditionHolds(job.if, jobContext)) continue;
    const ctx: RunContext = {
      workspace,
      actionPath: ROOT,
      env: {
        ORDERCLI_CONFIG_DIR: join(workspace, '.runner-config'),
        PATH: `${join(globalPrefix, 'bin')}:${process.env.PATH}`,
      },
      github,
      vars: { ORDERCLI_BASE_URL: sandbox.url, ORDERS_BASE_URL: sandbox.url },
      secrets: {
        ORDERCLI_TOKEN: sandbox.tokens.partner,
        ORDERS_TOKEN: sandbox.tokens.partner,
        ORDERCLI_LEDGER: ledgerUrl,
        LEDGER_PASSWORD: postgres?.password ?? 'not-used',
      },
      uses: playGitHubActions(cache),
    };
    const env: Record<string, unknown> = { ...workflow.env, ...job.env };
    if (job.services) {
      // The job's PostgreSQL container is played by the throwaway cluster.
      expect(Object.values(job.services).every((service) => service.image.startsWith('postgres:'))).toBe(
        true,
      );
      if (!postgres) throw new Error('a recipe with a PostgreSQL service needs PostgreSQL');
      expect(String(env.ORDERCLI_LEDGER)).toMatch(/^postgres:\/\/.*@localhost:5432\//);
      env.ORDERCLI_LEDGER = ledgerUrl;
    }
    const steps = job.steps.map((step) =>
      step.run ? { ...step, run: localInstall(step.run, globalPrefix) } : step,
    );
    const result = await runSteps(steps, ctx, { env, files: newStepFiles() });
    const log = result.steps
      .map((step) => `${step.step.name ?? step.step.uses ?? step.step.run}\n${step.stdout}${step.stderr}`)
      .join('\n');
    ran.push({ job: name, ok: result.ok, log });
  }
  return ran;
}

/** Runs a GitLab job's scripts in an empty checkout, its cache kept between runs. */
async function runGitLabJob(
  job: Record<string, unknown>,
  cache: string,
): Promise<{ code: number; log: string }> {
  const workspace = tempDir('ordercli-gitlab-');
  checkoutInto(workspace);
  const globalPrefix = tempDir('ordercli-global-');
  const paths = ((job.cache as { paths?: string[] } | undefined)?.paths ?? []).map((path) =>
    path.replace(/\/$/, ''),
  );
  for (const path of paths)
    if (existsSync(join(cache, path))) cpSync(join(cache, path), join(workspace, path), { recursive: true });
  const lines = [...((job.before_script as string[]) ?? []), ...((job.script as string[]) ?? [])];
  const script = localInstall(lines.join('\n'), globalPrefix);
  const run = await bash(script, workspace, {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.partner,
    ORDERCLI_CONFIG_DIR: join(workspace, '.runner-config'),
    CI: 'true',
    GITLAB_CI: 'true',
    PATH: `${join(globalPrefix, 'bin')}:${process.env.PATH}`,
  });
  for (const path of paths) {
    rmSync(join(cache, path), { recursive: true, force: true });
    if (existsSync(join(workspace, path)))
      cpSync(join(workspace, path), join(cache, path), { recursive: true });
  }
  return run;
}

function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; log: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], {
      cwd,
      env: testEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, log }));
  });
}

const all = recipes();

describe('the CI recipes of the docs', () => {
  it('are found, and none installs a package that does not exist', () => {
    const kinds = all.map((recipe) => recipe.kind);
    expect(kinds.filter((kind) => kind === 'github').length).toBeGreaterThanOrEqual(4);
    expect(kinds).toContain('gitlab');
    expect(kinds).toContain('install');
    expect(kinds).toContain('steps');
    for (const doc of documents()) {
      expect(readDocument(doc), doc).not.toMatch(/npm (install|i) (--global|-g) ordercli\b/);
    }
  });

  for (const recipe of all) {
    it(`${recipe.doc}:${recipe.line} (${recipe.kind}) runs`, { timeout: 120_000 }, async () => {
      const cache = tempDir('ordercli-ci-cache-');
      if (recipe.kind === 'install') {
        const workspace = tempDir('ordercli-install-');
        const globalPrefix = tempDir('ordercli-global-');
        const run = await bash(`${localInstall(recipe.text, globalPrefix)}\nordercli --version`, workspace, {
          PATH: `${join(globalPrefix, 'bin')}:${process.env.PATH}`,
        });
        expect(run.code, run.log).toBe(0);
        expect(run.log).toMatch(/^\d+\.\d+\.\d+$/m);
        return;
      }
      if (recipe.kind === 'steps') {
        const workspace = tempDir('ordercli-steps-');
        checkoutInto(workspace);
        const ctx: RunContext = {
          workspace,
          actionPath: ROOT,
          env: { ORDERCLI_CONFIG_DIR: join(workspace, '.runner-config'), ORDERCLI_BASE_URL: sandbox.url },
          github: { event_name: 'push', run_id: '1', run_attempt: '1', workspace },
          vars: { ORDERS_BASE_URL: sandbox.url },
          secrets: { ORDERCLI_TOKEN: sandbox.tokens.partner, ORDERS_TOKEN: sandbox.tokens.partner },
          uses: playGitHubActions(cache),
        };
        const globalPrefix = tempDir('ordercli-global-');
        const steps = (parse(recipe.text) as Step[]).map((step) =>
          step.run ? { ...step, run: localInstall(step.run, globalPrefix) } : step,
        );
        const result = await runSteps(steps, ctx, { files: newStepFiles() });
        const log = result.steps.map((step) => step.stdout + step.stderr).join('\n');
        expect(result.ok, log).toBe(true);
        // Steps that import create each order of the input once; others (a lint) create none.
        const imports = steps.some((step) => step.with?.file !== undefined);
        expect(createdOrders().sort()).toEqual(imports ? ['R-1', 'R-2', 'R-3'] : []);
        return;
      }
      if (recipe.kind === 'gitlab') {
        const jobs = Object.entries(parse(recipe.text) as Record<string, Record<string, unknown>>).filter(
          ([name, job]) => !name.startsWith('.') && Array.isArray(job.script),
        );
        expect(jobs.length).toBeGreaterThan(0);
        for (const [, job] of jobs) {
          const first = await runGitLabJob(job, cache);
          expect(first.code, first.log).toBe(0);
          expect(createdOrders().sort()).toEqual(['R-1', 'R-2', 'R-3']);
          // The cached ledger: a second pipeline sends nothing again.
          const second = await runGitLabJob(job, cache);
          expect(second.code, second.log).toBe(0);
          expect(createdOrders()).toHaveLength(3);
        }
        return;
      }
      const workflow = parse(recipe.text) as Workflow;
      let jobsRun = 0;
      const ledgerUrl = freshLedger();
      for (const event of events(workflow)) {
        const before = createdOrders().length;
        for (const run of [1, 2]) {
          const ran = await runWorkflow(workflow, event, cache, ledgerUrl);
          jobsRun += ran.length;
          for (const job of ran) expect(job.ok, `${event} ${job.job} (run ${run}):\n${job.log}`).toBe(true);
          // Each order created once, whatever ran twice.
          const created = createdOrders();
          expect(new Set(created).size, created.join(',')).toBe(created.length);
        }
        if (event === 'pull_request') expect(createdOrders().length).toBe(before);
      }
      expect(jobsRun).toBeGreaterThan(0);
      expect(createdOrders().sort()).toEqual(['R-1', 'R-2', 'R-3']);
    });
  }
});
