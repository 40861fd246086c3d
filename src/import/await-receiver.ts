/**
 * How `--await validated` receives the `sales_order_validated` notifications: `listen`'s own
 * session (its receiver, X-WEBHOOK-KEY checked, the same answers), on 127.0.0.1 when the service is
 * on this machine, else through `--tunnel` or `--public-url`, subscribed for the run; or the log of
 * a `listen --log` already running (`--await-from`), read from its start and followed.
 */
import { open, stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import type { ApiClient } from '../api/client.js';
import { CancelledError, UsageError } from '../core/errors.js';
import type { Redactor } from '../core/redact.js';
import { isLoopbackHost } from '../core/url.js';
import type { WebhookKeyChoice } from '../core/webhook-key.js';
import { freeLoopbackPort } from '../io/free-port.js';
import { parseEventLine } from '../webhooks/event-record.js';
import type { TunnelKind } from '../webhooks/tunnel.js';
import type { ValidationWaiter } from './await-validation.js';

export const VALIDATED_EVENT = 'sales_order_validated';
const FOLLOW_MS = 200;
/** Past this, a log line is no notification (the receiver takes 1 MiB bodies): its rest is skipped. */
const MAX_LINE_CHARS = 8 << 20;

export interface ReceiveOptions {
  api: ApiClient;
  key: WebhookKeyChoice;
  apiToken: string | undefined;
  redactor: Redactor;
  signal: AbortSignal;
  env: NodeJS.ProcessEnv;
  /** `--await-from <file>`: a running `listen --log`'s file. */
  from?: string | undefined;
  tunnel?: TunnelKind | undefined;
  publicUrl?: URL | undefined;
  /** Says at once what would make every notification fail (a key the service does not use). */
  warn?: ((text: string) => void) | undefined;
  /** The port to receive on (`--await-port`); default: a free one. */
  port?: number | undefined;
}

/** Receiving, ready: `close` ends it and says what stays subscribed at the service. */
export interface Receiving {
  close(): Promise<string | undefined>;
}

/**
 * Exit 2 before anything is sent when notifications could not reach this run: a service on another
 * machine, with no tunnel, no public address and no log to read.
 */
export function checkReachable(
  baseUrl: string,
  options: Pick<ReceiveOptions, 'from' | 'tunnel' | 'publicUrl'>,
) {
  if (options.from !== undefined || options.tunnel !== undefined || options.publicUrl !== undefined) return;
  if (isLoopbackHost(new URL(baseUrl).hostname)) return;
  throw new UsageError(
    `--await validated needs the service at ${baseUrl} to reach this machine with its notifications: add --tunnel cloudflared (or ngrok), --public-url <https address that reaches this machine>, or --await-from <the log of a listen --log that receives them>; nothing was sent.`,
  );
}

export async function startReceiving(options: ReceiveOptions, waiter: ValidationWaiter): Promise<Receiving> {
  if (options.from !== undefined) return followLog(options.from, waiter, options.signal);
  const { runListenSession } = await import('../webhooks/listen-session.js');
  const port = options.port ?? (await freeLoopbackPort());
  const publicUrl =
    options.publicUrl ?? (options.tunnel === undefined ? new URL(`http://127.0.0.1:${port}/`) : undefined);
  let stop!: () => void;
  const until = new Promise<void>((resolve) => {
    stop = resolve;
  });
  let subscribedTo: string | undefined;
  let refused = 0;
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const session = runListenSession({
    host: '127.0.0.1',
    port,
    path: '/',
    verify: true,
    key: options.key,
    apiToken: options.apiToken,
    subscribe: { api: options.api, events: [VALIDATED_EVENT], ...(publicUrl ? { publicUrl } : {}) },
    ...(options.tunnel ? { tunnel: { kind: options.tunnel, env: options.env } } : {}),
    redactor: options.redactor,
    signal: options.signal,
    until,
    on: {
      accepted: (event) => {
        if (event.event === VALIDATED_EVENT || event.event === null)
          waiter.notify(event.body, event.receivedAt);
      },
      rejected: (rejection) => {
        if (rejection.status === 401) refused++;
      },
      forwardAttempt: () => undefined,
      lockWait: () => undefined,
      subscribed: (subscription) => {
        subscribedTo = subscription.publicUrl;
        const mismatch = subscription.keyMismatch;
        if (mismatch)
          options.warn?.(
            `warning: the service answered the subscription with a webhook key (${mismatch.answerFingerprint}) other than the one from ${mismatch.givenSource} (${mismatch.givenFingerprint}): its notifications will be refused (401) and no order validated. Set ORDERCLI_WEBHOOK_KEY to the service's key.\n`,
          );
      },
      ready: () => ready(),
      stopped: () => undefined,
    },
  });
  // A session that fails before it is ready (a refused subscription, a tunnel that does not start)
  // throws its error; one that ends first was interrupted (Ctrl-C).
  const ended = session.then(() => Promise.reject(new CancelledError()));
  ended.catch(() => undefined);
  await Promise.race([isReady, ended]);
  return {
    async close() {
      stop();
      await session.catch(() => undefined);
      const notes = [];
      if (refused > 0)
        notes.push(
          `${refused} notification${refused === 1 ? ' was' : 's were'} refused for a wrong or missing X-WEBHOOK-KEY: set ORDERCLI_WEBHOOK_KEY to the key the service sends.`,
        );
      if (subscribedTo !== undefined)
        notes.push(
          `${VALIDATED_EVENT} stays subscribed to ${subscribedTo} at the service (the interface has no way to remove a subscription); notifications sent there now find no receiver.`,
        );
      return notes.length === 0 ? undefined : notes.join('\nnote: ');
    },
  };
}

/** Reads a `listen --log` file from its start, then what is appended, until closed. */
async function followLog(path: string, waiter: ValidationWaiter, signal: AbortSignal): Promise<Receiving> {
  const info = await stat(path).catch(() => undefined);
  if (!info?.isFile()) {
    throw new UsageError(
      `--await-from ${path}: no such file; start ordercli listen --log ${path} first (it keeps every notification it accepts there); nothing was sent.`,
    );
  }
  const handle = await open(path, 'r');
  let offset = 0;
  let rest = '';
  let skipping = false;
  // A character cut by the end of a read is completed by the next one, not read as two U+FFFD.
  const decoder = new StringDecoder('utf8');
  const read = async () => {
    for (;;) {
      const { size } = await handle.stat();
      if (size <= offset) return;
      const buffer = Buffer.alloc(Math.min(size - offset, 1 << 20));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      offset += bytesRead;
      let text = decoder.write(buffer.subarray(0, bytesRead));
      if (skipping) {
        // The rest of a line too long to be a notification: passed over up to its end.
        const end = text.indexOf('\n');
        if (end === -1) continue;
        [text, skipping] = [text.slice(end + 1), false];
      }
      const lines = (rest + text).split('\n');
      rest = lines.pop() ?? '';
      if (rest.length > MAX_LINE_CHARS) [rest, skipping] = ['', true];
      for (const line of lines) {
        const record = line.trim() === '' ? undefined : parseEventLine(line);
        if (record && (record.event === VALIDATED_EVENT || record.event === null))
          waiter.notify(record.body, record.receivedAt);
      }
    }
  };
  await read();
  let reading = Promise.resolve();
  const timer = setInterval(() => {
    if (signal.aborted) return;
    reading = reading.then(read).catch(() => undefined);
  }, FOLLOW_MS);
  return {
    async close() {
      clearInterval(timer);
      await reading;
      await handle.close();
      return undefined;
    },
  };
}
