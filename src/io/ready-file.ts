/**
 * `--ready-file <path>` of a long-running command (`sandbox`, `listen`): a small JSON file that exists only
 * while the command accepts connections, so that a CI script waits for it instead of sleeping.
 * Checked and cleared before the command listens (a file a `kill -9` left must not say "ready"),
 * written whole once it listens (a temporary file in the same folder, renamed onto the path, so a
 * reader sees no file or all of it), removed when the command ends, however it ends short of
 * `kill -9`.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { access, constants, lstat, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { errorCode, UsageError } from '../core/errors.js';
import { describeCode } from './code-words.js';
import { ensureOutputFolder } from './output-folder.js';

export class ReadyFile {
  private written = false;

  private constructor(readonly path: string) {}

  /**
   * Before listening: creates a missing folder (as for every output file), refuses a path that is
   * not a file, removes a file left by an earlier run, and checks that the folder is writable.
   * `consequence` ends the message of a failure (`the sandbox did not start`); it is exit 2.
   */
  static async prepare(path: string, cwd: string, consequence: string): Promise<ReadyFile> {
    const target = resolve(cwd, path);
    await ensureOutputFolder(target, cwd, `the ready file ${path}`, consequence);
    const found = await lstat(target).catch((error: unknown) => {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw unusable(path, error, consequence);
    });
    if (found && !found.isFile() && !found.isSymbolicLink()) {
      throw new UsageError(
        `--ready-file ${path} is not a regular file (a folder, a device): name a file, such as sandbox.json; ${consequence}.`,
      );
    }
    try {
      if (found) await rm(target, { force: true });
      await access(dirname(target), constants.W_OK);
    } catch (error) {
      throw unusable(path, error, consequence);
    }
    return new ReadyFile(target);
  }

  /** Writes `{url, pid, ...details}` whole, `pid` this process's. A failure is exit 2. */
  async write({ url, ...details }: { url: string; [field: string]: unknown }): Promise<void> {
    const content = { url, pid: process.pid, ...details };
    const temporary = join(
      dirname(this.path),
      `.${basename(this.path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    try {
      await writeFile(temporary, `${JSON.stringify(content)}\n`, { flag: 'wx', mode: 0o644 });
      await rename(temporary, this.path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw unusable(this.path, error, 'stopping');
    }
    this.written = true;
    // A second Ctrl-C exits at once (process.exit), past every cleanup: the file goes then too.
    process.once('exit', this.removeAtExit);
  }

  /** Removes the file, if this run wrote it. */
  async remove(): Promise<void> {
    if (!this.written) return;
    this.written = false;
    process.off('exit', this.removeAtExit);
    await rm(this.path, { force: true });
  }

  private readonly removeAtExit = (): void => {
    rmSync(this.path, { force: true });
  };
}

function unusable(path: string, error: unknown, consequence: string): UsageError {
  return new UsageError(
    `Cannot write --ready-file ${path} (${describeCode(errorCode(error))}): name a file in a folder you can write to; ${consequence}.`,
  );
}
