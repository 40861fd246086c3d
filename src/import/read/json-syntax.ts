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
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new SyntaxFound(at, message);
  };
  const skipSpace = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || (i === 0 && c === 0xfeff)) i++;
      else break;
    }
  };
  const describe = (at: number): string =>
    at >= text.length ? 'the end of the text' : JSON.stringify(text[at]);

  const value = (depth: number): void => {
    if (depth > MAX_DEPTH) fail('nested too deeply');
    skipSpace();
    const c = text[i];
    if (c === '{') object(depth);
    else if (c === '[') array(depth);
    else if (c === '"') string();
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else if (!literal()) {
      if (c === "'") fail('strings must be in double quotes, not single quotes');
      if (c === undefined) fail('the text ends where a value was expected');
      fail(
        `expected a value (text in double quotes, a number, true, false, null, an object or a list), found ${describe(i)}`,
      );
    }
  };

  const literal = (): boolean => {
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return true;
      }
    }
    return false;
  };

  const object = (depth: number): void => {
    i++;
    skipSpace();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[i] === '}') fail('a comma before } (remove the trailing comma)');
      if (text[i] !== '"') {
        fail(
          i >= text.length
            ? 'the text ends inside an object'
            : `expected a property name in double quotes, found ${describe(i)}`,
        );
      }
      string();
      skipSpace();
      if (text[i] !== ':') fail(`expected : after the property name, found ${describe(i)}`);
      i++;
      value(depth + 1);
      skipSpace();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      fail(
        i >= text.length
          ? 'the text ends inside an object (a } is missing)'
          : `expected , or } after a property value, found ${describe(i)}`,
      );
    }
  };

  const array = (depth: number): void => {
    i++;
    skipSpace();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      skipSpace();
      if (text[i] === ']') fail('a comma before ] (remove the trailing comma)');
      value(depth + 1);
      skipSpace();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      fail(
        i >= text.length
          ? 'the text ends inside a list (a ] is missing)'
          : `expected , or ] after a list element, found ${describe(i)}`,
      );
    }
  };

  const string = (): void => {
    const start = i;
    i++;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c === 0x5c) {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)))
            fail('a \\u escape needs four hexadecimal digits');
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) {
          i += 2;
        } else {
          fail(`${JSON.stringify(`\\${next ?? ''}`)} is not a JSON escape`);
        }
        continue;
      }
      if (c < 0x20)
        fail(
          c === 0x0a
            ? 'a line break inside a string (write it as \\n)'
            : 'a control character inside a string',
        );
      i++;
    }
    fail('a string is never closed (a " is missing)', start);
  };

  const number = (): void => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) fail(`${describe(i)} does not start a number`);
    i += match![0].length;
    const next = text[i];
    if (next !== undefined && /[0-9.eE]/.test(next))
      fail('not a valid number (no leading zeros, digits after the point)');
  };

  try {
    value(0);
    skipSpace();
    if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON value`);
    return undefined;
  } catch (error) {
    if (error instanceof SyntaxFound) return { offset: error.offset, message: error.message };
    throw error;
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
