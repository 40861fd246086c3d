/**
 * A JSON array split into the texts of its top-level elements as the text streams in (strings,
 * escapes and nesting tracked), each with where it stands: a 1 GB file never sits in memory, and
 * each element is parsed on its own, so that a broken record is a problem of that record with its
 * line. Only the structure between elements is checked here (a broken one ends the read: nothing
 * after it can be trusted); each element's own syntax is left to `JSON.parse`.
 *
 * Hand-written rather than stream-json: stream-json stops the whole input at the first element
 * that is not JSON, and gives neither an element's text nor its line, which the problems and
 * `--rejects` need, and it was slower on a million orders (docs/ENGINEERING.md, "Hand-written where
 * a library was measured", has the figures).
 */
import { InputError } from '../../core/errors.js';

/** The text of one top-level element of a JSON array and where it stands in the file. */
export interface JsonElement {
  /** Its text; empty when it is `tooLarge`. */
  text: string;
  /** The element is longer than the largest record: its text was not kept. */
  tooLarge?: boolean;
  line: number;
  column: number;
  endLine: number;
}

/** What the elements are, in the messages of an array that is not one: `order`, `orders`, and who sends one alone. */
export interface ArrayWords {
  one: string;
  /** One with its article: `an order`. */
  oneWithArticle: string;
  many: string;
  /** The command that sends a single record (`ordercli orders create`). */
  sendOne?: string;
}

const ORDER_WORDS: ArrayWords = {
  one: 'order',
  oneWithArticle: 'an order',
  many: 'orders',
  sendOne: 'ordercli orders create',
};

/** The elements of the JSON array whose text comes in `chunks`, with their lines. */
export async function* splitJsonArray(
  chunks: AsyncIterable<string>,
  file: string,
  maxElementChars = Number.POSITIVE_INFINITY,
  words: ArrayWords = ORDER_WORDS,
): AsyncGenerator<JsonElement> {
  const splitter = new ArraySplitter(file, maxElementChars, words);
  for await (const chunk of chunks) yield* splitter.read(chunk);
  yield* splitter.end();
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

/** What a character does to the element it is read in. */
const Scan = {
  /** It is part of the element, which goes on. */
  Inside: 0,
  /** It ends the element (a closing quote or bracket). */
  EndsWith: 1,
  /** It ends a number or literal without being part of it: it belongs to the array. */
  EndsBefore: 2,
} as const;
type Scan = (typeof Scan)[keyof typeof Scan];

class ArraySplitter {
  private phase: Phase = Phase.Start;
  private line = 1;
  private column = 0;
  private first = true;
  private lastEndLine = 0;
  // The element being read: its start, its nesting, and its text from earlier chunks.
  private startLine = 0;
  private startColumn = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  private pieces: string[] = [];
  /** Characters of the element read in earlier chunks; past the limit its pieces are dropped. */
  private pending = 0;

  constructor(
    private readonly file: string,
    private readonly maxElementChars: number,
    private readonly words: ArrayWords,
  ) {}

  /** The elements that end in `chunk`; the start of one that goes on is kept for the next chunk. */
  *read(chunk: string): Generator<JsonElement> {
    let elementStart = this.phase === Phase.Element ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (code === 0x0a) {
        this.line++;
        this.column = 0;
      } else {
        this.column++;
      }
      if (this.phase === Phase.Element) {
        const scan = this.scanElement(code);
        if (scan === Scan.Inside) continue;
        yield this.finishElement(chunk.slice(elementStart, scan === Scan.EndsWith ? i + 1 : i), scan);
        elementStart = -1;
        if (scan === Scan.EndsWith) continue;
      }
      if (this.readBetween(code, chunk[i]!)) elementStart = i;
    }
    if (this.phase !== Phase.Element) return;
    this.pending += chunk.length - elementStart;
    if (this.pending <= this.maxElementChars) this.pieces.push(chunk.slice(elementStart));
    else this.pieces = [];
  }

  /** The last element (a number ends only with the text) and the checks of a complete array. */
  *end(): Generator<JsonElement> {
    if (this.phase === Phase.Element && this.scalar) yield this.finishElement('', Scan.EndsBefore);
    if (this.phase === Phase.Start)
      this.fail(`the file is empty: it must hold a JSON array of ${this.words.many}`);
    if (this.phase === Phase.Element) {
      this.fail(
        `the file ends inside the ${this.words.one} that starts on line ${this.startLine} (a } or ] is missing)`,
      );
    }
    if (this.phase !== Phase.End) this.fail('the file ends before the array is closed (a ] is missing)');
  }

  /** A character inside an element: strings and nesting followed until the element ends. */
  private scanElement(code: number): Scan {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (code === 0x5c) this.escaped = true;
      else if (code === 0x22) {
        this.inString = false;
        if (this.depth === 0) return Scan.EndsWith;
      }
      return Scan.Inside;
    }
    if (this.scalar) {
      // A number, true, false or null ends at white space, a comma or the closing bracket.
      return code === 0x2c || code === 0x5d || isSpace(code) ? Scan.EndsBefore : Scan.Inside;
    }
    if (code === 0x22) this.inString = true;
    else if (code === 0x7b || code === 0x5b) this.depth++;
    else if (code === 0x7d || code === 0x5d) {
      this.depth--;
      if (this.depth === 0) return Scan.EndsWith;
    }
    return Scan.Inside;
  }

  /** A character between elements: the array's own structure. True when an element starts here. */
  private readBetween(code: number, char: string): boolean {
    if (isSpace(code) || (this.first && code === 0xfeff)) {
      this.first = false;
      return false;
    }
    this.first = false;
    switch (this.phase) {
      case Phase.Start:
        if (code !== 0x5b) this.failToOpen(code, char);
        this.phase = Phase.Open;
        return false;
      case Phase.Open:
      case Phase.Comma:
        if (code === 0x5d) {
          if (this.phase === Phase.Comma) this.fail('a comma before ] (remove the trailing comma)');
          this.phase = Phase.End;
          return false;
        }
        if (code === 0x2c) this.fail(`a comma where ${this.words.oneWithArticle} was expected`);
        this.startElement(code);
        return true;
      case Phase.AfterElement:
        if (code === 0x2c) this.phase = Phase.Comma;
        else if (code === 0x5d) this.phase = Phase.End;
        else {
          this.fail(
            `expected , or ] after the ${this.words.one} that ends on line ${this.lastEndLine}, found ${JSON.stringify(char)}`,
          );
        }
        return false;
      default:
        return this.fail(`unexpected ${JSON.stringify(char)} after the closing ] of the array`);
    }
  }

  private failToOpen(code: number, char: string): never {
    const { one, many, sendOne } = this.words;
    const alone = sendOne === undefined ? '' : ` (or use ${sendOne} for one ${one})`;
    return this.fail(
      code === 0x7b
        ? `the file holds one JSON object, not an array of ${many}: wrap it in [ ]${alone}`
        : `expected [ to open the array of ${many}, found ${JSON.stringify(char)}`,
    );
  }

  private startElement(code: number): void {
    this.phase = Phase.Element;
    this.startLine = this.line;
    this.startColumn = this.column;
    this.pieces = [];
    this.pending = 0;
    this.depth = code === 0x7b || code === 0x5b ? 1 : 0;
    this.inString = code === 0x22;
    this.escaped = false;
    this.scalar = !this.inString && this.depth === 0;
  }

  private finishElement(tail: string, scan: Scan): JsonElement {
    // Characters count no more than bytes in UTF-8: an element over the limit in characters is over it in bytes.
    const tooLarge = this.pending + tail.length > this.maxElementChars;
    this.pieces.push(tail);
    const text = tooLarge ? '' : this.pieces.join('');
    this.pieces = [];
    this.pending = 0;
    this.phase = Phase.AfterElement;
    // A number ended by a line break ends on the line before it.
    this.lastEndLine = scan === Scan.EndsBefore && this.column === 0 ? this.line - 1 : this.line;
    const element: JsonElement = {
      text,
      line: this.startLine,
      column: this.startColumn,
      endLine: this.lastEndLine,
    };
    if (tooLarge) element.tooLarge = true;
    return element;
  }

  private fail(message: string): never {
    throw new InputError(
      `${this.file} is not a JSON array of ${this.words.many} from line ${this.line} on; nothing was sent.`,
      [{ file: this.file, line: this.line, message: `column ${this.column}: ${message}` }],
    );
  }
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}
