/**
 * The inspector's Copy as command: the command line that sends a recorded request again from a
 * terminal (`webhooks replay` of the --log line, else `webhooks trigger` with the downloaded body),
 * the key by its variable, never its value; none when listen read it from a profile, which replay
 * and trigger read too.
 */
import { shellWord } from '../io/quote.js';
import type { EventRecord } from './event-record.js';

export const EXAMPLE_APP_URL = 'http://127.0.0.1:3000/webhooks';

/**
 * The command line that sends the same from a terminal: the key by its variable, never its value.
 * `parts` are its words, an option with its value as one part: the page wraps the line between
 * parts, never inside one; `command` is them joined by spaces.
 */
export function copyCommand(
  record: EventRecord | undefined,
  where: {
    logFile: string | undefined;
    url: string | undefined;
    seq: number;
    program?: string;
    /** The profile listen read the key from; undefined when it came from --key or the variable. */
    keyProfile?: string | undefined;
  },
): { command: string; parts: string[]; note: string } {
  if (record === undefined)
    return {
      command: '',
      parts: [],
      note: 'A refused request was not recorded: there is nothing to send again.',
    };
  const program = (where.program ?? 'ordercli').split(' ');
  const url = where.url ?? EXAMPLE_APP_URL;
  const urlNote =
    where.url === undefined ? ` Replace ${EXAMPLE_APP_URL} with your application's address.` : '';
  const target = [`--url ${shellWord(url)}`, ...keyOption(where.keyProfile)];
  const event = record.event ?? '';
  let parts: string[];
  let note: string;
  if (where.logFile !== undefined && record.event !== null) {
    // --received-at picks this one line of the log (the time is recorded to the millisecond).
    parts = [
      ...program,
      'webhooks',
      'replay',
      shellWord(where.logFile),
      ...target,
      `--event ${shellWord(event)}`,
      `--received-at ${shellWord(record.receivedAt)}`,
    ];
    note = `The same headers and body bytes as Replay.${urlNote}`;
  } else {
    const file = bodyFileName(record, where.seq);
    parts = [
      ...program,
      'webhooks',
      'trigger',
      shellWord(event || 'EVENT'),
      ...target,
      `--data ${shellWord(file)}`,
    ];
    note = `Save the body as ${file} first (Download body). trigger sends the body bytes with the standard headers; with --log, replay would send the recorded headers too.${urlNote}`;
  }
  return { command: parts.join(' '), parts, note };
}

/**
 * How the command gets the key: the variable, or, for a key listen read from a profile, nothing
 * (replay and trigger read the profile's key too) or `--profile <name>` for another than "default".
 */
function keyOption(profile: string | undefined): string[] {
  if (profile === undefined) return ['--key "$ORDERCLI_WEBHOOK_KEY"'];
  return profile === 'default' ? [] : [`--profile ${shellWord(profile)}`];
}

/** The file name Download body gives and the trigger command reads: `<event>-<seq>.json`. */
export function bodyFileName(record: EventRecord, seq: number): string {
  return `${(record.event || 'event').replace(/[^A-Za-z0-9_.-]/g, '_')}-${seq}.json`;
}
