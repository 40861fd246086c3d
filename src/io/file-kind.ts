/** What a path that should be a regular file (or a folder) is instead, for one-sentence errors. */
import type { Stats } from 'node:fs';

/** `a folder`, `a pipe (FIFO)`, `a device`, `a socket`, `a file`, or `not a regular file`. */
export function fileKind(info: Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a pipe (FIFO)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  if (info.isFile()) return 'a file';
  return 'not a regular file';
}
