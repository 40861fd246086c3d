/**
 * `--jq <expression>`: what a command prints with `--json`, filtered by jq before it reaches stdout,
 * as `ordercli … --json | jq -r -c <expression>` would (gh's `--jq`). The filter is jq itself,
 * jq 1.8 compiled to WebAssembly (the jq-wasm package), so every builtin, error and number behaves
 * as in jq. This module and jq-wasm are loaded only when `--jq` is given.
 */
import { type Jq, loadJq } from 'jq-wasm';
import { UsageError } from '../core/errors.js';
import { escapeControl, escapeControlKeepingLines, shorten } from './quote.js';
import type { IOStreams } from './streams.js';

/** `--arg <name> <value>`: `$name` is the string `value` in the expression. */
export interface JqVariable {
  name: string;
  value: string;
}

/** What one run of the expression on one JSON text gave: its results as lines, and jq's error. */
export interface JqRun {
  /** One result a line: a string raw, any other value as compact JSON. */
  lines: string[];
  /** What the expression wrote on stderr itself (`debug`, `stderr`), line by line. */
  messages: string[];
  /** jq's error at run time, without its `jq: error (at …):` prefix. */
  error?: string;
  /** The text was not JSON (jq could not parse it). */
  notJson?: boolean;
}

/** A --jq expression compiled once and run on each JSON text a command writes. */
export class JqProgram {
  private constructor(
    private readonly jq: Jq,
    private readonly expression: string,
    private readonly flags: string[],
  ) {}

  /**
   * Loads jq and compiles the expression against no input, which runs none of it: an expression
   * that is not valid jq (or names a variable no --arg binds) is bad usage before the command does
   * anything.
   */
  static async compile(expression: string, variables: readonly JqVariable[]): Promise<JqProgram> {
    // -c: one result a line. `--` ends jq's options, so an expression such as `-1` is not one.
    const flags = ['-c', ...variables.flatMap(({ name, value }) => ['--arg', name, value]), '--'];
    const program = new JqProgram(await loadJq(), expression, flags);
    const { stderr, exitCode } = program.jq.raw('', expression, flags);
    if (exitCode !== 0) throw compileError(stderr);
    return program;
  }

  /** Runs the expression on one JSON text; `tty` escapes control characters of raw strings. */
  run(jsonText: string, tty: boolean): JqRun {
    const { stdout, stderr, exitCode } = this.jq.raw(jsonText, this.expression, this.flags);
    const lines = stdout === '' ? [] : stdout.split('\n').map((line) => rawLine(line, tty));
    const messages = stderr === '' ? [] : stderr.split('\n');
    if (exitCode === 0) return { lines, messages };
    if (messages.some((line) => line.startsWith('jq: parse error')))
      return { lines, messages: [], notJson: true };
    const at = messages.findIndex((line) => line.startsWith('jq: error'));
    // No `jq: error` line: `halt_error`, whose message is the whole of stderr.
    if (at === -1) return { lines, messages: [], error: stderr || `jq exited with status ${exitCode}` };
    return { lines, messages: messages.slice(0, at), error: runtimeMessage(messages[at]!) };
  }
}

/** A compact JSON line of jq as `jq -r` prints it: a string without its quotes, anything else as it is. */
function rawLine(line: string, tty: boolean): string {
  if (!line.startsWith('"')) return line;
  const text = JSON.parse(line) as string;
  // As everywhere on a terminal, no control character of the service's data drives it raw.
  return tty ? escapeControlKeepingLines(text) : text;
}

/** The usage error of an expression jq does not compile: its first error as the sentence, the place below. */
function compileError(stderr: string): UsageError {
  const lines = stderr.split('\n').filter((line) => !/^jq: \d+ compile errors?$/.test(line));
  const first = (lines.shift() ?? 'jq could not compile it')
    .replace(/^jq: error: /, '')
    .replace(/ at <top-level>,/, ' at')
    .replace(/:$/, '');
  // jq shows the expression with a caret under the fault, indented by 4: main indents details by 2.
  const details = lines.map((line) => line.replace(/^ {4}/, '').replace(/^jq: error: /, ''));
  const error = new UsageError(`The --jq expression is not valid jq: ${first}.`, details);
  if (/syntax error/.test(first))
    error.hint = "write the whole expression in single quotes for the shell: --jq '.[] | .code'";
  return error;
}

/** jq's message at run time without its `jq: error (at <stdin>:0):` prefix. */
function runtimeMessage(line: string): string {
  const match = /^jq: error \(at [^)]*\)(?: \(not a string\))?: ?(.*)$/.exec(line);
  return match ? (match[1] ?? '') : line;
}

/**
 * Cuts text written in any pieces into the top-level JSON texts it holds (as jq reads a stream of
 * them): an object or array when its brackets close, a string at its closing quote, a number or
 * literal at the white space after it. It checks nothing else: jq says what is not JSON.
 */
export class JsonTexts {
  private pending = '';
  private inValue = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;

  /** Adds text and returns the JSON texts it completed. */
  push(text: string): string[] {
    const done: string[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const end = this.step(text.charCodeAt(i), i);
      if (end === undefined) continue;
      if (end === -1) {
        start = i;
        continue;
      }
      done.push(this.pending + text.slice(start, end));
      this.pending = '';
      start = end;
    }
    if (this.inValue) this.pending += text.slice(start);
    return done;
  }

  /** The text of a value left without its end, if any (a number without white space after it). */
  end(): string | undefined {
    const rest = this.inValue ? this.pending : undefined;
    this.pending = '';
    this.inValue = this.inString = this.escaped = this.scalar = false;
    this.depth = 0;
    return rest;
  }

  /** Reads one character at `i`: -1 when a value starts there, the end of one it ends, else undefined. */
  private step(c: number, i: number): number | undefined {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) {
        this.inString = false;
        if (this.depth === 0) return this.close(i + 1);
      }
      return undefined;
    }
    if (this.scalar) {
      if (!isSpace(c)) return undefined;
      return this.close(i);
    }
    if (!this.inValue) {
      if (isSpace(c)) return undefined;
      this.inValue = true;
      if (c === QUOTE) this.inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth = 1;
      else this.scalar = true;
      return -1;
    }
    if (c === QUOTE) this.inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --this.depth === 0) return this.close(i + 1);
    return undefined;
  }

  private close(end: number): number {
    this.inValue = this.scalar = false;
    this.depth = 0;
    return end;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * The IO of a command run with --jq: stdout goes through the expression, one JSON text at a time,
 * as soon as each is complete (`listen --json` prints each event as it comes); the rest is the
 * command's own IO. A JSON array is gathered whole before jq reads it: its text and jq's copy are
 * in memory together (the streaming writer of `--json` alone avoids that).
 */
export class JqFilteredIO implements IOStreams {
  private readonly texts = new JsonTexts();
  private unredacted = false;
  private stopped = false;
  /** Whether jq failed on some output, or the output was not JSON: the command then exits 1. */
  failed = false;

  constructor(
    private readonly inner: IOStreams,
    private readonly program: JqProgram,
  ) {}

  get stdin() {
    return this.inner.stdin;
  }
  get stdout() {
    return this.inner.stdout;
  }
  get stderr() {
    return this.inner.stderr;
  }
  get stdinIsTTY() {
    return this.inner.stdinIsTTY;
  }
  get stdoutIsTTY() {
    return this.inner.stdoutIsTTY;
  }
  get stderrIsTTY() {
    return this.inner.stderrIsTTY;
  }
  get columns() {
    return this.inner.columns;
  }
  get redactor() {
    return this.inner.redactor;
  }
  get colorEnabled() {
    return this.inner.colorEnabled;
  }
  set colorEnabled(value: boolean) {
    this.inner.colorEnabled = value;
  }
  get neverPrompt() {
    return this.inner.neverPrompt;
  }
  set neverPrompt(value: boolean) {
    this.inner.neverPrompt = value;
  }

  out(text: string): void {
    for (const json of this.texts.push(text)) this.filter(json);
  }

  /** `--show-secrets`: the value goes to jq as the service sent it, and its results unmasked. */
  outUnredacted(text: string): void {
    this.unredacted = true;
    this.out(text);
  }

  err(text: string): void {
    this.inner.err(text);
  }

  errUnredacted(text: string): void {
    this.inner.errUnredacted(text);
  }

  canPrompt(): boolean {
    return this.inner.canPrompt();
  }

  /** Filters what is left once the command has written everything (a value without a newline after it). */
  end(): void {
    const rest = this.texts.end();
    if (rest !== undefined) this.filter(rest);
  }

  private filter(json: string): void {
    if (this.stopped) return;
    const unredacted = this.unredacted;
    this.unredacted = false;
    // The secrets of the run are masked before jq sees them: no transformation of jq's can unmask one.
    const input = unredacted ? json : this.inner.redactor.redact(json);
    const run = this.program.run(input, this.inner.stdoutIsTTY);
    const text = run.lines.map((line) => `${line}\n`).join('');
    if (text) unredacted ? this.inner.outUnredacted(text) : this.inner.out(text);
    for (const line of run.messages) this.inner.err(`${escapeControl(line)}\n`);
    if (run.notJson) {
      // What follows is not JSON either: nothing more is printed.
      this.stopped = true;
      this.fail(
        `this command printed text that is not JSON (${JSON.stringify(shorten(json.trim(), 40))}), so jq has nothing to read: --jq filters what --json prints`,
      );
    } else if (run.error !== undefined) {
      this.fail(`jq failed on the command's output: ${shorten(run.error, 300)} (the command itself ran)`);
    }
  }

  private fail(message: string): void {
    this.failed = true;
    this.inner.err(`error: --jq: ${escapeControl(message)}.\n`);
  }
}
