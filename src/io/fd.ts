/**
 * The fs calls on raw file descriptors, as promises: the append-only log and the order ledger work
 * on numbered descriptors (O_APPEND, O_DSYNC, one descriptor read and written) that fs/promises'
 * FileHandle would wrap in an object per open file.
 */
import { close, fdatasync, fstat, ftruncate, open, read, write } from 'node:fs';
import { promisify } from 'node:util';

export const openFd = promisify(open);
export const readFd = promisify(read);
export const writeFd = promisify(write);
export const fstatFd = promisify(fstat);
export const fdatasyncFd = promisify(fdatasync);
export const ftruncateFd = promisify(ftruncate);
export const closeFd = promisify(close);
