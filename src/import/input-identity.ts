/**
 * The identity of an import's input in the order ledger: what each claim of an import records as
 * its `input`, and what `orders journal`, `orders resolve <input>` and `ledger list --input` look
 * the input's history up by (docs/cli-contract.md, "An input's history").
 *
 * - `--journal <name>` given: that name, relative to the working directory. It names the input's
 *   history (standard input needs one); no file is written there any more.
 * - else the input's path relative to the working directory, with `/` (`exports/orders.csv`); a
 *   symbolic link is followed, so a link and its target are one input; a path outside the working
 *   directory is absolute.
 *
 * The runners of a fleet, each with its own checkout of one repository and run from its root, so
 * see one input. The content is not part of the identity: an input whose failed rows were fixed is
 * the same input, and its earlier runs' orders in doubt stay listed with it.
 */
import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** The suffix of the journal files that ordercli wrote beside an input before the ledger was its only store. */
export const LEGACY_JOURNAL_SUFFIX = '.journal.ndjson';

/** The identity of an input (`-` is standard input, which needs `journal`). */
export function inputIdentity(input: string, journal: string | undefined, cwd: string): string {
  if (journal !== undefined) return relativeName(resolve(cwd, journal), cwd);
  if (input === '-') return '(stdin)';
  return relativeName(realOrGiven(resolve(cwd, input)), cwd);
}

/**
 * What the ledger may name an input's history by: its identity, and the absolute input and
 * journal paths that earlier releases recorded (`input`, `journal`), for `LedgerFilter.inputs`.
 * `target` is an input or a journal name, as `orders journal` and `orders resolve` take it.
 */
export function identitiesOf(target: string, cwd: string): string[] {
  const given = resolve(cwd, target);
  const real = realOrGiven(given);
  const names = new Set([relativeName(given, cwd), relativeName(real, cwd), given, real]);
  if (!target.endsWith(LEGACY_JOURNAL_SUFFIX)) {
    names.add(`${real}${LEGACY_JOURNAL_SUFFIX}`);
    names.add(`${given}${LEGACY_JOURNAL_SUFFIX}`);
  }
  return [...names];
}

/** Where an earlier release kept this import's journal (its file may still be there to fold in). */
export function legacyJournalPath(
  input: string,
  journal: string | undefined,
  cwd: string,
): string | undefined {
  if (journal !== undefined) return resolve(cwd, journal);
  if (input === '-') return undefined;
  return `${realOrGiven(resolve(cwd, input))}${LEGACY_JOURNAL_SUFFIX}`;
}

function relativeName(path: string, cwd: string): string {
  const fromCwd = relative(realOrGiven(cwd), path);
  if (fromCwd === '' || fromCwd.startsWith('..') || isAbsolute(fromCwd)) return path;
  return fromCwd.split(sep).join('/');
}

/** The real path of a file (links followed), or of its folder when the file does not exist. */
function realOrGiven(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return resolve(realpathSync(dirname(path)), relative(dirname(path), path));
    } catch {
      return path;
    }
  }
}
