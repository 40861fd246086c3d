/**
 * What `listen` prints. Events are results (stdout: one line each, or one JSON line with
 * `--json`); rejections, forwarding and notes are diagnostics (stderr). Colours are fixed escape
 * codes chosen once.
 *
 * A stdout reader that lags (`| jq` on a busy machine, a paused `| less`) must neither stop the
 * receiver nor make memory grow: Node keeps what a pipe has not taken yet, and past
 * MAX_STDOUT_BACKLOG bytes of it event lines are dropped; once the reader catches up (or at the
 * end) one note on stderr says how many. Every event is still answered, logged and forwarded.
 */
import { formatDuration } from '../../config/duration.js';
import type { IOStreams } from '../../io/streams.js';
import { codeOf, summarizeBody } from '../../webhooks/event-record.js';
import type { ForwardAttempt } from '../../webhooks/forward-queue.js';
import { damagedLinesWarning } from '../../webhooks/forward-queue-file.js';
import type { ListenReady, ListenSubscription, ListenTunnel } from '../../webhooks/listen-session.js';
import type { AcceptedEvent, Rejection } from '../../webhooks/receiver.js';
import { answerLine, previewLines as preview } from '../../webhooks/receiver-answer.js';

/** Bytes kept for a stdout reader that lags, at most: past them event lines are dropped. */
export const MAX_STDOUT_BACKLOG = 16 * 1024 * 1024;

export interface FollowUpResult {
  fetched?: { path: string; status?: number; body?: unknown; error?: string };
  exec?: {
    command: string;
    exitCode: number | null;
    signal: string | null;
    durationMs: number;
    output: string;
    error?: string;
  };
}

interface Palette {
  dim: (t: string) => string;
  bold: (t: string) => string;
  green: (t: string) => string;
  red: (t: string) => string;
  yellow: (t: string) => string;
  cyan: (t: string) => string;
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const PLAIN: Palette = {
  dim: String,
  bold: String,
  green: String,
  red: String,
  yellow: String,
  cyan: String,
};
const COLOURED: Palette = {
  dim: sgr(2, 22),
  bold: sgr(1, 22),
  green: sgr(32, 39),
  red: sgr(31, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39),
};

export interface ListenConsoleOptions {
  /** One JSON line per event on stdout (`--json`). */
  json: boolean;
  /** The `--log` file, named in the note about dropped lines. */
  logFile?: string;
  /** Bytes waiting for stdout's reader past which event lines are dropped. */
  maxBacklog?: number;
}

export class ListenConsole {
  /** Event lines dropped since the last note about them. */
  private dropped = 0;
  /** Whether the forwarding loop warning was shown (once per run). */
  private loopWarned = false;
  private readonly out: Palette;
  private readonly err: Palette;
  private readonly maxBacklog: number;

  constructor(
    private readonly io: IOStreams,
    private readonly options: ListenConsoleOptions,
  ) {
    this.out = io.colorEnabled && io.stdoutIsTTY ? COLOURED : PLAIN;
    this.err = io.colorEnabled && io.stderrIsTTY ? COLOURED : PLAIN;
    this.maxBacklog = options.maxBacklog ?? MAX_STDOUT_BACKLOG;
  }

  /** An accepted event, with what `--fetch` and `--exec` found. */
  event(event: AcceptedEvent, followUp?: FollowUpResult): void {
    if (this.options.json) {
      let line = event.line;
      if (followUp?.fetched || followUp?.exec)
        line = `${line.slice(0, -1)},${JSON.stringify(followUp).slice(1)}`;
      this.print(`${line}\n`);
      return;
    }
    const c = this.out;
    const code = codeOf(event.body);
    let text =
      `${c.dim(clock(event.receivedAt))}  ${c.cyan(event.event ?? '(no X-WEBHOOK-EVENT)')}` +
      `${code === undefined ? '' : `  ${c.bold(code)}`}  ${summarizeBody(event.body)}\n`;
    if (followUp?.fetched) text += describeFetch(followUp.fetched, c);
    if (followUp?.exec) text += describeExec(followUp.exec, c);
    this.print(text);
  }

  /** An event `--events` leaves out (answered 200): a note, so a waiting user sees it came. */
  ignored(event: AcceptedEvent): void {
    const c = this.err;
    this.io.err(
      `${c.dim(`${clock(event.receivedAt)}  ${event.event ?? '(no X-WEBHOOK-EVENT)'} ignored (not in --events): answered 200, not logged nor forwarded`)}\n`,
    );
  }

  /**
   * An event this run forwarded came back to it (answered 200, dropped): one warning per run, as
   * the loop would repeat it for every event.
   */
  looped(event: string | null): void {
    if (this.loopWarned) return;
    this.loopWarned = true;
    this.io.err(
      `warning: ${event ?? 'an event'} forwarded by this listener came back to it (a forwarding loop: --forward-to leads back here); answered 200, not logged nor forwarded again, and the same for any later one.\n`,
    );
  }

  rejected(rejection: Rejection): void {
    const c = this.err;
    const what = rejection.method ? `${rejection.method} ${rejection.path ?? ''}` : 'connection';
    const event = rejection.event ? ` (${rejection.event})` : '';
    this.io.err(
      `${c.dim(clock(rejection.receivedAt))}  ${c.red(`rejected ${rejection.status}`)}  ${what}${event}: ${rejection.reason}\n`,
    );
  }

  forward(attempt: ForwardAttempt): void {
    const { target } = attempt;
    const c = this.err;
    const about = `${attempt.event ?? 'event'}${attempt.code ? ` ${attempt.code}` : ''} (#${attempt.seq})`;
    const answer =
      attempt.status !== undefined ? answerLine(attempt.status, attempt.durationMs ?? 0) : attempt.error;
    let text: string;
    if (attempt.outcome === 'delivered') {
      text = `${c.dim(clock())}  ${c.green('forwarded')} ${about} → ${target}: ${answer}\n`;
    } else if (attempt.outcome === 'rejected') {
      text =
        `${c.dim(clock())}  ${c.red('forward refused')} ${about} → ${target}: ${answer}; not retried ` +
        `(a 4xx is final; re-send it with ordercli webhooks replay once the application is fixed)\n`;
    } else {
      // While the application stays down, attempts 1, 2, 4, 8, ... are shown: enough to follow, not a flood.
      if ((attempt.attempt & (attempt.attempt - 1)) !== 0) return;
      const wait = attempt.retryInMs !== undefined ? `; retrying in ${formatDelay(attempt.retryInMs)}` : '';
      text = `${c.dim(clock())}  ${c.yellow('forward failed')} ${about} → ${target}: ${answer} (attempt ${attempt.attempt})${wait}\n`;
    }
    if (attempt.responseText) text += preview(attempt.responseText, '    | ');
    this.io.err(text);
  }

  /** A diagnostic line on stderr. */
  note(text: string): void {
    this.io.err(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** What the subscription of `listen --subscribe` answered, and what is wrong with it. */
  /** `--tunnel`: the public address, and whether listen owns the tunnel. */
  tunnel(tunnel: ListenTunnel): void {
    const owner = tunnel.started
      ? `${tunnel.kind === 'cloudflared' ? 'a cloudflared quick tunnel' : 'ngrok'} started by listen, stopped with it`
      : 'the ngrok agent already running, left running';
    this.io.err(`Tunnel: ${tunnel.publicUrl} (${owner})\n`);
  }

  /** The subscriptions made by this run, for the note at its end. */
  readonly subscriptions: ListenSubscription[] = [];

  subscribed(subscription: ListenSubscription, path: string): void {
    const { io } = this;
    this.subscriptions.push(subscription);
    io.err(
      `Subscribed ${subscription.publicUrl} to ${subscription.event} (PUT /api/v1/webhooks: ${subscription.status}).\n`,
    );
    if (subscription.keySavedIn)
      io.err(
        `Saved the key the service returned as ${subscription.keySavedIn}: webhooks trigger and the next listen use it.\n`,
      );
    if (subscription.pathMismatch) {
      io.err(
        `warning: --public-url has the path ${new URL(subscription.publicUrl).pathname} but listen serves ${path}: notifications would get 404.\n`,
      );
    }
    const mismatch = subscription.keyMismatch;
    if (mismatch) {
      io.err(
        `warning: the service's key for this subscription (${mismatch.answerFingerprint}) differs from the key from ${mismatch.givenSource} (${mismatch.givenFingerprint}): its notifications will be refused with 401.\n`,
      );
    }
  }

  /** The lines before the first event, ending with the one a script waits for ("Ready: listening on"). */
  ready(ready: ListenReady, waiting: { what: string; waitMs: number | undefined } | undefined): void {
    const { io } = this;
    if (ready.logFile) io.err(`Logging accepted events to ${ready.logFile}\n`);
    for (const forwarding of ready.forwarding) {
      const resumed =
        forwarding.resumed > 0
          ? `; resuming ${forwarding.resumed} undelivered event${forwarding.resumed === 1 ? '' : 's'}`
          : '';
      // One target for every event keeps the short form; with routes, each line says what goes there.
      const what = forwarding.receives === 'every event' ? '' : ` ${forwarding.receives}`;
      io.err(`Forwarding${what} to ${forwarding.target} (queue ${forwarding.queueFile}${resumed})\n`);
      if (forwarding.damaged) io.err(`warning: ${damagedLinesWarning(forwarding.damaged)}\n`);
    }
    if (waiting) {
      const until = waiting.waitMs === undefined ? '' : ` (up to ${formatDuration(waiting.waitMs)})`;
      io.err(`Waiting for ${waiting.what}${until}.\n`);
    }
    // The address holds the inspector's secret: the one place it is shown (it is masked elsewhere).
    if (ready.inspectorUrl)
      io.errUnredacted(`Inspector: ${ready.inspectorUrl} (open it in a browser on this machine)\n`);
    const checked = ready.checkedKey
      ? `X-WEBHOOK-KEY checked (key from ${ready.checkedKey.source}, ${ready.checkedKey.fingerprint})`
      : 'X-WEBHOOK-KEY NOT checked (--no-verify)';
    io.err(`Ready: listening on ${ready.url} - ${checked}. Press Ctrl-C to quit.\n`);
  }

  /** At the end: the note about lines dropped since the last one, if any. */
  close(): void {
    this.io.stdout.off('drain', this.noteDropped);
    this.noteDropped();
  }

  /** Writes event lines to stdout, or drops them while its reader lags too far behind. */
  private print(text: string): void {
    const stdout = this.io.stdout;
    if (stdout.writableLength > this.maxBacklog) {
      if (this.dropped++ === 0) stdout.once('drain', this.noteDropped);
      return;
    }
    this.io.out(text);
  }

  private readonly noteDropped = (): void => {
    if (this.dropped === 0) return;
    const count = this.dropped;
    this.dropped = 0;
    const kept = this.options.logFile
      ? `${this.options.logFile} has them all`
      : 'they were answered and forwarded as usual; --log keeps every event';
    this.io.err(
      `note: stdout was not read fast enough: ${count} event${count === 1 ? ' was' : 's were'} not printed (${kept}).\n`,
    );
  };
}

/** `HH:MM:SS.mmm` (UTC, as the sandbox prints). */
function clock(iso: string = new Date().toISOString()): string {
  return iso.slice(11, 23);
}

function formatDelay(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function describeFetch(fetched: NonNullable<FollowUpResult['fetched']>, c: Palette): string {
  if (fetched.error !== undefined) return `    ${c.yellow('fetch')} GET ${fetched.path}: ${fetched.error}\n`;
  const json = JSON.stringify(fetched.body, null, 2) ?? 'null';
  return `    ${c.dim(`fetch GET ${fetched.path}: ${fetched.status}`)}\n${preview(json, '    ', 60)}`;
}

function describeExec(exec: NonNullable<FollowUpResult['exec']>, c: Palette): string {
  const status =
    exec.error !== undefined
      ? c.red(`could not run: ${exec.error}`)
      : exec.signal
        ? c.red(`killed by ${exec.signal}`)
        : exec.exitCode === 0
          ? c.green('exit 0')
          : c.red(`exit ${exec.exitCode}`);
  return `    ${c.dim('exec')} ${exec.command}: ${status} ${c.dim(`(${exec.durationMs} ms)`)}\n${preview(exec.output, '    | ', 20)}`;
}
