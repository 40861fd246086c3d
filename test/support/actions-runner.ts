/**
 * Runs GitHub Actions steps the way a runner does, for the tests of action.yml and of the workflows
 * docs/ci.md shows: each `run:` step is a bash script (`bash --noprofile --norc -eo pipefail`, the
 * runner's `shell: bash`) with `${{ … }}` expressions substituted, in the workspace, with
 * `$GITHUB_OUTPUT` (a file per step), `$GITHUB_STEP_SUMMARY`, `$GITHUB_PATH` and `$GITHUB_ENV` as
 * files whose contents the next steps see. A composite action (`uses: <owner>/ordercli@<ref>`, or
 * `./`) runs its own steps with its `with:` inputs and gives its outputs. The few actions of
 * GitHub's own the recipes use (checkout, setup-node, cache, upload-artifact) are played by
 * functions the test gives. An expression or a step this runner does not know fails the test,
 * so that a recipe never passes by being skipped.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { tempDir, testEnv } from './cli.js';

export interface Step {
  id?: string;
  name?: string;
  if?: string | boolean;
  uses?: string;
  run?: string;
  shell?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  'working-directory'?: string;
  'continue-on-error'?: boolean;
}

export interface Job {
  'runs-on'?: unknown;
  if?: string;
  env?: Record<string, unknown>;
  steps: Step[];
  [key: string]: unknown;
}

/** What expressions see, and where steps run. */
export interface RunContext {
  workspace: string;
  /** The environment every step starts from (the test's: sandbox URL, token…). */
  env: Record<string, string | undefined>;
  github: Record<string, string>;
  vars?: Record<string, string>;
  secrets?: Record<string, string>;
  /** Steps that use an action other than ordercli's: what the test plays for them. */
  uses?: (step: Step, withInputs: Record<string, string>, ctx: RunContext) => Promise<void> | void;
  /** Where `uses: <owner>/ordercli@<ref>` is checked out (the repository under test). */
  actionPath: string;
}

export interface StepResult {
  step: Step;
  outcome: 'success' | 'failure' | 'skipped';
  exitCode: number;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
}

export interface JobResult {
  steps: StepResult[];
  ok: boolean;
  summary: string;
}

/** Parses `name=value` lines and `name<<DELIMITER` blocks (GitHub's two forms of $GITHUB_OUTPUT). */
export function parseCommandFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const block = /^([^=]+?)<<(.+)$/.exec(line);
    if (block) {
      const end = lines.indexOf(block[2]!, i + 1);
      if (end === -1) throw new Error(`no end of the value of ${block[1]} (${block[2]})`);
      values[block[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (line.includes('=')) {
      values[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    } else if (line.trim() !== '') throw new Error(`not a command file line: ${JSON.stringify(line)}`);
  }
  return values;
}

/** Runs one job's steps (a workflow's, or a composite action's) in order, as a runner does. */
export async function runSteps(
  steps: readonly Step[],
  ctx: RunContext,
  scope: { inputs?: Record<string, string>; env?: Record<string, unknown>; files: StepFiles },
): Promise<JobResult> {
  const results: StepResult[] = [];
  const outputsById: Record<string, { outputs: Record<string, string>; outcome: string }> = {};
  let failed = false;
  for (const step of steps) {
    const base: ExpressionContext = {
      inputs: scope.inputs ?? {},
      github: ctx.github,
      vars: ctx.vars ?? {},
      secrets: ctx.secrets ?? {},
      env: {},
      steps: outputsById,
      failed,
    };
    const exprCtx = { ...base, env: { ...interpolated(scope.env, base), ...readEnvFile(scope.files) } };
    if (!conditionHolds(step.if ?? 'success()', exprCtx)) {
      results.push({ step, outcome: 'skipped', exitCode: 0, stdout: '', stderr: '', outputs: {} });
      if (step.id) outputsById[step.id] = { outputs: {}, outcome: 'skipped' };
      continue;
    }
    const result = await runStep(step, ctx, scope, exprCtx);
    results.push(result);
    if (step.id) outputsById[step.id] = { outputs: result.outputs, outcome: result.outcome };
    if (result.outcome === 'failure' && !step['continue-on-error']) failed = true;
  }
  return { steps: results, ok: !failed, summary: readOptional(scope.files.summary) };
}

/** The files a job's steps share: the summary, PATH and env additions. */
export interface StepFiles {
  dir: string;
  summary: string;
  path: string;
  env: string;
}

export function newStepFiles(): StepFiles {
  const dir = tempDir('ordercli-runner-');
  const files = {
    dir,
    summary: join(dir, 'step-summary.md'),
    path: join(dir, 'path'),
    env: join(dir, 'env'),
  };
  for (const file of [files.summary, files.path, files.env]) writeFileSync(file, '');
  return files;
}

let stepCount = 0;

async function runStep(
  step: Step,
  ctx: RunContext,
  scope: { inputs?: Record<string, string>; env?: Record<string, unknown>; files: StepFiles },
  exprCtx: ExpressionContext,
): Promise<StepResult> {
  const withInputs = Object.fromEntries(
    Object.entries(step.with ?? {}).map(([name, value]) => [name, interpolate(String(value), exprCtx)]),
  );
  if (step.uses !== undefined) {
    if (/(^|\/)ordercli@|^\.\/?$/.test(step.uses)) {
      const env = { ...exprCtx.env, ...interpolated(step.env, exprCtx) };
      const action = await runAction(ctx, withInputs, scope.files, env);
      return {
        step,
        outcome: action.ok ? 'success' : 'failure',
        exitCode: action.ok ? 0 : 1,
        stdout: action.steps.map((s) => s.stdout).join(''),
        stderr: action.steps.map((s) => s.stderr).join(''),
        outputs: action.outputs,
      };
    }
    if (!ctx.uses) throw new Error(`no player for uses: ${step.uses}`);
    await ctx.uses(step, withInputs, ctx);
    return { step, outcome: 'success', exitCode: 0, stdout: '', stderr: '', outputs: {} };
  }
  if (step.run === undefined) throw new Error(`a step with neither run nor uses: ${JSON.stringify(step)}`);
  if (step.shell !== undefined && step.shell !== 'bash') throw new Error(`shell ${step.shell} is not played`);
  const script = join(scope.files.dir, `step-${++stepCount}.sh`);
  writeFileSync(script, interpolate(step.run, exprCtx));
  const output = join(scope.files.dir, `output-${stepCount}`);
  writeFileSync(output, '');
  const pathAdditions = readOptional(scope.files.path).split('\n').filter(Boolean).reverse();
  const base = testEnv({ ...ctx.env });
  const env: Record<string, string | undefined> = {
    ...base,
    ...exprCtx.env,
    ...interpolated(step.env, exprCtx),
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_WORKSPACE: ctx.workspace,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: scope.files.summary,
    GITHUB_PATH: scope.files.path,
    GITHUB_ENV: scope.files.env,
    GITHUB_ACTION_PATH: ctx.actionPath,
    RUNNER_TEMP: scope.files.dir,
  };
  env.PATH = [...pathAdditions, base.PATH ?? ''].join(delimiter);
  const cwd = step['working-directory'] ? join(ctx.workspace, step['working-directory']) : ctx.workspace;
  const run = await spawnBash(script, cwd, env);
  return {
    step,
    outcome: run.code === 0 ? 'success' : 'failure',
    exitCode: run.code,
    stdout: run.stdout,
    stderr: run.stderr,
    outputs: parseCommandFile(readFileSync(output, 'utf8')),
  };
}

/** Runs ordercli's action.yml (at `ctx.actionPath`) with `with:` inputs; its outputs as it declares them. */
export async function runAction(
  ctx: RunContext,
  withInputs: Record<string, string>,
  files: StepFiles,
  env: Record<string, string> = {},
): Promise<JobResult & { outputs: Record<string, string> }> {
  const action = parse(readFileSync(join(ctx.actionPath, 'action.yml'), 'utf8')) as {
    inputs: Record<string, { default?: string; required?: boolean }>;
    outputs: Record<string, { value: string }>;
    runs: { using: string; steps: Step[] };
  };
  if (action.runs.using !== 'composite') throw new Error('only composite actions are played');
  for (const name of Object.keys(withInputs)) {
    if (!(name in action.inputs)) throw new Error(`the action has no input ${name}`);
  }
  const inputs: Record<string, string> = {};
  for (const [name, input] of Object.entries(action.inputs)) {
    inputs[name] = withInputs[name] ?? input.default ?? '';
    if (input.required && inputs[name] === '') throw new Error(`input ${name} is required`);
  }
  const result = await runSteps(action.runs.steps, ctx, { inputs, env, files });
  const steps: ExpressionContext['steps'] = {};
  for (const step of result.steps) {
    if (step.step.id) steps[step.step.id] = { outputs: step.outputs, outcome: step.outcome };
  }
  const exprCtx: ExpressionContext = {
    inputs,
    github: ctx.github,
    vars: {},
    secrets: {},
    env: {},
    steps,
    failed: !result.ok,
  };
  const outputs = Object.fromEntries(
    Object.entries(action.outputs).map(([name, output]) => [name, interpolate(output.value, exprCtx)]),
  );
  return { ...result, outputs };
}

function spawnBash(
  script: string,
  cwd: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  mkdirSync(cwd, { recursive: true });
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
      cwd,
      env: env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

function readOptional(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function readEnvFile(files: StepFiles): Record<string, string> {
  return parseCommandFile(readOptional(files.env));
}

function interpolated(
  env: Record<string, unknown> | undefined,
  exprCtx: ExpressionContext,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env ?? {}).map(([name, value]) => [name, interpolate(String(value), exprCtx)]),
  );
}

// ---- Expressions: the part of GitHub's language the recipes use ----

export interface ExpressionContext {
  inputs: Record<string, string>;
  github: Record<string, string>;
  vars: Record<string, string>;
  secrets: Record<string, string>;
  env: Record<string, string>;
  steps: Record<string, { outputs: Record<string, string>; outcome: string }>;
  /** A step before failed (what `success()` and `failure()` say). */
  failed: boolean;
}

type Value = string | number | boolean | null | undefined | Record<string, unknown>;

export function interpolate(text: string, ctx: ExpressionContext): string {
  return text.replace(/\$\{\{(.*?)\}\}/gs, (_, expression: string) => {
    const value = evaluate(expression, ctx);
    return value === undefined || value === null ? '' : String(value);
  });
}

/** Whether an `if:` holds (a step's or a job's), written with or without `${{ }}`. */
export function conditionHolds(condition: string | boolean, ctx: ExpressionContext): boolean {
  const text = String(condition);
  const match = /^\s*\$\{\{(.*)\}\}\s*$/s.exec(text);
  return truthy(evaluate(match ? match[1]! : text, ctx));
}

function truthy(value: Value): boolean {
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '';
}

function evaluate(expression: string, ctx: ExpressionContext): Value {
  const tokens = expression.match(/'(?:[^']|'')*'|==|!=|&&|\|\||!|\(|\)|[A-Za-z_][\w.-]*|\d+/g) ?? [];
  const rest = expression.replace(/'(?:[^']|'')*'|==|!=|&&|\|\||!|\(|\)|[A-Za-z_][\w.-]*|\d+|\s+/g, '');
  if (rest !== '') throw new Error(`expression not played: ${expression}`);
  let at = 0;
  const peek = () => tokens[at];
  const take = () => tokens[at++];
  const or = (): Value => {
    let left = and();
    while (peek() === '||') {
      take();
      const right = and();
      left = truthy(left) ? left : right;
    }
    return left;
  };
  const and = (): Value => {
    let left = equality();
    while (peek() === '&&') {
      take();
      const right = equality();
      left = truthy(left) ? right : left;
    }
    return left;
  };
  const equality = (): Value => {
    let left = unary();
    while (peek() === '==' || peek() === '!=') {
      const op = take();
      const right = unary();
      const same = String(left ?? '').toLowerCase() === String(right ?? '').toLowerCase();
      left = op === '==' ? same : !same;
    }
    return left;
  };
  const unary = (): Value => {
    if (peek() === '!') {
      take();
      return !truthy(unary());
    }
    return primary();
  };
  const primary = (): Value => {
    const token = take();
    if (token === undefined) throw new Error(`expression ends early: ${expression}`);
    if (token === '(') {
      const value = or();
      if (take() !== ')') throw new Error(`no ) in ${expression}`);
      return value;
    }
    if (token.startsWith("'")) return token.slice(1, -1).replace(/''/g, "'");
    if (/^\d+$/.test(token)) return Number(token);
    if (token === 'true' || token === 'false') return token === 'true';
    if (peek() === '(') {
      take();
      if (take() !== ')') throw new Error(`functions with arguments are not played: ${expression}`);
      if (token === 'always') return true;
      if (token === 'success') return !ctx.failed;
      if (token === 'failure') return ctx.failed;
      if (token === 'cancelled') return false;
      throw new Error(`function not played: ${token}()`);
    }
    return lookup(token, ctx, expression);
  };
  const value = or();
  if (at !== tokens.length) throw new Error(`expression not played: ${expression}`);
  return value;
}

function lookup(path: string, ctx: ExpressionContext, expression: string): Value {
  const [root, ...rest] = path.split('.');
  const roots: Record<string, unknown> = {
    inputs: ctx.inputs,
    github: ctx.github,
    vars: ctx.vars,
    secrets: ctx.secrets,
    env: ctx.env,
    steps: ctx.steps,
  };
  if (!(root! in roots)) throw new Error(`context not played: ${root} in ${expression}`);
  let value: unknown = roots[root!];
  for (const key of rest) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  }
  if (root === 'github' && value === undefined) throw new Error(`github.${rest.join('.')} not played`);
  return value as Value;
}
