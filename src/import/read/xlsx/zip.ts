/**
 * The zip container of an .xlsx workbook, its central directory read by yauzl: a file that is not a
 * workbook (a CSV renamed .xlsx, an old binary .xls, a zip bomb) is refused in one sentence, each
 * entry is inflated with a check of the size its directory declares, the sheets are listed in tab
 * order, and each sheet's merged ranges are found (they follow the rows in the sheet's XML, so
 * they are scanned for before the rows are read).
 */
import { isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';
import { openPromise, type ZipFile } from 'yauzl';
import { InputError } from '../../../core/errors.js';
import { quote } from '../../../io/quote.js';

/** One file inside the zip, as its central directory describes it. */
export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

/** A sheet of the workbook, in tab order, with the zip entry of its XML. */
export interface WorkbookSheet {
  name: string;
  entry: string;
}

/** How far one entry may expand, and how much the whole workbook may: beyond, it is a zip bomb. */
const MAX_RATIO = 200;
const RATIO_CHECKED_FROM = 16 * 1024 * 1024;
/**
 * The most a workbook may expand to, all its parts together: Excel's largest sheet of orders
 * (a million rows of twenty columns) is about half of it. Each part is read as a stream, but the
 * sheet is read three times over (merged ranges, header, rows).
 */
export const MAX_WORKBOOK_BYTES = 2 * 1024 * 1024 * 1024;
const LOCAL_SIGNATURE = 0x04034b50;
/** More parts than any workbook has: a directory that says so is damaged or hostile. */
const MAX_ENTRIES = 1_000_000;

function notWorkbook(file: string, why: string): InputError {
  return new InputError(`${file} is not an Excel workbook (.xlsx): ${why}; nothing was sent.`);
}

/** The entries of an .xlsx file, refused (InputError, exit 2) when it is not a readable workbook. */
export async function readWorkbookZip(path: string, file: string): Promise<Map<string, ZipEntry>> {
  await checkSignature(path, file);
  let zip: ZipFile;
  try {
    // Our own checks of sizes (expansion, a lying directory) give the messages; yauzl reads the directory.
    zip = await openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: false });
  } catch {
    throw notWorkbook(file, 'the zip archive is truncated or damaged');
  }
  try {
    if (zip.entryCount > MAX_ENTRIES) throw notWorkbook(file, 'the zip archive is truncated or damaged');
    const entries = await listEntries(zip, file);
    if (!entries.has('xl/workbook.xml')) {
      throw notWorkbook(file, 'it is a zip archive without a workbook in it (another kind of document?)');
    }
    return entries;
  } finally {
    zip.close();
  }
}

/** A file that is an old binary Excel file, or no zip at all, is refused by its first bytes. */
async function checkSignature(path: string, file: string): Promise<void> {
  const handle = await open(path, 'r');
  const head = Buffer.alloc(8);
  try {
    await handle.read(head, 0, 8, 0);
  } finally {
    await handle.close();
  }
  if (head.readUInt32LE(0) === 0xe011cfd0) {
    throw notWorkbook(
      file,
      'it is an old binary Excel file (.xls) or a protected workbook; open it in Excel and save it as "Excel Workbook (.xlsx)"',
    );
  }
  if (head.readUInt32LE(0) !== LOCAL_SIGNATURE) {
    throw notWorkbook(file, 'it is not a zip archive (a CSV file renamed .xlsx? then name it .csv)');
  }
}

/** The entries of the central directory, each checked before the next is read. */
async function listEntries(zip: ZipFile, file: string): Promise<Map<string, ZipEntry>> {
  const entries = new Map<string, ZipEntry>();
  let total = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.isEncrypted()) {
        throw notWorkbook(
          file,
          'it is encrypted (a workbook protected by a password); save a copy without one',
        );
      }
      total += entry.uncompressedSize;
      checkExpansion(entry.uncompressedSize, entry.compressedSize, total, file);
      if (entries.has(entry.fileName)) {
        // Which of the two a reader takes is up to the reader: refused rather than guessed.
        throw notWorkbook(file, `its zip archive holds the part ${entry.fileName} twice`);
      }
      entries.set(entry.fileName, {
        name: entry.fileName,
        method: entry.compressionMethod,
        compressedSize: entry.compressedSize,
        size: entry.uncompressedSize,
        localHeaderOffset: entry.relativeOffsetOfLocalHeader,
      });
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw notWorkbook(file, 'the zip archive is truncated or damaged');
  }
  return entries;
}

/** An entry that expands far beyond its compressed size, or a workbook beyond 2 GiB, is a zip bomb. */
function checkExpansion(size: number, compressedSize: number, total: number, file: string): void {
  const ratio = size / Math.max(compressedSize, 1);
  const bomb = size > RATIO_CHECKED_FROM && ratio > MAX_RATIO;
  if (total > MAX_WORKBOOK_BYTES || bomb) {
    throw notWorkbook(
      file,
      `it expands to ${bomb ? `${Math.round(ratio)} times its size` : `more than ${MAX_WORKBOOK_BYTES / 1024 ** 3} GiB`}, which no workbook of orders does (a zip bomb?)`,
    );
  }
}

/** The part of a workbook at fault, in the one sentence that refuses it. */
export function damagedWorkbook(file: string, what: string): InputError {
  return new InputError(`${file} could not be read as an Excel workbook: ${what}; nothing was sent.`);
}

/** What to do with bytes that are not UTF-8 at `offset` of a part: throw, or note them and go on. */
export type NotUtf8Handler = (offset: number) => void;

/** Refuses a part holding bytes that are not UTF-8, naming the part and where. */
function refuseNotUtf8(file: string, entry: ZipEntry): NotUtf8Handler {
  return (offset) => {
    throw damagedWorkbook(file, `its part ${entry.name} holds bytes that are not UTF-8 (at byte ${offset})`);
  };
}

/**
 * The text of one entry, chunk by chunk, inflated. It stops with an error past the size the
 * directory declared, so that a lying directory cannot make it expand without end. Bytes that are
 * not UTF-8 go to `notUtf8` once the text before them was handed out (default: the workbook is
 * refused); when it returns, they read as U+FFFD.
 */
export async function* readZipEntry(
  path: string,
  file: string,
  entry: ZipEntry,
  notUtf8: NotUtf8Handler = refuseNotUtf8(file, entry),
): AsyncGenerator<string> {
  const handle = await open(path, 'r');
  try {
    const local = Buffer.alloc(30);
    await handle.read(local, 0, 30, entry.localHeaderOffset);
    if (local.readUInt32LE(0) !== LOCAL_SIGNATURE) throw notWorkbook(file, 'the zip archive is damaged');
    const start = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    if (entry.method !== 0 && entry.method !== 8) {
      throw notWorkbook(file, `it uses a zip compression method (${entry.method}) Excel does not write`);
    }
    const raw = handle.createReadStream({ start, end: start + entry.compressedSize - 1, autoClose: false });
    const source = entry.method === 0 ? raw : raw.pipe(createInflateRaw({ chunkSize: 256 * 1024 }));
    let inflated = 0;
    const decoder = new Utf8Chunks(notUtf8);
    try {
      for await (const chunk of source) {
        inflated += (chunk as Buffer).length;
        if (inflated > entry.size) throw notWorkbook(file, 'its zip directory does not match its contents');
        yield* decoder.decode(chunk as Buffer);
      }
      yield* decoder.end();
    } catch (error) {
      if (error instanceof InputError) throw error;
      throw notWorkbook(file, 'the zip archive is damaged');
    } finally {
      raw.destroy();
      source.destroy();
    }
  } finally {
    await handle.close();
  }
}

/**
 * UTF-8 text of chunks that may cut a character in two. Valid text (checked with `isUtf8`, the
 * whole chunk at once) is decoded as is; a byte that is not UTF-8 is located, the text before it
 * handed out first, so that whoever handles it knows what was being read.
 */
class Utf8Chunks {
  /** The first bytes of a character the chunk cut. */
  private carry: Buffer | undefined;
  /** Bytes of the part before the current chunk. */
  private offset = 0;

  constructor(private readonly notUtf8: NotUtf8Handler) {}

  *decode(chunk: Buffer): Generator<string> {
    const bytes = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const complete = bytes.length - incompleteTail(bytes);
    this.carry = complete < bytes.length ? Buffer.from(bytes.subarray(complete)) : undefined;
    yield* this.text(bytes.subarray(0, complete));
  }

  *end(): Generator<string> {
    // A character cut by the end of the part.
    if (this.carry) yield* this.text(this.carry, true);
  }

  private *text(bytes: Buffer, final = false): Generator<string> {
    const start = this.offset;
    this.offset += bytes.length;
    if (!final && isUtf8(bytes)) {
      if (bytes.length > 0) yield bytes.toString('utf8');
      return;
    }
    let from = 0;
    for (let bad = firstNotUtf8(bytes, 0); bad >= 0; bad = firstNotUtf8(bytes, from)) {
      if (bad > from) yield bytes.toString('utf8', from, bad);
      this.notUtf8(start + bad);
      yield '\uFFFD';
      from = bad + 1;
    }
    if (from < bytes.length) yield bytes.toString('utf8', from);
  }
}

/** How many bytes at the end of `bytes` begin a character that does not end there. */
function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/** The index of the first byte from `from` that does not begin a valid UTF-8 character; -1 for none. */
function firstNotUtf8(bytes: Buffer, from: number): number {
  let i = from;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i++;
      continue;
    }
    const more =
      lead >= 0xc2 && lead <= 0xdf
        ? 1
        : lead >= 0xe0 && lead <= 0xef
          ? 2
          : lead >= 0xf0 && lead <= 0xf4
            ? 3
            : 0;
    if (more === 0 || i + more >= bytes.length) return i;
    let point = lead & (0x3f >> more);
    for (let k = 1; k <= more; k++) {
      const next = bytes[i + k]!;
      if ((next & 0xc0) !== 0x80) return i;
      point = (point << 6) | (next & 0x3f);
    }
    const shortest = more === 1 ? 0x80 : more === 2 ? 0x800 : 0x10000;
    if (point < shortest || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) return i;
    i += more + 1;
  }
  return -1;
}

/** The most a part read whole (the workbook's list of sheets, its relationships) may expand to. */
const MAX_WHOLE_PART_BYTES = 64 * 1024 * 1024;

/** The whole text of a small entry (the workbook's list of sheets and its relationships). */
export async function entryText(path: string, file: string, entry: ZipEntry): Promise<string> {
  if (entry.size > MAX_WHOLE_PART_BYTES) {
    throw damagedWorkbook(
      file,
      `its part ${entry.name} expands to more than ${MAX_WHOLE_PART_BYTES / 1024 ** 2} MiB, far more than such a part holds`,
    );
  }
  let text = '';
  for await (const chunk of readZipEntry(path, file, entry)) text += chunk;
  return text;
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  const value = match?.[1] ?? match?.[2];
  return value === undefined ? undefined : decodeXml(value);
}

function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, name: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
    if (name[0] !== '#') return named[name.toLowerCase()]!;
    return String.fromCodePoint(
      name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1)),
    );
  });
}

/** Relationships to sheets that hold no cells: chart sheets, dialog sheets, macro sheets. */
const NOT_WORKSHEET =
  /(?:^|\/)(?:chartsheets?|dialogsheets?|macrosheets?|xlMacrosheet|xlIntlMacrosheet)(?:\/|$)/i;

/**
 * The sheets of the workbook in tab order (chart sheets and others without a worksheet left out).
 * A worksheet whose part is not in the zip is refused: taking the next sheet instead would import
 * another sheet's rows.
 */
export async function workbookSheets(
  path: string,
  file: string,
  entries: Map<string, ZipEntry>,
): Promise<WorkbookSheet[]> {
  const workbook = await entryText(path, file, entries.get('xl/workbook.xml')!);
  const relsEntry = entries.get('xl/_rels/workbook.xml.rels');
  const rels = relsEntry ? await entryText(path, file, relsEntry) : '';
  const targets = new Map<string, { entry: string; worksheet: boolean }>();
  for (const tag of rels.match(/<(?:\w+:)?Relationship\b[^>]*>/g) ?? []) {
    const id = attribute(tag, 'Id');
    const target = attribute(tag, 'Target');
    if (id === undefined || target === undefined) continue;
    const type = attribute(tag, 'Type') ?? '';
    targets.set(id, {
      entry: target.startsWith('/') ? target.slice(1) : `xl/${target}`,
      worksheet: !NOT_WORKSHEET.test(type.slice(type.lastIndexOf('/') + 1)) && !NOT_WORKSHEET.test(target),
    });
  }
  const sheets: WorkbookSheet[] = [];
  for (const tag of workbook.match(/<(?:\w+:)?sheet\b[^>]*>/g) ?? []) {
    const name = attribute(tag, 'name');
    const id = attribute(tag, '(?:\\w+:)?id');
    if (name === undefined) continue;
    const target = id === undefined ? undefined : targets.get(id);
    if (target !== undefined && !target.worksheet) continue;
    if (target === undefined || !entries.has(target.entry)) {
      const part =
        target === undefined
          ? '(no part is named for it in xl/_rels/workbook.xml.rels)'
          : `(its part ${target.entry} is not in the zip)`;
      throw damagedWorkbook(file, `its sheet ${quote(name)} is missing ${part}`);
    }
    sheets.push({ name, entry: target.entry });
  }
  return sheets;
}

/** A merged range: 1-based rows and columns, inclusive. */
export interface MergedRange {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

/** Merged ranges a sheet may have (each is held while the sheet is read). */
const MAX_MERGED_RANGES = 1_000_000;

/** The merged ranges of a sheet, read from the end of its XML (a scan, without parsing the rows). */
export async function mergedRanges(path: string, file: string, entry: ZipEntry): Promise<MergedRange[]> {
  const ranges: MergedRange[] = [];
  let carry = '';
  // Bytes that are not UTF-8 are found when the rows are read, in their cell.
  for await (const chunk of readZipEntry(path, file, entry, () => {})) {
    const text = carry + chunk;
    const pattern = /<(?:\w+:)?mergeCell\b[^>]*>/g;
    let last = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      const range = parseRange(attribute(match[0], 'ref') ?? '');
      if (range) ranges.push(range);
      if (ranges.length > MAX_MERGED_RANGES) {
        throw damagedWorkbook(
          file,
          `its part ${entry.name} has more than ${MAX_MERGED_RANGES.toLocaleString('en')} merged ranges, more than a sheet of orders has`,
        );
      }
      last = pattern.lastIndex;
    }
    // A tag cut by the chunk's end is read again with the next chunk.
    const open = text.lastIndexOf('<');
    carry = open >= last && text.length - open < 512 ? text.slice(open) : '';
  }
  return ranges;
}

/** `B3:D5` → its rows and columns. */
function parseRange(ref: string): MergedRange | undefined {
  const match = /^\$?([A-Z]{1,3})\$?(\d+):\$?([A-Z]{1,3})\$?(\d+)$/i.exec(ref.trim());
  if (!match) return undefined;
  return {
    left: columnNumber(match[1]!),
    top: Number(match[2]),
    right: columnNumber(match[3]!),
    bottom: Number(match[4]),
  };
}

/** `A` → 1, `AB` → 28. */
export function columnNumber(letters: string): number {
  let n = 0;
  for (const char of letters.toUpperCase()) n = n * 26 + (char.charCodeAt(0) - 64);
  return n;
}

/** 1 → `A`, 28 → `AB`. */
export function columnLetters(column: number): string {
  let letters = '';
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  }
  return letters;
}
