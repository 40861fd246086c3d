/**
 * `--rejects <file>`: the records that were invalid or failed, written back by their format's
 * reader (read/formats.ts) ready to fix and import again: in the input's own format, or, for a
 * tabular input (CSV, workbook), in the tabular format whose usual extension the rejects file has
 * (rows are rows either way: `--rejects rejects.xlsx` of a CSV input). A record's `raw` that is a
 * string is text that could not be read as a record (not JSON, not an object): it is written back
 * exactly as it was.
 */

import { lstat, open, unlink } from 'node:fs/promises';
import { UsageError } from '../../core/errors.js';
import { codeWords } from '../../io/code-words.js';
import { formatNamed, formatOfExtension } from '../read/formats.js';
import type { InputFormat, RejectsWriter } from '../read/input-format.js';
import type { InputLayout, SourceRecord } from '../types.js';
import { OutputWriteError } from './output-error.js';

export type { RejectsWriter } from '../read/input-format.js';

/**
 * The format rejects are written in: for a tabular input, the tabular format whose usual extension
 * the rejects file has (`.xlsx`, `.csv`), else the input's own; JSON and NDJSON inputs keep theirs.
 */
export function rejectsFormat(path: string, layout: InputLayout): InputFormat {
  const own = formatNamed(layout.format);
  const named = formatOfExtension(path);
  return own.tabular && named?.tabular ? named : own;
}

/** Creates (or replaces) the rejects file at `path` (an absolute path, or relative to the process). */
export async function openRejects(path: string, layout: InputLayout): Promise<RejectsWriter> {
  const { reader } = await rejectsFormat(path, layout).load();
  return reader.openRejects(path, layout);
}

/**
 * Writes every given record to a new rejects file; resolves to how many were written. With none,
 * no file is left at `path` (the one `checkRejectsPath` created, or an earlier run's, is removed):
 * a rejects file exists only when something was rejected, so a script can test for it.
 */
export async function writeRejects(
  path: string,
  layout: InputLayout,
  records: Iterable<SourceRecord> | AsyncIterable<SourceRecord>,
): Promise<number> {
  try {
    let writer: RejectsWriter | undefined;
    for await (const record of records) {
      writer ??= await openRejects(path, layout);
      await writer.add(record);
    }
    if (writer !== undefined) return await writer.close();
    await removeUnlessDevice(path);
    return 0;
  } catch (error) {
    throw new OutputWriteError('the rejects file', path, error);
  }
}

/** Removes the file at `path` if it is a regular file (not `/dev/null`), and says nothing if it is gone. */
async function removeUnlessDevice(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (info?.isFile()) await unlink(path);
}

/**
 * Checks, before anything is sent, that the rejects file can be created (it is written at the
 * end of the import): a path in a missing or read-only folder is bad usage, not a late failure.
 */
export async function checkRejectsPath(path: string, shown: string): Promise<void> {
  try {
    await (await open(path, 'w')).close();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`Cannot write the rejects file ${shown} (${codeWords(code)}); nothing was sent.`);
  }
}
