/** File system error codes in a few words, for one-sentence messages (`ENOSPC: no space left on the device`). */
const CODE_WORDS = new Map(
  Object.entries({
    ENOSPC: 'no space left on the device',
    EROFS: 'read-only file system',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EDQUOT: 'disk quota exceeded',
    EFBIG: 'file too large',
    EIO: 'input/output error',
    ENOENT: 'no such file or folder',
    ENOTDIR: 'a part of the path is not a folder',
    EISDIR: 'it is a folder',
  }),
);

/** A few words on a file system error code, for one-sentence messages. */
export function describeCode(code: string): string {
  return CODE_WORDS.get(code) ?? 'file system error';
}

/** `EISDIR: it is a folder` (a message that is not a code as it is). */
export const codeWords = (code: string): string =>
  /^E[A-Z]+$/.test(code) ? `${code}: ${describeCode(code)}` : code;
