/**
 * The inspector's Copy as command: the command line that sends a recorded request again from a
 * terminal (`webhooks replay` of the --log line, else `webhooks trigger` with the downloaded body),
 * the key by its variable, never its value.
 */
import type { EventRecord } from './event-record.js';

export const EXAMPLE_APP_URL = 'http://127.0.0.1:3000/webhooks';

/** The command line that sends the same from a terminal: the key by its variable, never its value. */
export function copyCommand(
  record: EventRecord | undefined,
  where: {
    logFile: string | undefined;
    url: string | undefined;
    seq: number;
    program?: string;
  },
): { command: string; note: string } {
  const program = where.program ?? 'ordercli';
  if (record === undefined)
    return { command: '', note: 'A refused request was not recorded: there is nothing to send again.' };
  const url = where.url ?? EXAMPLE_APP_URL;
  const urlNote =
    where.url === undefined ? ` Replace ${EXAMPLE_APP_URL} with your application's address.` : '';
  const key = '--key "$ORDERCLI_WEBHOOK_KEY"';
  const event = record.event ?? '';
  if (where.logFile !== undefined && record.event !== null) {
    // --received-at picks this one line of the log (the time is recorded to the millisecond).
    return {
      command: `${program} webhooks replay ${shellQuote(where.logFile)} --url ${shellQuote(url)} ${key} --event ${shellQuote(event)} --received-at ${shellQuote(record.receivedAt)}`,
      note: `The same headers and body bytes as Replay.${urlNote}`,
    };
  }
  const file = bodyFileName(record, where.seq);
  return {
    command: `${program} webhooks trigger ${shellQuote(event || 'EVENT')} --url ${shellQuote(url)} ${key} --data ${shellQuote(file)}`,
    note: `Save the body as ${file} first (Download body). trigger sends the body bytes with the standard headers; with --log, replay would send the recorded headers too.${urlNote}`,
  };
}

/** The file name Download body gives and the trigger command reads: `<event>-<seq>.json`. */
export function bodyFileName(record: EventRecord, seq: number): string {
  return `${(record.event || 'event').replace(/[^A-Za-z0-9_.-]/g, '_')}-${seq}.json`;
}

/** A word as a POSIX shell reads it: unquoted when safe, else in single quotes. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
