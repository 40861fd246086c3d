/**
 * What a command reaches its dependencies through: IO, settings, the API client, the profile
 * store. Services are built lazily, so that `--help` loads none of them. `cli/main.ts` builds one
 * per run; commands receive it and never import `src/cli`.
 */
import type { ApiClient } from '../api/client.js';
import { readConfigFile } from '../config/profiles.js';
import { type GlobalFlags, resolveSettings, type Settings } from '../config/settings.js';
import { UsageError } from '../core/errors.js';
import { ExitCode } from '../core/exit-codes.js';
import { checkSendable, settingSource } from '../core/header-value.js';
import { urlPasswords } from '../core/redact.js';
import { checkBaseUrl } from '../core/url.js';
import type { JqFilteredIO, JqVariable } from '../io/jq.js';
import type { IOStreams } from '../io/streams.js';
import { VERSION } from '../version.js';

export interface ContextInit {
  io: IOStreams;
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C; long-running commands stop when it fires. */
  signal: AbortSignal;
  cwd?: string;
  /** Runs another command line in this process (`main`); the demo runs the real commands with it. */
  runCommand?: RunCommand;
}

/** Where and how a command line run by `ctx.runCommand` runs: its own IO, environment, signal and folder. */
export interface CommandRun {
  io: IOStreams;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  cwd: string;
}

/** Runs one command line and resolves with its exit code; never rejects. */
export type RunCommand = (argv: string[], run: CommandRun) => Promise<number>;

export interface ApiOverrides {
  /** Use this base URL and token instead of the resolved settings (login checks new values). */
  baseUrl?: string;
  token?: string;
  authHeader?: string;
  /** Connections kept to the service (imports raise it to their concurrency). */
  connections?: number;
  onRetry?: import('../api/client.js').ApiClientOptions['onRetry'];
}

export class Context {
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
  readonly cwd: string;
  /** The exit code when the command returns normally (an import with failures sets 4). */
  exitCode: number = ExitCode.Ok;
  private flags: GlobalFlags = {};
  private settingsPromise: Promise<Settings> | undefined;
  private allowNewProfile = false;
  private ledgerWarned = false;
  private readonly clients: ApiClient[] = [];
  private readonly cleanups: (() => Promise<void> | void)[] = [];
  private readonly runner: RunCommand | undefined;
  private streams: IOStreams;
  private jqOutput: JqFilteredIO | undefined;

  constructor(init: ContextInit) {
    this.streams = init.io;
    this.env = init.env;
    this.signal = init.signal;
    this.cwd = init.cwd ?? process.cwd();
    this.runner = init.runCommand;
  }

  /** The command's streams; with --jq, stdout goes through the expression. */
  get io(): IOStreams {
    return this.streams;
  }

  /** Runs another command line in this process, as `ordercli <argv>` would, and resolves with its exit code. */
  runCommand(argv: string[], run: CommandRun): Promise<number> {
    if (!this.runner) throw new Error('runCommand: this context was built without a command runner');
    return this.runner(argv, run);
  }

  /** Called once the command line is parsed; decides colour and prompting. */
  useFlags(flags: GlobalFlags): void {
    this.flags = flags;
    this.settingsPromise = undefined;
    const noColorEnv = this.env.NO_COLOR !== undefined && this.env.NO_COLOR !== '';
    this.io.colorEnabled = flags.color !== false && !noColorEnv && this.io.stdoutIsTTY;
    this.io.neverPrompt = Boolean(flags.yes) || !this.io.stdinIsTTY || Boolean(this.env.CI);
  }

  /**
   * `--jq <expression>` (with its `--arg`s): implies --json, and compiles the expression before the
   * command does anything (one that is not valid jq is exit 2, nothing sent); from then on stdout
   * goes through it. jq is loaded here only, so that no other run pays for it.
   */
  async useJq(expression: string | undefined, variables: readonly JqVariable[]): Promise<void> {
    if (expression === undefined) return;
    this.flags = { ...this.flags, json: true };
    const { JqFilteredIO, JqProgram } = await import('../io/jq.js');
    this.jqOutput = new JqFilteredIO(this.streams, await JqProgram.compile(expression, variables));
    this.streams = this.jqOutput;
  }

  /**
   * Once the command has returned: the rest of its output through --jq. A jq error on that output
   * makes the exit code 1 when the command had none of its own: the command ran (what it sent is
   * sent), so 2, "nothing was sent", would be false.
   */
  endOutput(): void {
    if (!this.jqOutput) return;
    this.jqOutput.end();
    if (this.jqOutput.failed && this.exitCode === ExitCode.Ok) this.exitCode = ExitCode.Failure;
  }

  /** The command creates the profile it names (`login`): a missing `--profile` is not an error. */
  createsProfile(): void {
    this.allowNewProfile = true;
    this.settingsPromise = undefined;
  }

  get globalFlags(): GlobalFlags {
    return this.flags;
  }

  get json(): boolean {
    return Boolean(this.flags.json);
  }

  /** The effective settings: flag > environment > profile > default. */
  settings(): Promise<Settings> {
    this.settingsPromise ??= readConfigFile(this.env).then((config) => {
      const settings = resolveSettings(this.flags, this.env, config, {
        allowNewProfile: this.allowNewProfile,
      });
      this.io.redactor.addSecret(settings.token);
      this.io.redactor.addSecret(settings.webhookKey);
      this.io.redactor.addSecretHeader(settings.authHeader);
      for (const password of urlPasswords(settings.ledger ?? '')) this.io.redactor.addSecret(password);
      if (!this.ledgerWarned && urlPasswords(this.flags.ledger ?? '').length > 0) {
        this.ledgerWarned = true;
        this.io.err(
          'warning: a password given in --ledger stays in your shell history and shows in the process list; next time leave it out of the URL and set PGPASSWORD or a ~/.pgpass file (PostgreSQL reads both), or give the URL in ORDERCLI_LEDGER.\n',
        );
      }
      return settings;
    });
    return this.settingsPromise;
  }

  /** An API client for the resolved (or overridden) base URL and credentials. */
  async api(overrides: ApiOverrides = {}): Promise<ApiClient> {
    const settings = await this.settings();
    const baseUrl = overrides.baseUrl ?? settings.baseUrl;
    if (!baseUrl) {
      throw new UsageError(
        'No service address: pass --base-url, set ORDERCLI_BASE_URL, or save one with ordercli login (try ordercli sandbox for a local one).',
      );
    }
    const { sources, profileName } = settings;
    checkSendable(
      baseUrl,
      overrides.baseUrl === undefined
        ? `the base URL from ${settingSource(sources.baseUrl, { flag: '--base-url', env: 'ORDERCLI_BASE_URL' }, profileName)}`
        : 'the base URL',
      { url: true },
    );
    checkSendable(
      overrides.token ?? settings.token,
      overrides.token === undefined
        ? `the token from ${settingSource(sources.token, { flag: '--token', env: 'ORDERCLI_TOKEN' }, profileName)}`
        : 'the token',
    );
    checkBaseUrl(baseUrl, settings.allowInsecureHttp);
    const { ApiClient } = await import('../api/client.js');
    const client = new ApiClient({
      baseUrl,
      token: overrides.token ?? settings.token,
      authHeader: overrides.authHeader ?? settings.authHeader,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.retries,
      userAgent: `ordercli/${VERSION}`,
      redactor: this.io.redactor,
      trace: settings.verbose ? (line) => this.io.err(`${line}\n`) : undefined,
      connections: overrides.connections,
      onRetry: overrides.onRetry,
    });
    this.clients.push(client);
    return client;
  }

  /** Runs `fn` when the command ends, however it ends (closing servers, flushing files). */
  onClose(fn: () => Promise<void> | void): void {
    this.cleanups.push(fn);
  }

  /** Releases everything the command opened, so that the process can exit by itself. */
  async close(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup();
    await Promise.all(this.clients.splice(0).map((client) => client.close()));
  }
}
