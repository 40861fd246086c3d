/** The current time as ISO 8601 (`2026-11-22T10:00:00.000Z`), for records written in bursts. */

let lastMs = 0;
let lastIso = '';

/** The time now, formatted once per millisecond: journal records and notifications come many a millisecond. */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
