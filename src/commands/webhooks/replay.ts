/**
 * `webhooks replay <log.ndjson> --url --key [--event] [--received-at]`: re-sends what `listen --log` recorded,
 * one at a time in file order, each with its original headers and body bytes and the key given
 * (the log never holds one). The whole file is read and checked first: a line that is not a
 * recorded event stops the command before anything is sent.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import {
  CancelledError,
  IncompleteError,
  InputError,
  type InputProblem,
  UsageError,
} from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { describeNetworkError } from '../../core/network-error.js';
import { writeJson } from '../../io/json-output.js';
import { countOf } from '../../io/numbers.js';
import type { IOStreams } from '../../io/streams.js';
import { codeOf, type EventRecord, parseEventLine } from '../../webhooks/event-record.js';
import { answerLine, isAccepted, previewLines } from '../../webhooks/receiver-answer.js';
import { sendRecordedEvent } from '../../webhooks/send-recorded.js';
import type { ReplayFlags } from './index.js';
import { keyToSend, notificationTimeout, receiverUrl } from './send-options.js';

export interface RecordedLine {
  line: number;
  record: EventRecord;
}

/** Reads a log (or a forwarding queue file): its event records, or every problem found. */
export function readRecordedEvents(
  text: string,
  file: string,
): { events: RecordedLine[]; problems: InputProblem[] } {
  const events: RecordedLine[] = [];
  const problems: InputProblem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      problems.push({ file, line: i + 1, message: `not JSON: ${(error as Error).message}` });
      continue;
    }
    // A forwarding queue file also holds delivery marks; they are not events.
    const type = (value as { type?: unknown } | null)?.type;
    if (type === 'delivered' || type === 'rejected') continue;
    const record = parseEventLine(raw);
    if (record === undefined) {
      problems.push({
        file,
        line: i + 1,
        message: 'not an event recorded by listen --log (receivedAt, event, headers, body)',
      });
      continue;
    }
    events.push({ line: i + 1, record });
  }
  return { events, problems };
}

interface ReplayResult {
  line: number;
  event: string;
  code: string | null;
  status: number | null;
  durationMs: number | null;
  error: string | null;
  response: string | null;
}

/** Sends the selected events of the log again, one at a time in file order, and says what each got. */
export async function run(file: string, flags: ReplayFlags, ctx: Context): Promise<void> {
  const { io } = ctx;
  const url = receiverUrl(flags.url);
  const key = await keyToSend(flags.key, ctx, 'webhooks replay');
  const text = await readLog(resolve(ctx.cwd, file), file);
  const { events, problems } = readRecordedEvents(text, file);
  if (problems.length > 0)
    throw new InputError(`${file} has lines that are not recorded events; nothing was sent.`, problems);
  const selected = selectEvents(events, flags, file, io);

  const timeoutMs = await notificationTimeout(ctx);
  const results: ReplayResult[] = [];
  for (const { line, record } of selected) {
    if (ctx.signal.aborted)
      throw new CancelledError(`Interrupted after ${results.length} of ${selected.length} notifications.`);
    const result = await replayOne(line, record, { url, key, timeoutMs, signal: ctx.signal });
    if (result === undefined)
      throw new CancelledError(`Interrupted after ${results.length} of ${selected.length} notifications.`);
    results.push(result);
    if (!ctx.json) printResult(io, result);
  }
  if (ctx.json) writeJson(io, results);
  const failed = results.filter((r) => r.status === null || !isAccepted(r.status));
  if (failed.length > 0) {
    throw new IncompleteError(
      `${failed.length} of ${results.length} notifications were not accepted by ${url.href} (${linesOf(failed)}).`,
      ExitCode.Failure,
    );
  }
  io.err(`Replayed ${countOf(results.length, 'notification')} to ${url.href}: all accepted.\n`);
}

/** `1 event`, `2 events`. */

/** `line 4`, `lines 4, 9`: where the events are in the log. */
function linesOf(events: readonly { line: number }[]): string {
  return `${events.length === 1 ? 'line' : 'lines'} ${events.map((e) => e.line).join(', ')}`;
}

async function readLog(path: string, file: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
    );
  }
}

/** The events --event and --received-at select; none is a usage error. Those without an event are skipped, said on stderr. */
function selectEvents(
  events: RecordedLine[],
  flags: ReplayFlags,
  file: string,
  io: IOStreams,
): RecordedLine[] {
  const withoutEvent = events.filter((e) => e.record.event === null);
  const selected = events.filter(
    (e) =>
      e.record.event !== null &&
      (flags.event === undefined || e.record.event === flags.event) &&
      (flags.receivedAt === undefined || e.record.receivedAt === flags.receivedAt),
  );
  if (selected.length === 0) {
    const what = `${flags.event === undefined ? 'recorded events' : `${flags.event} events`}${flags.receivedAt === undefined ? '' : ` received at ${flags.receivedAt}`}`;
    throw new UsageError(
      `Nothing to replay: ${file} holds ${countOf(events.length, 'event')}, no ${what}; nothing was sent.`,
    );
  }
  if (withoutEvent.length > 0) {
    io.err(
      `Skipping ${countOf(withoutEvent.length, 'event')} recorded without X-WEBHOOK-EVENT (${linesOf(withoutEvent)}).\n`,
    );
  }
  return selected;
}

/** Sends one recorded event again; undefined when interrupted meanwhile. */
async function replayOne(
  line: number,
  record: EventRecord,
  send: { url: URL; key: string; timeoutMs: number; signal: AbortSignal },
): Promise<ReplayResult | undefined> {
  const result: ReplayResult = {
    line,
    event: record.event!,
    code: codeOf(record.body) ?? null,
    status: null,
    durationMs: null,
    error: null,
    response: null,
  };
  try {
    const answer = await sendRecordedEvent(record, { ...send, maxResponseBytes: 64 * 1024 });
    result.status = answer.status;
    result.durationMs = answer.durationMs;
    result.response = answer.bodyText;
  } catch (error) {
    if (send.signal.aborted) return undefined;
    result.error = describeNetworkError(error);
  }
  return result;
}

/** `line 3  sales_order_validated SO-1 -> 200 OK in 12 ms`, and the answer's body when refused. */
function printResult(io: IOStreams, result: ReplayResult): void {
  const about = `${result.event}${result.code ? ` ${result.code}` : ''}`;
  const outcome =
    result.status === null ? `failed: ${result.error}` : answerLine(result.status, result.durationMs ?? 0);
  io.out(`line ${result.line}  ${about} -> ${outcome}\n`);
  if (result.status !== null && !isAccepted(result.status))
    io.out(previewLines(result.response ?? '', '  | '));
}
