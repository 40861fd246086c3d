/**
 * The zip container of an .xlsx workbook, its central directory read by yauzl: a file that is not a
 * workbook (a CSV renamed .xlsx, an old binary .xls, a zip bomb) is refused in one sentence, each
 * entry is inflated with a check of the size its directory declares, the sheets are listed in tab
 * order, and each sheet's merged ranges are found (they follow the rows in the sheet's XML, so
 * they are scanned for before the rows are read).
 */
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';
import { openPromise, type ZipFile } from 'yauzl';
import { InputError } from '../../../core/errors.js';

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
const MAX_TOTAL_BYTES = 4 * 1024 * 1024 * 1024;
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

/** An entry that expands far beyond its compressed size, or a workbook beyond 4 GiB, is a zip bomb. */
function checkExpansion(size: number, compressedSize: number, total: number, file: string): void {
  const ratio = size / Math.max(compressedSize, 1);
  const bomb = size > RATIO_CHECKED_FROM && ratio > MAX_RATIO;
  if (total > MAX_TOTAL_BYTES || bomb) {
    throw notWorkbook(
      file,
      `it expands to ${bomb ? `${Math.round(ratio)} times its size` : 'more than 4 GiB'}, which no workbook of orders does (a zip bomb?)`,
    );
  }
}

/**
 * The text of one entry, chunk by chunk, inflated. It stops with an error past the size the
 * directory declared, so that a lying directory cannot make it expand without end.
 */
export async function* readZipEntry(path: string, file: string, entry: ZipEntry): AsyncGenerator<string> {
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
    const decoder = new TextDecoder('utf-8');
    try {
      for await (const chunk of source) {
        inflated += (chunk as Buffer).length;
        if (inflated > entry.size) throw notWorkbook(file, 'its zip directory does not match its contents');
        yield decoder.decode(chunk as Buffer, { stream: true });
      }
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

/** The whole text of a small entry (the workbook's list of sheets and its relationships). */
export async function entryText(path: string, file: string, entry: ZipEntry): Promise<string> {
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

/** The sheets of the workbook in tab order (chart sheets and others without a worksheet left out). */
export async function workbookSheets(
  path: string,
  file: string,
  entries: Map<string, ZipEntry>,
): Promise<WorkbookSheet[]> {
  const workbook = await entryText(path, file, entries.get('xl/workbook.xml')!);
  const relsEntry = entries.get('xl/_rels/workbook.xml.rels');
  const rels = relsEntry ? await entryText(path, file, relsEntry) : '';
  const targets = new Map<string, string>();
  for (const tag of rels.match(/<(?:\w+:)?Relationship\b[^>]*>/g) ?? []) {
    const id = attribute(tag, 'Id');
    const target = attribute(tag, 'Target');
    if (id === undefined || target === undefined) continue;
    targets.set(id, target.startsWith('/') ? target.slice(1) : `xl/${target}`);
  }
  const sheets: WorkbookSheet[] = [];
  for (const tag of workbook.match(/<(?:\w+:)?sheet\b[^>]*>/g) ?? []) {
    const name = attribute(tag, 'name');
    const id = attribute(tag, '(?:\\w+:)?id');
    const entry = id === undefined ? undefined : targets.get(id);
    if (name !== undefined && entry !== undefined && entries.has(entry)) sheets.push({ name, entry });
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

/** The merged ranges of a sheet, read from the end of its XML (a scan, without parsing the rows). */
export async function mergedRanges(path: string, file: string, entry: ZipEntry): Promise<MergedRange[]> {
  const ranges: MergedRange[] = [];
  let carry = '';
  for await (const chunk of readZipEntry(path, file, entry)) {
    const text = carry + chunk;
    const pattern = /<(?:\w+:)?mergeCell\b[^>]*>/g;
    let last = 0;
    for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
      const range = parseRange(attribute(match[0], 'ref') ?? '');
      if (range) ranges.push(range);
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
