/**
 * JSON parsing with precise error positions. `JSON.parse` does the work; when it fails, a small
 * validator finds where and why, because V8's messages sometimes carry no position at all
 * (`Unexpected token 'x', "..." is not valid JSON`) and their wording changes between versions.
 */

/** Where a JSON text stops being JSON (1-based line and column) and why. */
export interface JsonSyntaxError {
  line: number;
  column: number;
  message: string;
}

export type JsonParseResult = { ok: true; value: unknown } | { ok: false; error: JsonSyntaxError };

/**
 * Parses JSON text. `start` is where the text begins in its file, so that positions are those of
 * the file (an element of a streamed array, say).
 */
export function parseJson(
  text: string,
  start: { line: number; column: number } = { line: 1, column: 1 },
): JsonParseResult {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const found = locateSyntaxError(text) ?? { offset: text.length, message: (error as Error).message };
    return { ok: false, error: { ...positionOf(text, found.offset, start), message: found.message } };
  }
}

/** Line and column of `offset` in `text`, counted from `start`. */
export function positionOf(
  text: string,
  offset: number,
  start: { line: number; column: number } = { line: 1, column: 1 },
): { line: number; column: number } {
  let line = start.line;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const column = line === start.line ? start.column + offset : offset - lineStart + 1;
  return { line, column };
}

interface Located {
  offset: number;
  message: string;
}

const MAX_DEPTH = 10_000;

/** Finds the first syntax error of a JSON text, or undefined when it has none. */
export function locateSyntaxError(text: string): Located | undefined {
  const validator = new JsonValidator(text);
  try {
    validator.value(0);
    validator.skipSpace();
    if (validator.i < text.length)
      validator.fail(`unexpected ${validator.describe(validator.i)} after the end of the JSON value`);
    return undefined;
  } catch (error) {
    if (error instanceof SyntaxFound) return { offset: error.offset, message: error.message };
    throw error;
  }
}

/**
 * A recursive-descent reader of JSON that stops at its first error (`SyntaxFound`), saying where
 * and why in words; it builds no value (`JSON.parse` did not succeed, so there is none).
 */
class JsonValidator {
  /** Where the reader stands in the text. */
  i = 0;

  constructor(private readonly text: string) {}

  fail(message: string, at = this.i): never {
    throw new SyntaxFound(at, message);
  }

  skipSpace(): void {
    const { text } = this;
    while (this.i < text.length) {
      const c = text.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || (this.i === 0 && c === 0xfeff)) this.i++;
      else break;
    }
  }

  describe(at: number): string {
    return at >= this.text.length ? 'the end of the text' : JSON.stringify(this.text[at]);
  }

  value(depth: number): void {
    if (depth > MAX_DEPTH) this.fail('nested too deeply');
    this.skipSpace();
    const c = this.text[this.i];
    if (c === '{') this.object(depth);
    else if (c === '[') this.array(depth);
    else if (c === '"') this.string();
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) this.number();
    else if (!this.literal()) {
      if (c === "'") this.fail('strings must be in double quotes, not single quotes');
      if (c === undefined) this.fail('the text ends where a value was expected');
      this.fail(
        `expected a value (text in double quotes, a number, true, false, null, an object or a list), found ${this.describe(this.i)}`,
      );
    }
  }

  private literal(): boolean {
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return true;
      }
    }
    return false;
  }

  private object(depth: number): void {
    const { text } = this;
    this.i++;
    this.skipSpace();
    if (text[this.i] === '}') {
      this.i++;
      return;
    }
    for (;;) {
      this.skipSpace();
      if (text[this.i] === '}') this.fail('a comma before } (remove the trailing comma)');
      if (text[this.i] !== '"') {
        this.fail(
          this.i >= text.length
            ? 'the text ends inside an object'
            : `expected a property name in double quotes, found ${this.describe(this.i)}`,
        );
      }
      this.string();
      this.skipSpace();
      if (text[this.i] !== ':')
        this.fail(`expected : after the property name, found ${this.describe(this.i)}`);
      this.i++;
      this.value(depth + 1);
      if (this.closes('}', 'an object (a } is missing)', 'a property value')) return;
    }
  }

  private array(depth: number): void {
    const { text } = this;
    this.i++;
    this.skipSpace();
    if (text[this.i] === ']') {
      this.i++;
      return;
    }
    for (;;) {
      this.skipSpace();
      if (text[this.i] === ']') this.fail('a comma before ] (remove the trailing comma)');
      this.value(depth + 1);
      if (this.closes(']', 'a list (a ] is missing)', 'a list element')) return;
    }
  }

  /** After a member: true at the closing `close`, false after a comma (another member follows). */
  private closes(close: '}' | ']', inside: string, after: string): boolean {
    this.skipSpace();
    const c = this.text[this.i];
    if (c === ',' || c === close) {
      this.i++;
      return c === close;
    }
    return this.fail(
      this.i >= this.text.length
        ? `the text ends inside ${inside}`
        : `expected , or ${close} after ${after}, found ${this.describe(this.i)}`,
    );
  }

  private string(): void {
    const { text } = this;
    const start = this.i;
    this.i++;
    while (this.i < text.length) {
      const c = text.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c === 0x5c) {
        this.escape();
        continue;
      }
      if (c < 0x20)
        this.fail(
          c === 0x0a
            ? 'a line break inside a string (write it as \\n)'
            : 'a control character inside a string',
        );
      this.i++;
    }
    this.fail('a string is never closed (a " is missing)', start);
  }

  /** A backslash and what follows it in a string. */
  private escape(): void {
    const next = this.text[this.i + 1];
    if (next === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6)))
        this.fail('a \\u escape needs four hexadecimal digits');
      this.i += 6;
    } else if (next !== undefined && '"\\/bfnrt'.includes(next)) {
      this.i += 2;
    } else {
      this.fail(`${JSON.stringify(`\\${next ?? ''}`)} is not a JSON escape`);
    }
  }

  private number(): void {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!match) this.fail(`${this.describe(this.i)} does not start a number`);
    this.i += match![0].length;
    const next = this.text[this.i];
    if (next !== undefined && /[0-9.eE]/.test(next))
      this.fail('not a valid number (no leading zeros, digits after the point)');
  }
}

/** Unwinds the validator from the first error to its caller. */
class SyntaxFound extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}
