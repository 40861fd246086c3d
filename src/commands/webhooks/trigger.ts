/**
 * `webhooks trigger <event> --url --key [--data <file>]`: one notification, sent by
 * `sendNotification` exactly as the service (and the sandbox) sends it, and the receiver's answer.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../command-support/context.js';
import { CliError, InputError, UsageError } from '../../core/errors.js';
import { ExitCode } from '../../core/exit-codes.js';
import { describeNetworkError } from '../../core/network-error.js';
import { writeJson } from '../../io/json-output.js';
import { codeOf } from '../../webhooks/event-record.js';
import { encodeNotificationBody, sendNotification } from '../../webhooks/notify.js';
import { answerLine, isAccepted, previewLines } from '../../webhooks/receiver-answer.js';
import { sampleBody } from '../../webhooks/sample-events.js';
import type { TriggerFlags } from './index.js';
import { keyToSend, notificationTimeout, receiverUrl } from './send-options.js';

export async function run(event: string, flags: TriggerFlags, ctx: Context): Promise<void> {
  const { io } = ctx;
  if (event.trim() === '' || /[\r\n]/.test(event))
    throw new UsageError('The event name must be one non-empty line.');
  const url = receiverUrl(flags.url);
  const key = await keyToSend(flags.key, ctx, 'webhooks trigger');
  const body = flags.data === undefined ? sampleBody(event) : await readBody(flags.data, ctx);
  if (body === undefined) {
    throw new UsageError(
      `There is no sample body for ${event} (the interface shows only sales_order_validated): pass --data <file>.`,
    );
  }
  const bytes = encodeNotificationBody(body);
  const parsed: unknown = Buffer.isBuffer(bytes) ? JSON.parse(bytes.toString('utf8')) : body;
  const code = codeOf(parsed);
  const about = `${event}${code ? ` ${code}` : ''}`;

  let result: Awaited<ReturnType<typeof sendNotification>>;
  try {
    result = await sendNotification({
      url,
      event,
      key,
      body: bytes,
      timeoutMs: await notificationTimeout(ctx),
      signal: ctx.signal,
      maxResponseBytes: 64 * 1024,
    });
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    throw new CliError(
      `Could not deliver ${about} to ${url.href}: ${describeNetworkError(error)}. Is the receiver running?`,
      ExitCode.Failure,
    );
  }

  if (ctx.json) {
    writeJson(io, {
      url: url.href,
      event,
      code: code ?? null,
      status: result.status,
      durationMs: result.durationMs,
      headers: io.redactor.redactHeaders(result.headers),
      response: result.bodyText,
    });
  } else {
    io.out(`POST ${url.href} (${about}) -> ${answerLine(result.status, result.durationMs)}\n`);
    io.out(previewLines(result.bodyText, '  | '));
  }
  if (!isAccepted(result.status)) {
    throw new CliError(
      `The receiver did not accept ${about} (${answerLine(result.status, result.durationMs)}): see its answer above.`,
      ExitCode.Failure,
    );
  }
}

/** The body of --data (a file or - for stdin), byte for byte, after checking it is JSON. */
async function readBody(data: string, ctx: Context): Promise<Buffer> {
  let bytes: Buffer;
  const source = data === '-' ? 'stdin' : data.replace(/^@/, '');
  if (data === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.io.stdin)
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    bytes = Buffer.concat(chunks);
  } else {
    try {
      bytes = await readFile(resolve(ctx.cwd, source));
    } catch (error) {
      throw new UsageError(
        `Cannot read ${source}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
      );
    }
  }
  try {
    JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new InputError(`The body from ${source} is not JSON; nothing was sent.`, [
      { file: source, message: (error as Error).message },
    ]);
  }
  return bytes;
}
