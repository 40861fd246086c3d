/**
 * Interactive prompts (@inquirer/prompts, loaded on first use) on the command's own streams, so
 * that tests drive them through real prompt streams. Ctrl-C becomes a CancelledError (exit 130),
 * Escape a PromptEscape that the command turns into "back" or "quit".
 */
import { Writable } from 'node:stream';
import { CancelledError, UsageError } from '../core/errors.js';
import type { IOStreams } from './streams.js';

export interface Choice<T> {
  value: T;
  name: string;
  /** Shown under the list while the choice is highlighted. */
  description?: string;
  /** Shown as the answer once chosen (default: the name). */
  short?: string;
  disabled?: boolean | string;
}

/** A line between choices that cannot be chosen. */
export interface ChoiceSeparator {
  separator: string;
}

export type ChoiceItem<T> = Choice<T> | ChoiceSeparator;

/** The user pressed Escape: the command goes back one step, or leaves. */
export class PromptEscape extends Error {
  constructor() {
    super('Escape pressed');
    this.name = 'PromptEscape';
  }
}

export type Validate = (value: string) => true | string;

export interface Prompter {
  /** One choice from a list (arrows and Enter). */
  select<T>(
    message: string,
    choices: ChoiceItem<T>[],
    options?: { default?: T; pageSize?: number },
  ): Promise<T>;
  /** One choice from a list filtered as the user types; `initial` is typed in first (the last search, kept). */
  search<T>(
    message: string,
    source: (term: string) => ChoiceItem<T>[],
    options?: { pageSize?: number; initial?: string },
  ): Promise<T>;
  /** A line of text. */
  input(message: string, options?: { default?: string; validate?: Validate }): Promise<string>;
  /** A secret: nothing of it is echoed. */
  password(message: string, options?: { validate?: Validate }): Promise<string>;
}

type Inquirer = typeof import('@inquirer/prompts');

interface Keypress {
  name?: string;
}

const identity = (text: string) => text;

/** Inquirer picks its colours from the environment; `--no-color` must win. */
const PLAIN_THEME = {
  prefix: { idle: '?', done: '✔' },
  style: {
    answer: identity,
    message: identity,
    error: (text: string) => `> ${text}`,
    defaultAnswer: (text: string) => `(${text})`,
    help: identity,
    highlight: identity,
    key: (text: string) => `<${text}>`,
    description: identity,
    disabled: (text: string) => `- ${text}`,
    searchTerm: identity,
  },
};

/**
 * Refuses (exit 2) an interactive command where it cannot ask: stdin or stdout not a terminal, or
 * prompts turned off by `--yes` or `CI`. `instead` says what to run there.
 */
export function requirePrompts(io: IOStreams, command: string, instead: string): void {
  if (io.canPrompt()) return;
  const why =
    io.stdinIsTTY && io.stdoutIsTTY
      ? 'prompts are turned off (--yes or CI)'
      : 'stdin and stdout must both be a terminal';
  throw new UsageError(`${command} is interactive and ${why}. ${instead}`);
}

export interface PrompterOptions {
  /** Erase each prompt once answered or left (a browser that loops); default: keep the answer. */
  clearPromptOnDone?: boolean;
}

/** Prompts on `io.stdin`/`io.stdout`, stopped by `signal` (Ctrl-C outside a prompt). */
export function createPrompter(io: IOStreams, signal: AbortSignal, options: PrompterOptions = {}): Prompter {
  const runner = new PromptRunner(io, signal, options);
  const theme = () => (io.colorEnabled ? undefined : PLAIN_THEME);
  return {
    select: (message, choices, options = {}) =>
      runner.ask((prompts, context) =>
        prompts.select(
          {
            message,
            choices: toInquirer(prompts, choices),
            default: options.default,
            pageSize: options.pageSize,
            theme: theme(),
          },
          context,
        ),
      ),
    search: (message, source, options = {}) =>
      runner.ask((prompts, context) => {
        // Inquirer's search has no starting term: it is put back on the input, read as if typed.
        if (options.initial) io.stdin.unshift(Buffer.from(options.initial.replace(/[\x00-\x1f\x7f]/g, '')));
        return prompts.search(
          {
            message,
            source: (term) => toInquirer(prompts, source(term ?? '')),
            pageSize: options.pageSize,
            theme: theme(),
          },
          context,
        );
      }),
    input: (message, options = {}) =>
      runner.ask((prompts, context) =>
        prompts.input(
          { message, default: options.default, validate: options.validate, theme: theme() },
          context,
        ),
      ),
    password: (message, options = {}) =>
      runner.ask((prompts, context) =>
        prompts.password({ message, validate: options.validate, theme: theme() }, context),
      ),
  };
}

/** What a prompt of @inquirer/prompts is given besides its own options. */
interface PromptContext {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  signal: AbortSignal;
  clearPromptOnDone: boolean;
}

/** Runs one prompt at a time: Inquirer loaded on first use, Escape and Ctrl-C turned into our errors. */
class PromptRunner {
  private loaded: Promise<Inquirer> | undefined;

  constructor(
    private readonly io: IOStreams,
    private readonly signal: AbortSignal,
    private readonly options: PrompterOptions,
  ) {}

  async ask<T>(run: (prompts: Inquirer, context: PromptContext) => Promise<T>): Promise<T> {
    const { io, signal } = this;
    this.loaded ??= import('@inquirer/prompts');
    const prompts = await this.loaded;
    if (signal.aborted) throw asCancelled(signal.reason);
    const escaped = new AbortController();
    // Inquirer reads clearPromptOnDone when the prompt ends: a prompt left with Escape is erased
    // (the question it asked is no longer being asked), an answered one stays unless told otherwise.
    const context: PromptContext = {
      input: io.stdin,
      output: new PromptOutput(io),
      signal: AbortSignal.any([signal, escaped.signal]),
      clearPromptOnDone: Boolean(this.options.clearPromptOnDone),
    };
    // readline turns the input into keypress events for the prompt; a lone Escape is ours.
    const onKeypress = (_text: unknown, key: Keypress | undefined) => {
      if (key?.name !== 'escape') return;
      context.clearPromptOnDone = true;
      escaped.abort();
    };
    io.stdin.on('keypress', onKeypress);
    try {
      return await run(prompts, context);
    } catch (error) {
      if (signal.aborted) throw asCancelled(signal.reason);
      if (escaped.signal.aborted) throw new PromptEscape();
      // @inquirer throws ExitPromptError when the user presses Ctrl-C in a prompt.
      if (error instanceof Error && error.name === 'ExitPromptError') throw new CancelledError();
      throw error;
    } finally {
      io.stdin.off('keypress', onKeypress);
    }
  }
}

function toInquirer<T>(prompts: Inquirer, items: ChoiceItem<T>[]) {
  return items.map((item) => ('separator' in item ? new prompts.Separator(item.separator) : item));
}

/**
 * What a prompt writes to: stdout through the redactor, with its size. Inquirer pipes into it and
 * ends it after each prompt; ending it must not end stdout, which later prompts and results use.
 */
class PromptOutput extends Writable {
  constructor(private readonly io: IOStreams) {
    super({ decodeStrings: false });
  }

  get isTTY(): boolean {
    return true;
  }

  get columns(): number {
    return this.io.columns;
  }

  get rows(): number {
    return (this.io.stdout as { rows?: number }).rows ?? 24;
  }

  override _write(
    chunk: Buffer | string,
    _encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ): void {
    this.io.out(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    callback();
  }
}

function asCancelled(reason: unknown): Error {
  return reason instanceof Error ? reason : new CancelledError();
}
