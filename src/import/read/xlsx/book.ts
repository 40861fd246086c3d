/**
 * The parts of a workbook that its sheets' cells refer to: the shared strings (a text cell holds
 * an index into them), the number format of each cell style, and the date system. Each part's
 * XML is streamed through saxes; the strings are kept as UTF-8 bytes in one buffer, outside the
 * JavaScript heap, since a big sheet shares hundreds of thousands of them. What is held is bounded:
 * each run of text by the order limit, the shared strings by MAX_SHARED_STRINGS_BYTES.
 */
import type { SaxesParser, SaxesTagPlain } from 'saxes';
import { InputError } from '../../../core/errors.js';
import { excerpt } from '../../../io/quote.js';
import { formatSize, type InputLimits } from '../limits.js';
import type { CellText, StringsByIndex } from './cells.js';
import { damagedWorkbook, entryText, type NotUtf8Handler, readZipEntry, type ZipEntry } from './zip.js';

/** What a sheet's cells need of the rest of the workbook. */
export interface WorkbookParts {
  strings: SharedStrings;
  /** The number format of each cell style (`s`), by index; undefined for General. */
  formats: (string | undefined)[];
  /** Whether dates count from 1904. */
  date1904: boolean;
}

/** A saxes parser without namespaces or positions, as the parts are read. */
export type XmlParser = SaxesParser<{ xmlns: false; position: false }>;

/** The formats Excel numbers 0 to 49 without writing them in the workbook (en-US). */
const BUILT_IN_FORMATS: Record<number, string> = {
  0: 'General',
  1: '0',
  2: '0.00',
  3: '#,##0',
  4: '#,##0.00',
  9: '0%',
  10: '0.00%',
  11: '0.00E+00',
  12: '# ?/?',
  13: '# ??/??',
  14: 'mm-dd-yy',
  15: 'd-mmm-yy',
  16: 'd-mmm',
  17: 'mmm-yy',
  18: 'h:mm AM/PM',
  19: 'h:mm:ss AM/PM',
  20: 'h:mm',
  21: 'h:mm:ss',
  22: 'm/d/yy "h":mm',
  37: '#,##0 ;(#,##0)',
  38: '#,##0 ;[Red](#,##0)',
  39: '#,##0.00 ;(#,##0.00)',
  40: '#,##0.00 ;[Red](#,##0.00)',
  45: 'mm:ss',
  46: '[h]:mm:ss',
  47: 'mmss.0',
  48: '##0.0E+0',
  49: '@',
};

/** An element's name without its namespace prefix (`x:row` → `row`). */
export function localName(tag: SaxesTagPlain): string {
  const colon = tag.name.indexOf(':');
  return colon < 0 ? tag.name : tag.name.slice(colon + 1);
}

/** How an entry's XML is read: what may be read of it, and where a problem stands. */
export interface XmlReading {
  /**
   * The longest run of characters without `<` or `>` (a text, a tag): saxes holds a run whole,
   * so beyond it the workbook is refused (`tooLong`) rather than held.
   */
  maxRun: number;
  /** Refuses the workbook for a run over `maxRun` where the parser stands (it throws). */
  tooLong(): never;
  /** Bytes that are not UTF-8 at `offset` of the part, where the parser stands (default: refused). */
  notUtf8?: NotUtf8Handler;
}

/**
 * Streams an entry's XML through a parser set up by `setUp`, yielding after each chunk so that
 * the caller can hand out what the handlers gathered. A document that is not well-formed is an
 * InputError naming the file; the handlers' own InputErrors pass as they are.
 */
export async function* parseXmlEntry(
  path: string,
  file: string,
  entry: ZipEntry,
  setUp: (parser: XmlParser) => void,
  reading: XmlReading,
): AsyncGenerator<void> {
  const { SaxesParser } = await import('saxes');
  const parser: XmlParser = new SaxesParser({ xmlns: false, position: false, fileName: entry.name });
  setUp(parser);
  // saxes names the part in its messages; the handlers' own errors get it here.
  const unreadable = (error: unknown) => {
    if (error instanceof InputError) return error;
    const message = (error as Error).message ?? String(error);
    const named = message.startsWith(`${entry.name}:`) ? message : `${entry.name}: ${message}`;
    return new InputError(
      `${file} could not be read as an Excel workbook (${excerpt(named, 120)}); nothing was sent.`,
    );
  };
  const runs = new RunLength(reading.maxRun);
  for await (const chunk of readZipEntry(path, file, entry, reading.notUtf8)) {
    try {
      const over = runs.over(chunk);
      if (over >= 0) {
        // The text before the run is read, so that the parser stands where the run is.
        parser.write(chunk.slice(0, over));
        reading.tooLong();
      }
      parser.write(chunk);
    } catch (error) {
      throw unreadable(error);
    }
    yield;
  }
  try {
    parser.close();
  } catch (error) {
    throw unreadable(error);
  }
}

/** The length of the runs of characters between `<` and `>`, across chunks. */
export class RunLength {
  private run = 0;

  constructor(private readonly max: number) {}

  /** Where in `chunk` a run longer than the limit starts (0 when it began before); -1 for none. */
  over(chunk: string): number {
    // A chunk no longer than the limit holds no such run of its own: only its first and last runs,
    // which continue those of the chunks around it, are measured (two searches a chunk).
    if (chunk.length <= this.max) {
      const first = nextMarkup(chunk, 0);
      if (first < 0) {
        this.run += chunk.length;
        return this.run > this.max ? 0 : -1;
      }
      if (this.run + first > this.max) return 0;
      this.run = chunk.length - 1 - Math.max(chunk.lastIndexOf('<'), chunk.lastIndexOf('>'));
      return -1;
    }
    let start = 0;
    for (;;) {
      const next = nextMarkup(chunk, start);
      const end = next < 0 ? chunk.length : next;
      if (this.run + end - start > this.max) return start;
      if (next < 0) {
        this.run += end - start;
        return -1;
      }
      this.run = 0;
      start = next + 1;
    }
  }
}

/** The index of the first `<` or `>` from `from`; -1 for none. */
function nextMarkup(chunk: string, from: number): number {
  const open = chunk.indexOf('<', from);
  const close = chunk.indexOf('>', from);
  return open < 0 ? close : close < 0 ? open : Math.min(open, close);
}

/** The largest shared strings part read, and the most its strings may hold. */
export const MAX_SHARED_STRINGS_BYTES = 256 * 1024 * 1024;

/** The shared strings, the cell styles' number formats and the date system of a workbook. */
export async function readWorkbookParts(
  path: string,
  file: string,
  entries: Map<string, ZipEntry>,
  limits: InputLimits,
): Promise<WorkbookParts> {
  const stringsEntry = entries.get('xl/sharedStrings.xml');
  const stylesEntry = entries.get('xl/styles.xml');
  const workbook = await entryText(path, file, entries.get('xl/workbook.xml')!);
  const date1904 = /<(?:\w+:)?workbookPr\b[^>]*\sdate1904\s*=\s*["'](?:1|true)["']/.test(workbook);
  if (stringsEntry && stringsEntry.size > MAX_SHARED_STRINGS_BYTES)
    throw sharedStringsTooLarge(file, stringsEntry);
  return {
    strings: stringsEntry ? await readSharedStrings(path, file, stringsEntry, limits) : new SharedStrings(0),
    formats: stylesEntry ? await readCellFormats(path, file, stylesEntry, limits) : [],
    date1904,
  };
}

/**
 * Refuses shared strings that would hold more memory than ordercli gives them: from the size the
 * zip's directory declares, before reading them, or (`held`) once their text and index pass it.
 */
function sharedStringsTooLarge(file: string, entry: ZipEntry, held = false): InputError {
  const size =
    entry.size >= 1024 ** 3 ? `${(entry.size / 1024 ** 3).toFixed(1)} GiB` : formatSize(entry.size);
  const what = held ? 'hold more than' : `expand to ${size}, over`;
  return new InputError(
    `${file} is too large a workbook to read: its shared strings (${entry.name}) ${what} the ${formatSize(MAX_SHARED_STRINGS_BYTES)} ordercli reads; save the sheet of orders as "CSV UTF-8" and import that; nothing was sent.`,
  );
}

/** The longest text of one cell (or shared string) read: over it, the workbook is refused. */
export function tooLongText(file: string, where: string, limits: InputLimits): InputError {
  return new InputError(
    `${file} could not be read: ${where} holds more than ${formatSize(limits.maxOrderBytes)} of text, the largest order ordercli sends: shorten it, or raise the limit with --max-order-bytes; nothing was sent.`,
  );
}

/**
 * The shared strings in order: each `<si>` is the text of its `<t>` elements (one, or one per
 * run of rich text), without its phonetic guides (`<rPh>`), which Excel does not show in the cell.
 * A string holding bytes that are not UTF-8 is kept as such: the cell that shows it is refused.
 */
async function readSharedStrings(
  path: string,
  file: string,
  entry: ZipEntry,
  limits: InputLimits,
): Promise<SharedStrings> {
  const strings = new SharedStrings(entry.size);
  let text = '';
  let inString = false;
  let inText = false;
  let phonetic = 0;
  let notUtf8 = false;
  const where = () =>
    inString ? `shared string ${strings.size} (in ${entry.name})` : `its part ${entry.name}`;
  const tooLong = (): never => {
    throw tooLongText(file, where(), limits);
  };
  const parse = parseXmlEntry(
    path,
    file,
    entry,
    (parser) => {
      parser.on('opentag', (tag) => {
        const name = localName(tag);
        if (name === 'si') {
          text = '';
          inString = true;
          notUtf8 = false;
        } else if (name === 't') inText = phonetic === 0;
        else if (name === 'rPh') phonetic++;
      });
      const append = (chunk: string) => {
        if (!inText) return;
        text += chunk;
        // Runs of rich text are each within the limit; together they must be too.
        if (text.length > limits.maxOrderBytes) tooLong();
      };
      parser.on('text', append);
      parser.on('cdata', append);
      parser.on('closetag', (tag) => {
        const name = localName(tag);
        if (name === 't') inText = false;
        else if (name === 'rPh') phonetic--;
        else if (name === 'si') {
          inString = false;
          if (!strings.add(text, notUtf8)) throw sharedStringsTooLarge(file, entry, true);
        }
      });
    },
    {
      maxRun: limits.maxOrderBytes,
      tooLong,
      notUtf8: (offset) => {
        if (!inString) {
          throw damagedWorkbook(
            file,
            `its part ${entry.name} holds bytes that are not UTF-8 (at byte ${offset})`,
          );
        }
        notUtf8 = true;
      },
    },
  );
  for await (const _ of parse) {
    // The handlers gather the strings.
  }
  return strings;
}

/**
 * The number format of each cell style (`<cellXfs>`), from its `numFmtId`: the workbook's own
 * formats (`<numFmts>`, backslash escapes removed), else Excel's built-in ones; format 0 (General)
 * is left undefined.
 */
async function readCellFormats(
  path: string,
  file: string,
  entry: ZipEntry,
  limits: InputLimits,
): Promise<(string | undefined)[]> {
  const custom = new Map<number, string>();
  const ids: number[] = [];
  let inCellXfs = false;
  let inNumFmts = false;
  const parse = parseXmlEntry(
    path,
    file,
    entry,
    (parser) => {
      parser.on('opentag', (tag) => {
        const name = localName(tag);
        if (name === 'cellXfs') inCellXfs = true;
        else if (name === 'numFmts') inNumFmts = true;
        else if (name === 'xf' && inCellXfs) ids.push(Number.parseInt(tag.attributes.numFmtId ?? '', 10));
        else if (name === 'numFmt' && inNumFmts && tag.attributes.formatCode !== undefined) {
          custom.set(
            Number.parseInt(tag.attributes.numFmtId ?? '', 10),
            tag.attributes.formatCode.replace(/\\(.)/g, '$1'),
          );
        }
      });
      parser.on('closetag', (tag) => {
        const name = localName(tag);
        if (name === 'cellXfs') inCellXfs = false;
        else if (name === 'numFmts') inNumFmts = false;
      });
    },
    {
      maxRun: limits.maxOrderBytes,
      tooLong: () => {
        throw tooLongText(file, `its part ${entry.name}`, limits);
      },
    },
  );
  for await (const _ of parse) {
    // The handlers gather the formats.
  }
  return ids.map((id) => (id ? custom.get(id) || BUILT_IN_FORMATS[id] : undefined));
}

/**
 * Strings by index, as UTF-8 bytes in one buffer: entry i is `bytes[ends[i - 1], ends[i])`. The
 * buffer is allocated at the size of the XML part, which its text cannot exceed, and the pages
 * not written to cost no memory; the strings and their index may hold MAX_SHARED_STRINGS_BYTES.
 */
export class SharedStrings implements StringsByIndex {
  private readonly bytes: Buffer;
  private ends = new Uint32Array(1 << 10);
  private count = 0;
  private used = 0;
  /** The strings holding bytes that were not UTF-8 (rare: a set). */
  private readonly notUtf8 = new Set<number>();

  constructor(partSize: number) {
    this.bytes = Buffer.allocUnsafe(Math.min(partSize, MAX_SHARED_STRINGS_BYTES));
  }

  get size(): number {
    return this.count;
  }

  /** Adds a string; false when the strings and their index would hold more than MAX_SHARED_STRINGS_BYTES. */
  add(text: string, notUtf8 = false): boolean {
    // A string that was not UTF-8 is refused where it is shown: its text is not needed.
    const stored = notUtf8 ? '' : text;
    const length = Buffer.byteLength(stored);
    const capacity = this.count === this.ends.length ? this.ends.length * 2 : this.ends.length;
    const held = this.used + length + capacity * 4;
    if (this.used + length > this.bytes.length || held > MAX_SHARED_STRINGS_BYTES) return false;
    if (capacity > this.ends.length) {
      const ends = new Uint32Array(capacity);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.used += this.bytes.write(stored, this.used);
    if (notUtf8) this.notUtf8.add(this.count);
    this.ends[this.count++] = this.used;
    return true;
  }

  get(index: number): CellText | undefined {
    if (!(Number.isInteger(index) && index >= 0 && index < this.count)) return undefined;
    if (this.notUtf8.has(index))
      return { error: `holds bytes that are not UTF-8 (in shared string ${index})`, damaged: true };
    const start = index === 0 ? 0 : this.ends[index - 1]!;
    return this.bytes.toString('utf8', start, this.ends[index]!);
  }
}
