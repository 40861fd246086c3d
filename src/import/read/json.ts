/**
 * Step 2 for JSON inputs. A JSON array is split into its top-level elements as the bytes stream
 * in (strings, escapes and nesting tracked), and each element is parsed on its own: a 1 GB file
 * never sits in memory, and a broken order is a problem of that order, with its line. NDJSON is
 * read line by line; blank lines are skipped.
 */
import { StringDecoder } from 'node:string_decoder';
import { InputError } from '../core/errors.js';
import { quoteAny } from '../io/quote.js';
import { parseJson } from './json-syntax.js';
import { DEFAULT_LIMITS, type InputLimits, orderTextTooLarge } from './limits.js';
import { readBytes } from './read.js';
import { namesProduct } from './resolve-products.js';
import type { SourceOrder } from './types.js';

/** The text of one top-level element of a JSON array and where it stands in the file. */
export interface JsonElement {
  /** Its text; empty when it is `tooLarge`. */
  text: string;
  /** The element is longer than the largest order: its text was not kept. */
  tooLarge?: boolean;
  line: number;
  column: number;
  endLine: number;
}

/** Orders of a file holding a JSON array. */
export async function* jsonArrayOrders(
  path: string,
  file: string,
  limits: InputLimits = DEFAULT_LIMITS,
): AsyncGenerator<SourceOrder> {
  let index = 0;
  for await (const element of splitJsonArray(textChunks(path, file), file, limits.maxOrderBytes)) {
    if (element.tooLarge) {
      const location = { file, line: element.line, endLine: element.endLine };
      yield unreadable(index++, '', location, {
        file,
        line: element.line,
        message: orderTextTooLarge(limits, 'this order'),
      });
      continue;
    }
    yield orderFromText(element.text, index++, file, element);
  }
}

/**
 * Orders of an NDJSON file: one JSON object per line. A line longer than the largest order is
 * not kept (only counted to its end): a 50 MB line costs no more memory than a short one.
 */
export async function* ndjsonOrders(
  path: string,
  file: string,
  limits: InputLimits = DEFAULT_LIMITS,
): AsyncGenerator<SourceOrder> {
  const decoder = new StringDecoder('utf8');
  const bytes = readBytes(path, file, 'json');
  let line = 0;
  let index = 0;
  // The start of the current line, read from earlier chunks (dropped past the limit), and its length.
  let carry = '';
  let carried = 0;
  /** The order of the line that ends at `end` of `text` (undefined for a blank line). */
  const lineOrder = (text: string, start: number, end: number): SourceOrder | undefined => {
    line++;
    const tooLarge = carried + (end - start) > limits.maxOrderBytes;
    let lineText = tooLarge ? '' : carry === '' ? text.slice(start, end) : carry + text.slice(start, end);
    carry = '';
    carried = 0;
    const where = { file, line, column: 1, endLine: line };
    if (tooLarge) {
      return unreadable(index++, '', where, { file, line, message: orderTextTooLarge(limits, 'this line') });
    }
    if (line === 1 && lineText.charCodeAt(0) === 0xfeff) lineText = lineText.slice(1);
    if (lineText.charCodeAt(lineText.length - 1) === 0x0d) lineText = lineText.slice(0, -1);
    if (lineText.trim() === '') return undefined;
    return orderFromText(lineText, index++, file, where);
  };
  const keepRest = (text: string, start: number): void => {
    if (start >= text.length) return;
    carried += text.length - start;
    carry = carried <= limits.maxOrderBytes ? carry + text.slice(start) : '';
  };
  try {
    for await (const chunk of bytes) {
      const text = decoder.write(chunk as Buffer);
      let start = 0;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        const order = lineOrder(text, start, end);
        if (order) yield order;
        start = end + 1;
      }
      keepRest(text, start);
    }
    keepRest(decoder.end(), 0);
    if (carried > 0) {
      const order = lineOrder('', 0, 0);
      if (order) yield order;
    }
  } finally {
    bytes.destroy();
  }
}

/** One order from its JSON text; text that is not JSON, or not an object, is a problem of the order. */
export function orderFromText(
  text: string,
  index: number,
  file: string,
  where: { line: number; column: number; endLine: number },
): SourceOrder {
  const location = { file, line: where.line, endLine: where.endLine };
  const parsed = parseJson(text, where);
  if (!parsed.ok) {
    const { line, column, message } = parsed.error;
    return unreadable(index, text, location, {
      file,
      line,
      message: `not valid JSON at column ${column}: ${message}`,
    });
  }
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return unreadable(index, text, location, {
      file,
      line: where.line,
      message: `must be an order (a JSON object), not ${Array.isArray(value) ? 'a list' : value === null ? 'null' : `${typeof value} ${quoteAny(value)}`}`,
    });
  }
  const order = value as Record<string, unknown>;
  return {
    index,
    externalId:
      typeof order.externalId === 'string' && order.externalId !== '' ? order.externalId : undefined,
    order,
    location,
    raw: order,
    problems: [],
    needsProductResolution: Array.isArray(order.items) && order.items.some(namesProduct),
  };
}

/**
 * An order that could not be read as an object: `raw` is its text, to be written back as it was,
 * and its problem has no field, so it is not validated further.
 */
function unreadable(
  index: number,
  raw: string,
  location: SourceOrder['location'],
  problem: SourceOrder['problems'][number],
): SourceOrder {
  return {
    index,
    externalId: undefined,
    order: {},
    location,
    raw,
    problems: [problem],
    needsProductResolution: false,
  };
}

async function* textChunks(path: string, file: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  const bytes = readBytes(path, file, 'json');
  try {
    for await (const chunk of bytes) yield decoder.write(chunk as Buffer);
    const rest = decoder.end();
    if (rest !== '') yield rest;
  } finally {
    bytes.destroy();
  }
}

/** Where the splitter stands in the array. */
const Phase = {
  /** Before the opening `[`. */
  Start: 0,
  /** After `[`: an element or `]`. */
  Open: 1,
  /** After `,`: an element. */
  Comma: 2,
  /** Inside an element. */
  Element: 3,
  /** After an element: `,` or `]`. */
  AfterElement: 4,
  /** After the closing `]`: white space only. */
  End: 5,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

/**
 * Splits the text of a JSON array into the texts of its top-level elements, with their lines.
 * Only the structure between elements is checked here (and a broken one ends the read: nothing
 * after it can be trusted); each element's own syntax is left to `JSON.parse`.
 */
export async function* splitJsonArray(
  chunks: AsyncIterable<string>,
  file: string,
  maxElementChars = Number.POSITIVE_INFINITY,
): AsyncGenerator<JsonElement> {
  let phase = Phase.Start as Phase;
  let line = 1;
  let column = 0;
  // State of the element being read.
  let pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let scalar = false;
  let startLine = 0;
  let startColumn = 0;
  let lastEndLine = 0;
  let first = true;
  // Characters of the element read in earlier chunks; past the limit its pieces are dropped.
  let pending = 0;

  const fail = (message: string): never => {
    throw new InputError(`${file} is not a JSON array of orders from line ${line} on; nothing was sent.`, [
      { file, line, message: `column ${column}: ${message}` },
    ]);
  };

  for await (const chunk of chunks) {
    let elementStart = phase === Phase.Element ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code === 0x0a) {
        line++;
        column = 0;
      } else {
        column++;
      }
      if (phase === Phase.Element) {
        if (inString) {
          if (escaped) escaped = false;
          else if (code === 0x5c) escaped = true;
          else if (code === 0x22) {
            inString = false;
            if (depth === 0) {
              yield finishElement(chunk.slice(elementStart, i + 1));
              elementStart = -1;
            }
          }
          continue;
        }
        if (scalar) {
          // A number, true, false or null ends at white space, a comma or the closing bracket.
          if (code === 0x2c || code === 0x5d || isSpace(code)) {
            yield finishElement(chunk.slice(elementStart, i), true);
            elementStart = -1;
            // The character that ended it belongs to the array: read it again below.
          } else {
            continue;
          }
        } else {
          if (code === 0x22) inString = true;
          else if (code === 0x7b || code === 0x5b) depth++;
          else if (code === 0x7d || code === 0x5d) {
            depth--;
            if (depth === 0) {
              yield finishElement(chunk.slice(elementStart, i + 1));
              elementStart = -1;
            }
          }
          continue;
        }
      }
      if (isSpace(code) || (first && code === 0xfeff)) {
        first = false;
        continue;
      }
      first = false;
      switch (phase) {
        case Phase.Start:
          if (code !== 0x5b) {
            fail(
              code === 0x7b
                ? 'the file holds one JSON object, not an array of orders: wrap it in [ ] (or use ordercli orders create for one order)'
                : `expected [ to open the array of orders, found ${JSON.stringify(chunk[i])}`,
            );
          }
          phase = Phase.Open;
          break;
        case Phase.Open:
        case Phase.Comma:
          if (code === 0x5d) {
            if (phase === Phase.Comma) fail('a comma before ] (remove the trailing comma)');
            phase = Phase.End;
          } else if (code === 0x2c) {
            fail('a comma where an order was expected');
          } else {
            phase = Phase.Element;
            elementStart = i;
            startLine = line;
            startColumn = column;
            pieces = [];
            pending = 0;
            depth = code === 0x7b || code === 0x5b ? 1 : 0;
            inString = code === 0x22;
            escaped = false;
            scalar = !inString && depth === 0;
          }
          break;
        case Phase.AfterElement:
          if (code === 0x2c) phase = Phase.Comma;
          else if (code === 0x5d) phase = Phase.End;
          else
            fail(
              `expected , or ] after the order that ends on line ${lastEndLine}, found ${JSON.stringify(chunk[i])}`,
            );
          break;
        case Phase.End:
          fail(`unexpected ${JSON.stringify(chunk[i])} after the closing ] of the array`);
      }
    }
    if (phase === Phase.Element) {
      pending += chunk.length - elementStart;
      if (pending <= maxElementChars) pieces.push(chunk.slice(elementStart));
      else pieces = [];
    }
  }
  if (phase === Phase.Element && scalar) {
    yield finishElement('', true);
    phase = Phase.AfterElement;
  }
  if (phase === Phase.Start) fail('the file is empty: it must hold a JSON array of orders');
  if (phase !== Phase.End) {
    fail(
      phase === Phase.Element
        ? `the file ends inside the order that starts on line ${startLine} (a } or ] is missing)`
        : 'the file ends before the array is closed (a ] is missing)',
    );
  }

  function finishElement(tail: string, endedBefore = false): JsonElement {
    // Characters count no more than bytes in UTF-8: an element over the limit in characters is over it in bytes.
    const tooLarge = pending + tail.length > maxElementChars;
    pieces.push(tail);
    const text = tooLarge ? '' : pieces.join('');
    pieces = [];
    pending = 0;
    phase = Phase.AfterElement;
    lastEndLine = endedBefore && column === 0 ? line - 1 : line;
    const element: JsonElement = { text, line: startLine, column: startColumn, endLine: lastEndLine };
    if (tooLarge) element.tooLarge = true;
    return element;
  }
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}
