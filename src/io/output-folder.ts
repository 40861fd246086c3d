/**
 * The folder of an output file (`--report out/report.csv`, `--rejects`, `schema --output`, `listen
 * --log`, the forwarding queues: `makeFolder`), created when it is missing, as a CI job expects of `out/…` on a fresh runner. A new
 * folder under a private one (no access for group or others, such as a home folder's) is private
 * too (0700); elsewhere it gets the usual mode (0777 less the umask). A folder that cannot be
 * created is bad usage (exit 2), named with the reason in words.
 */
import { constants } from 'node:fs';
import { access, mkdir, open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { errorCode, UsageError } from '../core/errors.js';
import { codeWords, describeCode } from './code-words.js';

/**
 * Creates the missing folders above `path` (resolved against `cwd`). `what` names the output in
 * the message (`the report out/report.csv`); `consequence` ends it (`nothing was sent`).
 */
export async function ensureOutputFolder(
  path: string,
  cwd: string,
  what: string,
  consequence: string,
): Promise<void> {
  const folder = dirname(resolve(cwd, path));
  const existing = await nearestExisting(folder).catch((error: unknown) => {
    throw folderError(what, folder, errorCode(error), consequence);
  });
  if (existing.path === folder && existing.isFolder) return;
  if (!existing.isFolder) {
    const reason = `${existing.path} is a file, not a folder`;
    throw new UsageError(`Cannot create the folder ${folder} for ${what} (${reason}); ${consequence}.`);
  }
  try {
    await mkdir(folder, { recursive: true, mode: newFolderMode(existing.mode) });
  } catch (error) {
    throw folderError(what, folder, errorCode(error), consequence);
  }
}

/**
 * Creates `folder` and what is missing above it, with the mode rule above (0700 under a private
 * folder); the system's error as it is (`listen --log`'s and the queues' AppendLog words it).
 */
export async function makeFolder(folder: string): Promise<void> {
  const existing = await nearestExisting(folder);
  if (existing.path === folder) return;
  await mkdir(folder, { recursive: true, mode: newFolderMode(existing.mode) });
}

/** The mode of a folder made under one of `parentMode`: private under a private one, else 0777 less the umask. */
function newFolderMode(parentMode: number): number {
  return (parentMode & 0o077) === 0 ? 0o700 : 0o777;
}

/** The deepest folder of `path` that exists (the root always does). */
async function nearestExisting(path: string): Promise<{ path: string; isFolder: boolean; mode: number }> {
  for (let current = path; ; current = dirname(current)) {
    const info = await stat(current).catch((error: unknown) => {
      // ENOENT: go up; ENOTDIR: a file on the way, found going up; anything else is said as it is.
      if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
      throw error;
    });
    if (info) return { path: current, isFolder: info.isDirectory(), mode: info.mode };
    if (dirname(current) === current) return { path: current, isFolder: true, mode: 0o755 };
  }
}

function folderError(what: string, folder: string, code: string, consequence: string): UsageError {
  return new UsageError(
    `Cannot create the folder ${folder} for ${what} (${describeCode(code)}); ${consequence}.`,
  );
}

/**
 * Whether an output file could be written, without writing it (a dry run's check of `--report`):
 * an existing file opened for writing and left as it is, or its folder writable. Exit 2 naming the
 * file and the reason in words, as writing it would be.
 */
export async function checkOutputFile(path: string, cwd: string, what: string, consequence: string) {
  const full = resolve(cwd, path);
  try {
    const info = await stat(full).catch(() => undefined);
    if (info) await (await open(full, 'r+')).close();
    else await access(dirname(full), constants.W_OK);
  } catch (error) {
    const code = errorCode(error);
    throw new UsageError(`Cannot write ${what} (${codeWords(code)}); ${consequence}.`);
  }
}
