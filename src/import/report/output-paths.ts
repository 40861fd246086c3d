/**
 * An import's outputs (`--report`, `--rejects`) never replace what it reads or keeps: the input,
 * its `--map`, the order ledger, the config file, or another output of the same run.
 * Checked before anything is read or sent, by the files' identity (device and inode, links
 * resolved) when they exist and by their real paths when they do not yet.
 */
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { escapeControl } from '../../io/quote.js';

/** A file the run reads or keeps, or one it writes: what it is, its path, and how it is shown. */
export interface NamedPath {
  /** `the input`, `the journal`, `--report`… */
  what: string;
  path: string;
  /** The path as the user gave it (default: `path`). */
  shown?: string;
  /** A folder whose files are all kept (the ledger): an output anywhere inside it is refused. */
  folder?: boolean;
}

interface Identity {
  /** A device or pipe (`--report /dev/null`): writing to it destroys nothing, whoever else does. */
  special?: boolean;
  /** `dev:ino` of an existing file. */
  inode: string | undefined;
  /** The path with every link resolved (the folder's, for a file that does not exist yet). */
  real: string;
}

async function identityOf(path: string): Promise<Identity> {
  try {
    const info = await stat(path);
    const real = await realpath(path);
    if (!info.isFile() && !info.isDirectory()) return { special: true, inode: undefined, real };
    return { inode: `${info.dev}:${info.ino}`, real };
  } catch {
    // Not there yet: the real path of its folder, and its name.
    let folder = dirname(path);
    try {
      folder = await realpath(folder);
    } catch {
      // A folder that does not exist either: writing will fail on its own, with its own message.
    }
    return { inode: undefined, real: join(folder, basename(path)) };
  }
}

function same(output: Identity, kept: Identity, folder: boolean): boolean {
  if (output.special || kept.special) return false;
  if (folder) return output.real === kept.real || output.real.startsWith(`${kept.real}${sep}`);
  return (output.inode !== undefined && output.inode === kept.inode) || output.real === kept.real;
}

/** Exit 2, naming both, when an output is one of the kept files or another output. */
export async function refuseOverwrites(outputs: NamedPath[], kept: NamedPath[]): Promise<void> {
  const keptIds = await Promise.all(kept.map((entry) => identityOf(resolve(entry.path))));
  const outputIds = await Promise.all(outputs.map((entry) => identityOf(resolve(entry.path))));
  outputs.forEach((output, i) => {
    const k = kept.findIndex((entry, n) => same(outputIds[i]!, keptIds[n]!, Boolean(entry.folder)));
    const o = outputs.findIndex((_, n) => n < i && same(outputIds[i]!, outputIds[n]!, false));
    const target = k >= 0 ? kept[k] : o >= 0 ? outputs[o] : undefined;
    if (!target) return;
    const shown = (entry: NamedPath): string => escapeControl(entry.shown ?? entry.path);
    const error = new UsageError(
      `${output.what} ${shown(output)} is ${target.folder ? 'inside ' : ''}${target.what} ${shown(target)}: writing it would destroy ${target.folder ? 'a file of it' : 'it'}; nothing was read or sent.`,
    );
    error.hint = `name another file for ${output.what}.`;
    throw error;
  });
}
