/** JSON on stdout: one value indented, or an array of any length written a few hundred records at a time. */
import type { IOStreams } from './streams.js';

/** Writes any value as JSON on stdout: indented, one trailing newline. */
export function writeJson(io: IOStreams, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2) ?? 'null'}\n`);
}

const JSON_RECORDS_PER_CHUNK = 500;

/**
 * Writes an array as `JSON.stringify(records, null, 2)` would, a few hundred records at a time, so
 * that a list of 50,000 records never exists as one huge string. With --jq, `io` is the filter of
 * io/jq.ts, which gathers the whole text for jq (jq reads one value at a time).
 */
export function writeJsonArray(io: IOStreams, records: readonly unknown[]): void {
  if (records.length === 0) {
    io.out('[]\n');
    return;
  }
  let chunk = '[\n';
  for (let i = 0; i < records.length; i++) {
    // JSON strings never hold a raw newline, so re-indenting by lines is exact.
    const text = (JSON.stringify(records[i], null, 2) ?? 'null').replace(/\n/g, '\n  ');
    chunk += `  ${text}${i < records.length - 1 ? ',' : ''}\n`;
    if ((i + 1) % JSON_RECORDS_PER_CHUNK === 0) {
      io.out(chunk);
      chunk = '';
    }
  }
  io.out(`${chunk}]\n`);
}
