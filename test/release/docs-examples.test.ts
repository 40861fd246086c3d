/**
 * Every console example of README.md and docs/*.md (a `$ ` line and the output shown below it)
 * runs here as typed, in the environment its document describes, and prints what the document
 * shows: the same exit code (the `echo $?` that follows it, else 0, or not 0 when the document
 * shows an `error:`), and the shown lines in order once ports, times, durations, rates and the
 * like are normalised (test/support/doc-examples.ts). An example that cannot run here is in
 * NOT_RUN with the reason; an example in neither place fails the test, so none is left out
 * silently.
 *
 * Each document is a session of its own: a sandbox on a free port of 127.0.0.1 started here
 * (the document's `npx ordercli sandbox &` line stands for it), an empty HOME, a copy of
 * fixtures/ as the checkout, `npx ordercli` running the built binary, `export` and `cd` lines
 * kept from one example to the next. Sessions run at the same time; a session's examples one
 * after another, since each may need what the previous one did (an order created, a profile
 * saved).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxOptions, startSandbox } from '../../src/sandbox/server.js';
import { BIN, ROOT } from '../support/cli.js';
import { type DocExample, docExamples, missingLines, normalise } from '../support/doc-examples.js';
import { documents, readDocument } from './markdown.js';
import { releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
const sandboxes: Sandbox[] = [];

afterAll(async () => {
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
  dirs.cleanup();
});

const FAULTS =
  'the run of a generated 600-order file (300 in section 4) against a sandbox injecting random 500s and ' +
  'connection resets: its counts and the orders they hit change at every run (test/commands/orders/import*.test.ts)';
const RACE =
  'two commands racing on one order while the service takes 3 s to answer (test/commands/orders/import.never-twice.test.ts)';

/** Examples that do not run here, by document and command as typed, each with the reason. */
const NOT_RUN: Record<string, Record<string, string>> = {
  'README.md': {
    'npx ordercli sandbox':
      'runs until Ctrl-C; its banner is compared with the README in test/release/readme-commands.test.ts',
  },
  'docs/orders-import.md': {
    'npx ordercli sandbox --port 0 --latency 20 --fail-rate 0.02 --reset-rate 0.01 &':
      'the faults serve the examples below that are not run; those that run (generate, dry run, workbooks) ' +
      'go to the test sandbox, without faults',
    'npx ordercli orders import bad.csv':
      'bad.csv, 601 orders with four mistakes, is not in the repository (orders-with-errors.csv of ' +
      'docs/orders-input.md runs, with every kind of mistake)',
    'npx ordercli orders import orders.csv --report report.csv --rejects rejects.csv': FAULTS,
    'head -3 report.csv': FAULTS,
    'grep -v ",created," report.csv | head -4': FAULTS,
    'npx ordercli orders import orders.csv --retry-unknown --json | jq -c .counts': FAULTS,
    'npx ordercli orders import orders.csv': FAULTS,
    'npx ordercli orders journal orders.csv': FAULTS,
    'npx ordercli orders resolve orders.csv --from-events events.ndjson': `${FAULTS}, with the log of a listen subscribed while it ran`,
    'npx ordercli orders resolve orders.csv --not-created ACME-00000001 ACME-00000013 ACME-00000021 ACME-00000064 ACME-00000292':
      FAULTS,
    'npx ordercli orders import week.csv':
      'needs the journal file an earlier release of ordercli wrote (test/ledger/upgrade.fold.test.ts)',
    'npx ordercli orders import monday.csv --report monday-report.csv &': RACE,
    'npx ordercli orders import monday-fixed.csv --report fixed-report.csv': RACE,
    'grep -m1 "being sent" monday-report.csv': RACE,
    'grep -m1 "already created" monday-report.csv': RACE,
    'npx ordercli orders create --file order.json': RACE,
    'npx ordercli orders create --file order.json --force': RACE,
    'grep WED-00000590 wed-report.csv': RACE,
    'npx ordercli --ledger fresh-ledger orders import monday.csv':
      'follows the 300 orders of the two overlapping imports above in the default ledger',
    'npx ordercli orders create --file thu1.json':
      'an import in a PID namespace of its own (unshare --pid) killed with kill -9 while sending (test/ledger/)',
    'npx ordercli orders import friday.csv --report fri.csv':
      'the re-run of a 3,000-order import killed with kill -9 at a random moment (bench/kill9.mjs, test/ledger/)',
    'npx ordercli orders import week.csv        # Ctrl-C once sending is under way':
      'a Ctrl-C typed while a 10,001-order import is sending (test/release/ctrl-c.test.ts)',
  },
  'docs/orders-new.md': {
    'npx ordercli orders new': 'interactive: answers typed at prompts (test/commands/orders/new.test.ts)',
  },
  'docs/refs.md': {
    'npx ordercli refs browse':
      'interactive: keys typed in a full-screen list (test/commands/refs/browse*.test.ts)',
  },
  'docs/webhooks.md': {
    'npx ordercli listen --log events.ndjson --forward-to http://127.0.0.1:3999/hooks':
      'runs until Ctrl-C, forwarding to an application of yours (test/commands/listen/)',
    'npx ordercli listen --log events.ndjson --forward-to sales_order_validated=http://127.0.0.1:3000/orders --forward-to http://127.0.0.1:3000/webhooks':
      'runs until Ctrl-C, forwarding to applications of yours',
    'npx ordercli listen --json --forward-to http://127.0.0.1:3999/hooks --queue-dir q':
      'runs until Ctrl-C, forwarding to an application of yours',
    'npx ordercli listen --once --event sales_order_validated --wait 60s --json > event.json':
      'waits for a notification the service sends when an order is validated, from a receiver the service can reach',
    'npx ordercli listen --once --fetch --exec "jq -r .code"':
      'waits for a notification the service sends when an order is validated, from a receiver the service can reach',
    'npx ordercli listen --tunnel cloudflared --subscribe sales_order_validated':
      'starts a cloudflared tunnel: traffic off this machine',
    'npx ordercli listen --subscribe sales_order_validated --public-url https://my-tunnel.example.com/':
      'runs until Ctrl-C behind a public tunnel address of yours',
    'npx ordercli listen --log events.ndjson --forward-to http://127.0.0.1:3999/hooks --inspect':
      'runs until Ctrl-C and serves a page for a browser (test/webhooks/inspector*.test.ts)',
    'npx ordercli webhooks trigger sales_order_validated --url http://127.0.0.1:8787/':
      'needs the listen of section 3 running on port 8787',
    'npx ordercli webhooks replay events.ndjson --url http://127.0.0.1:3999/hooks --event sales_order_validated':
      'needs the events.ndjson a listen --log recorded, and an application of yours on port 3999',
  },
};

/** How an example is run and judged when the default does not fit, with the reason. */
interface Override {
  /** Extra environment of this example (what the document says was set). */
  env?: Record<string, string>;
  /** Run on a terminal this many columns wide (tables); else output is piped. */
  columns?: number;
  /** Judge only the exit code, and the output by this pattern (normalised). */
  pattern?: RegExp;
  /** Before this example, a new sandbox and an empty HOME (the document starts a new scene). */
  fresh?: boolean;
  why: string;
}

interface Session {
  file: string;
  /** Where the examples start, in the checkout (a copy of the repository's fixtures/). */
  cwd: string;
  /** The sandbox's port(s) in the document, replaced with the test sandbox's in commands. */
  ports: number[];
  sandbox?: SandboxOptions;
  /** The environment the document's text sets before its examples (`{url}`: the sandbox's). */
  env: Record<string, string>;
  /** Examples with output on a terminal this many columns wide (tables) unless an override says. */
  columns?: number;
  overrides?: Record<string, Override>;
}

const PARTNER = 'sandbox-partner-token';

const SESSIONS: Session[] = [
  {
    file: 'README.md',
    cwd: '.',
    ports: [4780],
    // "The examples below assume: export ORDERCLI_BASE_URL=… ORDERCLI_TOKEN=sandbox-partner-token".
    env: { ORDERCLI_BASE_URL: '{url}', ORDERCLI_TOKEN: PARTNER },
    // The README's table is as wide as a terminal of 110 columns shows it.
    columns: 110,
  },
  { file: 'docs/orders-input.md', cwd: '.', ports: [4780], env: {} },
  {
    file: 'docs/orders-import.md',
    cwd: '.',
    ports: [44347, 47811],
    env: { ORDERCLI_BASE_URL: '{url}', ORDERCLI_TOKEN: PARTNER },
  },
  {
    file: 'docs/ci.md',
    cwd: 'fixtures/orders/ci',
    ports: [4780],
    env: { ORDERCLI_BASE_URL: '{url}', ORDERCLI_TOKEN: PARTNER },
    overrides: {
      'npx ordercli orders import orders/orders.csv --dry-run': {
        env: { GITHUB_ACTIONS: 'true' },
        fresh: true,
        why: 'the section on GitHub Actions: a run in a GitHub job, of the same file, on a service that has none of its orders yet',
      },
      'npx ordercli orders import orders/orders.csv --skip-invalid --report report.xml #2': {
        env: { GITHUB_ACTIONS: 'true' },
        why: 'the GitHub Actions section (the first run of this line, above it, is outside GitHub)',
      },
      'npx ordercli orders import orders/week.csv --report report.xml': {
        env: { GITHUB_ACTIONS: 'true' },
        why: 'the GitHub Actions section',
      },
    },
  },
  {
    file: 'docs/refs.md',
    cwd: 'fixtures/orders',
    ports: [4780],
    // "captured from ordercli sandbox (terminal 100 columns wide, NO_COLOR=1)"; login saves the profile.
    env: { ORDER_TOKEN: PARTNER },
    columns: 100,
    overrides: {
      'ls -l ~/.config/ordercli/config.json': {
        pattern: /^-rw------- \d+ \S+ \S+ \d+ .+ \/home\/me\/\.config\/ordercli\/config\.json$/,
        why: 'the owner, size and date are those of the machine',
      },
    },
  },
  { file: 'docs/schema.md', cwd: '.', ports: [], env: {} },
  {
    file: 'docs/webhooks.md',
    cwd: '.',
    ports: [4871],
    env: { ORDERCLI_BASE_URL: '{url}', ORDERCLI_TOKEN: PARTNER },
    overrides: {
      'printf %s "$ORDERCLI_WEBHOOK_KEY" | sha256sum | cut -c1-8': {
        env: { ORDERCLI_WEBHOOK_KEY: 'whk_docs_example_key' },
        pattern: /^[0-9a-f]{8}$/,
        why: 'the fingerprint of your own key',
      },
    },
  },
  { file: 'docs/orders-new.md', cwd: '.', ports: [], env: {} },
];

interface Run {
  code: number;
  output: string;
}

/** Runs a shell line with stdout and stderr in one stream, piped or on a terminal of `columns`. */
function runLine(line: string, cwd: string, env: NodeJS.ProcessEnv, columns?: number): Promise<Run> {
  const script = `{\n${line}\n} 2>&1`;
  const [command, args] =
    columns === undefined
      ? ['/bin/sh', ['-c', script]]
      : ['script', ['-qec', `stty cols ${columns} rows 50; ${script}`, '/dev/null']];
  return new Promise((resolve, reject) => {
    // A group of its own, so that an example that never ends (a server) is ended whole.
    const child = spawn(command as string, args as string[], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 137, output });
    });
  });
}

/** A folder whose `npx` runs `npx ordercli …` as the built binary, the way a clone's npx does. */
function fakeNpx(): string {
  const bin = dirs.make('ordercli-docs-bin-');
  const npx = join(bin, 'npx');
  writeFileSync(
    npx,
    `#!/bin/sh\nif [ "$1" = ordercli ]; then shift; exec "${process.execPath}" "${BIN}" "$@"; fi\n` +
      'echo "npx $1: only npx ordercli runs in the documents\' examples" >&2\nexit 127\n',
  );
  chmodSync(npx, 0o755);
  return bin;
}

/** What a session's examples share: its sandbox, HOME, working directory and environment. */
class SessionState {
  sandbox!: Sandbox;
  home = '';
  cwd: string;
  env: NodeJS.ProcessEnv = {};
  readonly checkout: string;

  constructor(
    readonly session: Session,
    readonly npxDir: string,
  ) {
    this.checkout = dirs.make('ordercli-docs-checkout-');
    cpSync(join(ROOT, 'fixtures'), join(this.checkout, 'fixtures'), { recursive: true });
    symlinkSync(join(ROOT, 'bench'), join(this.checkout, 'bench'));
    this.cwd = join(this.checkout, session.cwd);
  }

  async fresh(): Promise<void> {
    const previous = this.sandbox?.url;
    if (this.sandbox) await this.sandbox.close();
    this.sandbox = await startSandbox({ port: 0, quiet: true, ...this.session.sandbox });
    sandboxes.push(this.sandbox);
    this.home = dirs.make('ordercli-docs-home-');
    // An existing shell setup, where the completion examples write their scripts.
    for (const dir of ['.local/share/bash-completion/completions', '.zfunc', '.config/fish/completions'])
      mkdirSync(join(this.home, dir), { recursive: true });
    const base = releaseEnv('', { NO_COLOR: '1', HOME: this.home });
    delete base.ORDERCLI_CONFIG_DIR;
    delete base.XDG_CONFIG_HOME;
    for (const key of Object.keys(base)) if (key.startsWith('GITHUB_')) delete base[key];
    base.PATH = `${this.npxDir}:${base.PATH ?? ''}`;
    // What the examples exported so far stays, pointed at the new sandbox.
    const kept = Object.fromEntries(
      Object.entries(this.env)
        .filter(([key]) => key.startsWith('ORDERCLI_') || key === 'ORDER_TOKEN')
        .map(([key, value]) => [key, previous ? value?.replaceAll(previous, this.sandbox.url) : value]),
    );
    const initial = Object.fromEntries(
      Object.entries(this.session.env).map(([key, value]) => [key, value.replace('{url}', this.sandbox.url)]),
    );
    this.env = { ...base, ...initial, ...kept };
  }

  /** The command with the document's sandbox address replaced by this sandbox's. */
  typed(command: string): string {
    let out = command;
    for (const port of this.session.ports) out = out.replaceAll(`http://127.0.0.1:${port}`, this.sandbox.url);
    return out;
  }
}

/** DOCS_EXAMPLES_TRACE=<file> lists there each example as it is run or passed over. */
function trace(line: string): void {
  if (process.env.DOCS_EXAMPLES_TRACE) appendFileSync(process.env.DOCS_EXAMPLES_TRACE, `${line}\n`);
}

/**
 * The exit code an example's document shows: its `echo $?`; else not 0 after an `error:`, 4 after
 * an import's summary with orders not created (the exit codes of the README), 0 otherwise.
 */
function shownCode(example: DocExample, next: DocExample | undefined): number | 'not 0' {
  if (next?.command.startsWith('echo $?')) return Number(next.output[0]?.trim());
  if (example.output.some((line) => line.startsWith('error:'))) return 'not 0';
  const notCreated = example.output.some((line) => /^ {2}(failed|unknown|invalid) +[1-9]/.test(line));
  return notCreated ? 4 : 0;
}

/** Runs the examples of one session in order; returns a description of each that differs. */
async function runSession(session: Session, npxDir: string): Promise<{ ran: number; problems: string[] }> {
  const state = new SessionState(session, npxDir);
  await state.fresh();
  const examples = docExamples(session.file, readDocument(session.file));
  const notRun = NOT_RUN[session.file] ?? {};
  const problems: string[] = [];
  let ran = 0;
  let last: Run | undefined;
  const seen = new Map<string, number>();
  for (const [index, example] of examples.entries()) {
    const where = `${example.file}:${example.line}: $ ${example.command}`;
    // An override names its example by the command, with ` #<n>` for the n-th line typed alike.
    const occurrence = (seen.get(example.command) ?? 0) + 1;
    seen.set(example.command, occurrence);
    const override =
      session.overrides?.[`${example.command} #${occurrence}`] ??
      (occurrence === 1 ? session.overrides?.[example.command] : undefined);
    // An `echo $?` after an example that is not run checks nothing here either.
    if (example.command in notRun || (example.command.startsWith('echo $?') && last === undefined)) {
      trace(`${where} -> not run`);
      last = undefined;
      continue;
    }
    if (override?.fresh) await state.fresh();
    ran++;
    const command = example.command;
    trace(`${where} -> run`);
    if (/^npx ordercli sandbox\b.*&$/.test(command)) continue; // the session's sandbox stands for it
    if (command.startsWith('export ')) {
      for (const [, key, value] of state.typed(command).matchAll(/(\w+)=(\S+)/g)) state.env[key!] = value!;
      continue;
    }
    if (command.startsWith('cd ')) {
      state.cwd = join(state.cwd, command.slice(3).trim());
      continue;
    }
    if (command.startsWith('echo $?')) {
      const shown = Number(example.output[0]?.trim());
      if (last === undefined) problems.push(`${where}\n    follows no example that ran`);
      else if (last.code !== shown)
        problems.push(`${where}\n    the previous example exited ${last.code}, not ${shown}`);
      continue;
    }
    const columns =
      override?.columns ??
      (example.output.some((line) => line.startsWith('┌')) ? session.columns : undefined);
    const narrow = /in an (\d+)-column terminal/.exec(command)?.[1];
    const env = { ...state.env, ...override?.env };
    const run = await runLine(state.typed(command), state.cwd, env, narrow ? Number(narrow) : columns);
    last = run;
    trace(`${where} -> exit ${run.code}`);
    const options = { home: state.home, checkout: state.checkout };
    const expected = shownCode(example, examples[index + 1]);
    const codeOk = expected === 'not 0' ? run.code !== 0 : run.code === expected;
    const missing = override?.pattern
      ? override.pattern.test(normalise(run.output, options).trim())
        ? []
        : [`output matching ${override.pattern}`]
      : missingLines(example.output, run.output, options);
    if (!codeOk || missing.length > 0) {
      problems.push(
        `${where}\n    exit ${run.code} (shown: ${expected})` +
          (missing.length > 0 ? `\n    not printed:\n      ${missing.join('\n      ')}` : '') +
          `\n    printed:\n      ${normalise(run.output, options).trimEnd().split('\n').slice(0, 40).join('\n      ')}`,
      );
    }
  }
  return { ran, problems };
}

describe('the console examples of README.md and docs/*.md', () => {
  it('are read and judged as intended (the parser and the matcher themselves)', () => {
    const markdown = [
      '```console',
      '$ npx ordercli orders import a.csv \\',
      '    --dry-run',
      'Import of a.csv → http://127.0.0.1:4780: finished in 0.1 s, 3 orders sent (89/s)',
      '  created  3',
      '…',
      '$ echo $?',
      '0',
      '```',
      '```sh',
      'npx ordercli not-an-example',
      '```',
    ].join('\n');
    const [first, second, ...rest] = docExamples('x.md', markdown);
    expect(rest).toEqual([]);
    expect(first).toMatchObject({ line: 2, command: 'npx ordercli orders import a.csv --dry-run' });
    expect(second).toMatchObject({ line: 7, command: 'echo $?', output: ['0'] });
    const printed =
      'note: x\nImport of a.csv → http://127.0.0.1:39211: finished in 2.4 s, 3 orders sent (1/s)\n  created  3\n';
    expect(missingLines(first!.output, printed)).toEqual([]);
    expect(missingLines(first!.output, printed.replace('created  3', 'created  2'))).toEqual([
      '  created  3',
    ]);
    expect(missingLines(['  created  3', 'Import of …'], printed)).toEqual(['Import of …']);
    expect(
      missingLines(['error: … 2 valid ones.'], 'error: 1 of 3 orders are invalid; send the 2 valid ones.'),
    ).toEqual([]);
  });

  it('are each run below or listed in NOT_RUN with a reason', () => {
    const sessions = new Set(SESSIONS.map((session) => session.file));
    const problems: string[] = [];
    for (const file of documents()) {
      const examples = docExamples(file, readDocument(file));
      if (examples.length > 0 && !sessions.has(file))
        problems.push(`${file}: has examples but no session here`);
      const commands = new Set(examples.map((example) => example.command));
      for (const command of Object.keys(NOT_RUN[file] ?? {}))
        if (!commands.has(command))
          problems.push(`${file}: NOT_RUN names ${JSON.stringify(command)}, no longer an example`);
      for (const command of Object.keys(SESSIONS.find((s) => s.file === file)?.overrides ?? {}))
        if (!commands.has(command.replace(/ #\d+$/, '')))
          problems.push(`${file}: an override names ${JSON.stringify(command)}, no longer an example`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('print what the documents show, in the environment they describe', async () => {
    const npxDir = fakeNpx();
    const results = await Promise.all(SESSIONS.map((session) => runSession(session, npxDir)));
    const problems = results.flatMap((result) => result.problems);
    const ran = results.reduce((sum, result) => sum + result.ran, 0);
    expect(
      problems,
      `${problems.length} examples differ from their documents:\n\n${problems.join('\n\n')}`,
    ).toEqual([]);
    expect(ran).toBeGreaterThan(60);
  }, 120_000);
});
