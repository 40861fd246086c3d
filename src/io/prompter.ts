/**
 * Interactive prompts (@inquirer/prompts, loaded on first use) on the command's own streams, so
 * that tests drive them through real prompt streams. Ctrl-C becomes a CancelledError (exit 130),
 * Escape a PromptEscape that the command turns into "back" or "quit". The prompter follows the
 * rows it writes, so that a command going back to a question can erase what was answered since.
 */
import { Writable } from 'node:stream';
import stringWidth from 'string-width';
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

/** True, or why the answer is refused (shown under the prompt, which asks again). May look things up. */
export type Validate = (value: string) => true | string | Promise<true | string>;

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

/** A place on the screen between two prompts, to erase back to (`ScreenPrompter.eraseTo`). */
export interface ScreenMark {
  readonly row: number;
  readonly col: number;
}

/**
 * A prompter that can take the screen back to an earlier question: each question shown once,
 * however often the user goes back. It knows only what it wrote itself (prompts and `say`).
 */
export interface ScreenPrompter extends Prompter {
  /** Where the next prompt, or the next `say`, begins. */
  mark(): ScreenMark;
  /** Erases everything written below `mark` (answers, notices), leaving the cursor there. */
  eraseTo(mark: ScreenMark): void;
  /** Writes text between prompts on stdout (a notice, a preview), which `eraseTo` can erase. */
  say(text: string): void;
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
export function createPrompter(
  io: IOStreams,
  signal: AbortSignal,
  options: PrompterOptions = {},
): ScreenPrompter {
  const screen = new ScreenRows(io);
  const runner = new PromptRunner(io, signal, options, screen);
  const theme = () => (io.colorEnabled ? undefined : PLAIN_THEME);
  return {
    mark: () => screen.mark(),
    eraseTo: (mark) => screen.eraseTo(mark),
    say: (text) => screen.write(text),
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
    private readonly screen: ScreenRows,
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
      output: new PromptOutput(io, this.screen),
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
 * What a prompt writes to: stdout through the redactor (and the rows followed), with its size.
 * Inquirer pipes into it and ends it after each prompt; ending it must not end stdout, which later
 * prompts and results use.
 */
class PromptOutput extends Writable {
  constructor(
    private readonly io: IOStreams,
    private readonly screen: ScreenRows,
  ) {
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
    this.screen.write(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    callback();
  }
}

/** A control sequence: CSI (cursor moves, erasing, colours) or OSC (a link, a title). */
const CONTROL_SEQUENCE = /^\x1b(?:\[([?0-9;]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\))/;

/**
 * The cursor's row and column on stdout, relative to where the prompter began, from what it
 * writes: text (wrapped at the terminal's width, as a terminal does), new lines and the cursor
 * moves prompts make. Erasing back to a mark is then moving up that many rows and clearing below.
 */
class ScreenRows {
  private row = 0;
  private col = 0;

  constructor(private readonly io: IOStreams) {}

  mark(): ScreenMark {
    return { row: this.row, col: this.col };
  }

  write(text: string): void {
    this.io.out(text);
    this.follow(this.io.redactor.redact(text));
  }

  eraseTo(mark: ScreenMark): void {
    const up = this.row - mark.row;
    if (up < 0) return;
    // Up to the mark's row and column, then everything from there to the end of the screen.
    this.io.out(`${up > 0 ? `\x1b[${up}A` : ''}\x1b[${mark.col + 1}G\x1b[J`);
    this.row = mark.row;
    this.col = mark.col;
  }

  private follow(text: string): void {
    const columns = Math.max(1, this.io.columns);
    for (let at = 0; at < text.length; ) {
      if (text[at] === '\x1b') {
        const match = CONTROL_SEQUENCE.exec(text.slice(at));
        at += match === null ? 1 : match[0].length;
        if (match?.[2] !== undefined) this.move(match[2], match[1] ?? '');
        continue;
      }
      const char = String.fromCodePoint(text.codePointAt(at)!);
      at += char.length;
      if (char === '\n') {
        this.row++;
        this.col = 0;
      } else if (char === '\r') this.col = 0;
      else {
        const width = stringWidth(char);
        if (width === 0) continue;
        // A terminal wraps when a character comes after the last column, not when it fills it.
        if (this.col + width > columns) {
          this.row++;
          this.col = 0;
        }
        this.col += width;
      }
    }
  }

  private move(command: string, parameters: string): void {
    const n = Number.parseInt(parameters, 10);
    const count = Number.isNaN(n) || n < 1 ? 1 : n;
    if (command === 'A') this.row = Math.max(0, this.row - count);
    else if (command === 'B') this.row += count;
    else if (command === 'C') this.col += count;
    else if (command === 'D') this.col = Math.max(0, this.col - count);
    else if (command === 'G') this.col = count - 1;
  }
}

function asCancelled(reason: unknown): Error {
  return reason instanceof Error ? reason : new CancelledError();
}
