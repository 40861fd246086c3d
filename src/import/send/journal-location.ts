/**
 * Which journal belongs to an input: the one function that `orders import` (and its dry run),
 * `orders journal` and `orders resolve` use. The default journal lies beside the input's real
 * file, symlinks resolved, so that a link and its target share one journal (and its lock): two
 * journals for one file would each send every order.
 */
import { open, realpath, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { UsageError } from '../../core/errors.js';

export const JOURNAL_SUFFIX = '.journal.ndjson';

/** A journal as opened (`path`, absolute) and as shown to the user (`shown`). */
export interface JournalLocation {
  path: string;
  shown: string;
}

/**
 * The journal of an input: `--journal` when given (from the cwd), else `<real input>.journal.ndjson`.
 * Refuses when an older ordercli left a journal beside a link to the input, since that journal
 * knows what was sent and the default one would not.
 */
export async function journalOfInput(
  input: string,
  journalFlag: string | undefined,
  cwd: string,
): Promise<JournalLocation> {
  if (journalFlag !== undefined) return { path: resolve(cwd, journalFlag), shown: journalFlag };
  if (input === '-') {
    throw new UsageError(
      'Standard input has no journal of its own: pass --journal <file>, the journal that makes a re-run skip the orders already created.',
    );
  }
  const asGiven = resolve(cwd, input);
  const shownAsGiven = `${input}${JOURNAL_SUFFIX}`;
  let real: string;
  try {
    real = await realpath(asGiven);
  } catch {
    // No such file yet: the caller reports it; the journal would be beside the path as given.
    return { path: `${asGiven}${JOURNAL_SUFFIX}`, shown: shownAsGiven };
  }
  const path = `${real}${JOURNAL_SUFFIX}`;
  // Only the file itself being a link moves its journal; linked folders lead to the same place.
  const sameFile = join(await realpath(dirname(asGiven)), basename(asGiven)) === real;
  if (sameFile) return { path, shown: shownAsGiven };
  const beside = `${asGiven}${JOURNAL_SUFFIX}`;
  if (await isFile(beside)) {
    throw new UsageError(
      `${input} is a link to ${real}, whose journal is ${path}, but a journal ${shownAsGiven} also lies beside the link (written by an earlier ordercli), so the two would not agree on what was sent.`,
      [
        (await isFile(path))
          ? `Append it to the other one (cat ${shownAsGiven} >> ${path}) and remove it, or name one with --journal.`
          : `Move it there (mv ${shownAsGiven} ${path}), or name it with --journal.`,
      ],
    );
  }
  const fromCwd = relative(cwd, path);
  return { path, shown: fromCwd.startsWith('..') || isAbsolute(fromCwd) ? path : fromCwd };
}

/**
 * The journal named by the argument of `orders journal` / `orders resolve`: the file itself when
 * it is a journal (`*.journal.ndjson`, or NDJSON whose first record is a journal record), else
 * the journal of that input. Refuses when there is none yet.
 */
export async function locateJournal(argument: string, cwd: string): Promise<JournalLocation> {
  const given = resolve(cwd, argument);
  if (argument !== '-' && (argument.endsWith(JOURNAL_SUFFIX) || (await looksLikeJournal(given)))) {
    if (!(await isFile(given))) {
      throw new UsageError(
        `No journal at ${argument}: check the path (a journal is written by orders import).`,
      );
    }
    return { path: given, shown: argument };
  }
  if (argument !== '-' && !(await isFile(given))) {
    // The input moved or was deleted since; its journal may still be where it was.
    if (await isFile(`${given}${JOURNAL_SUFFIX}`)) {
      return { path: `${given}${JOURNAL_SUFFIX}`, shown: `${argument}${JOURNAL_SUFFIX}` };
    }
    throw new UsageError(
      `${argument} is neither an import's input nor its journal: no such file. Give the input file you imported, or its journal.`,
    );
  }
  const location = await journalOfInput(argument, undefined, cwd);
  if (!(await isFile(location.path))) {
    throw new UsageError(
      `${argument} has no journal (expected ${location.shown}): it was never imported from this path. If its import used --journal, give that journal instead.`,
    );
  }
  return location;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Whether the file's first line is a journal record (an input's first line never is). */
async function looksLikeJournal(path: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch {
    return false;
  }
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.toString('utf8', 0, bytesRead);
    const end = text.indexOf('\n');
    if (end === -1) return false;
    const first = JSON.parse(text.slice(0, end)) as unknown;
    if (typeof first !== 'object' || first === null || Array.isArray(first)) return false;
    const record = first as Record<string, unknown>;
    return typeof record.event === 'string' && typeof record.baseUrl === 'string';
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}
