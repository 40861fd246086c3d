/**
 * The parts of a workbook that its sheets' cells refer to: the shared strings (a text cell holds
 * an index into them), the number format of each cell style, and the date system. Each part's
 * XML is streamed through saxes; the strings are kept as UTF-8 bytes in one buffer, outside the
 * JavaScript heap, since a big sheet shares hundreds of thousands of them.
 */
import type { SaxesParser, SaxesTagPlain } from 'saxes';
import { InputError } from '../../../core/errors.js';
import { excerpt } from '../../../io/quote.js';
import type { StringsByIndex } from './cells.js';
import { entryText, readZipEntry, type ZipEntry } from './zip.js';

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

/**
 * Streams an entry's XML through a parser set up by `setUp`, yielding after each chunk so that
 * the caller can hand out what the handlers gathered. A document that is not well-formed is an
 * InputError naming the file.
 */
export async function* parseXmlEntry(
  path: string,
  file: string,
  entry: ZipEntry,
  setUp: (parser: XmlParser) => void,
): AsyncGenerator<void> {
  const { SaxesParser } = await import('saxes');
  const parser: XmlParser = new SaxesParser({ xmlns: false, position: false, fileName: entry.name });
  setUp(parser);
  // saxes names the part in its messages; the handlers' own errors get it here.
  const unreadable = (error: unknown) => {
    const message = (error as Error).message ?? String(error);
    const named = message.startsWith(`${entry.name}:`) ? message : `${entry.name}: ${message}`;
    return new InputError(
      `${file} could not be read as an Excel workbook (${excerpt(named, 120)}); nothing was sent.`,
    );
  };
  for await (const chunk of readZipEntry(path, file, entry)) {
    try {
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

/** The shared strings, the cell styles' number formats and the date system of a workbook. */
export async function readWorkbookParts(
  path: string,
  file: string,
  entries: Map<string, ZipEntry>,
): Promise<WorkbookParts> {
  const stringsEntry = entries.get('xl/sharedStrings.xml');
  const stylesEntry = entries.get('xl/styles.xml');
  const workbook = await entryText(path, file, entries.get('xl/workbook.xml')!);
  const date1904 = /<(?:\w+:)?workbookPr\b[^>]*\sdate1904\s*=\s*["'](?:1|true)["']/.test(workbook);
  return {
    strings: stringsEntry ? await readSharedStrings(path, file, stringsEntry) : new SharedStrings(),
    formats: stylesEntry ? await readCellFormats(path, file, stylesEntry) : [],
    date1904,
  };
}

/**
 * The shared strings in order: each `<si>` is the text of its `<t>` elements (one, or one per
 * run of rich text), without its phonetic guides (`<rPh>`), which Excel does not show in the cell.
 */
async function readSharedStrings(path: string, file: string, entry: ZipEntry): Promise<SharedStrings> {
  const strings = new SharedStrings();
  let text = '';
  let inText = false;
  let phonetic = 0;
  const parse = parseXmlEntry(path, file, entry, (parser) => {
    parser.on('opentag', (tag) => {
      const name = localName(tag);
      if (name === 'si') text = '';
      else if (name === 't') inText = phonetic === 0;
      else if (name === 'rPh') phonetic++;
    });
    const append = (chunk: string) => {
      if (inText) text += chunk;
    };
    parser.on('text', append);
    parser.on('cdata', append);
    parser.on('closetag', (tag) => {
      const name = localName(tag);
      if (name === 't') inText = false;
      else if (name === 'rPh') phonetic--;
      else if (name === 'si') strings.add(text);
    });
  });
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
async function readCellFormats(path: string, file: string, entry: ZipEntry): Promise<(string | undefined)[]> {
  const custom = new Map<number, string>();
  const ids: number[] = [];
  let inCellXfs = false;
  let inNumFmts = false;
  const parse = parseXmlEntry(path, file, entry, (parser) => {
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
  });
  for await (const _ of parse) {
    // The handlers gather the formats.
  }
  return ids.map((id) => (id ? custom.get(id) || BUILT_IN_FORMATS[id] : undefined));
}

/** Strings by index, as UTF-8 bytes in one growing buffer: entry i is `bytes[ends[i - 1], ends[i])`. */
export class SharedStrings implements StringsByIndex {
  private bytes = Buffer.allocUnsafe(1 << 16);
  private ends = new Uint32Array(1 << 10);
  private count = 0;
  private used = 0;

  get size(): number {
    return this.count;
  }

  add(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8.
    if (this.used + text.length * 3 > this.bytes.length) {
      const needed = this.used + Buffer.byteLength(text);
      if (needed > 0xffff_ffff) throw new RangeError('SharedStrings: more than 4 GiB of text');
      if (needed > this.bytes.length) {
        const bytes = Buffer.allocUnsafe(Math.min(Math.max(this.bytes.length * 2, needed), 0xffff_ffff));
        this.bytes.copy(bytes, 0, 0, this.used);
        this.bytes = bytes;
      }
    }
    if (this.count === this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.used += this.bytes.write(text, this.used);
    this.ends[this.count++] = this.used;
  }

  get(index: number): string | undefined {
    if (!(index >= 0 && index < this.count)) return undefined;
    const start = index === 0 ? 0 : this.ends[index - 1]!;
    return this.bytes.toString('utf8', start, this.ends[index]!);
  }
}
