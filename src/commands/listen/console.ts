/**
 * What `listen` prints. Events are results (stdout: one line each, or one JSON line with
 * `--json`); rejections, forwarding and notes are diagnostics (stderr). Writes are batched: lines
 * produced in the same turn of the event loop go out in one write, so a burst of notifications
 * costs a few system calls rather than one per event: lines are gathered for up to 30 ms (or
 * 64 KiB) and written together, which a person cannot tell from immediate output. Colours are
 * fixed escape codes chosen once.
 *
 * stdout is written without blocking (`io.outAsync`, one write at a time): a reader that lags
 * (`| jq` on a busy machine) must not stop the receiver from answering. What waits for it is kept,
 * up to MAX_STDOUT_BACKLOG characters; beyond that, event lines are counted instead of printed and a note on
 * stderr says how many (each event is still answered, logged and forwarded as usual).
 */
import type { IOStreams } from '../../io/streams.js';
import { codeOf, summarizeBody } from '../../webhooks/event-record.js';
import type { ForwardAttempt } from '../../webhooks/forward-queue.js';
import type { AcceptedEvent, Rejection } from '../../webhooks/receiver.js';
import { answerLine, previewLines as preview } from '../../webhooks/receiver-answer.js';

/** Above this much pending text a batch is written at once. */
const FLUSH_AT = 64 * 1024;
/** Longest time a line waits to be written. */
const FLUSH_EVERY_MS = 30;
/** Output kept for a stdout reader that lags, at most (characters). */
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

export class ListenConsole {
  private outBuffer = '';
  private errBuffer = '';
  /** stdout text waiting for the write in progress to end. */
  private outBacklog = '';
  private outWriting: Promise<void> | undefined;
  /** Event lines not printed because stdout's reader lagged too far; shown in a note. */
  private unprinted = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly out: Palette;
  private readonly err: Palette;

  constructor(
    private readonly io: IOStreams,
    private readonly json: boolean,
    private readonly maxBacklog = MAX_STDOUT_BACKLOG,
  ) {
    this.out = io.colorEnabled && io.stdoutIsTTY ? COLOURED : PLAIN;
    this.err = io.colorEnabled && io.stderrIsTTY ? COLOURED : PLAIN;
  }

  /** An accepted event, with what `--fetch` and `--exec` found. */
  event(event: AcceptedEvent, followUp?: FollowUpResult): void {
    if (this.json) {
      let line = event.line;
      if (followUp?.fetched || followUp?.exec)
        line = `${line.slice(0, -1)},${JSON.stringify(followUp).slice(1)}`;
      this.write('out', `${line}\n`);
      return;
    }
    const c = this.out;
    const code = codeOf(event.body);
    let text =
      `${c.dim(clock(event.receivedAt))}  ${c.cyan(event.event ?? '(no X-WEBHOOK-EVENT)')}` +
      `${code === undefined ? '' : `  ${c.bold(code)}`}  ${summarizeBody(event.body)}\n`;
    if (followUp?.fetched) text += describeFetch(followUp.fetched, c);
    if (followUp?.exec) text += describeExec(followUp.exec, c);
    this.write('out', text);
  }

  /** An accepted event that `--event` leaves out: a note, so a waiting user sees it came. */
  skipped(event: AcceptedEvent, wanted: string): void {
    const c = this.err;
    this.write(
      'err',
      `${c.dim(`${clock(event.receivedAt)}  ${event.event ?? '(no X-WEBHOOK-EVENT)'} accepted, not shown (--event ${wanted})`)}\n`,
    );
  }

  rejected(rejection: Rejection): void {
    const c = this.err;
    const what = rejection.method ? `${rejection.method} ${rejection.path ?? ''}` : 'connection';
    const event = rejection.event ? ` (${rejection.event})` : '';
    this.write(
      'err',
      `${c.dim(clock(rejection.receivedAt))}  ${c.red(`rejected ${rejection.status}`)}  ${what}${event}: ${rejection.reason}\n`,
    );
  }

  forward(attempt: ForwardAttempt, target: string): void {
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
    this.write('err', text);
  }

  /** A diagnostic line on stderr, in order with the batched lines. */
  note(text: string): void {
    this.write('err', text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Writes what is pending now (stdout's part is handed to a write that may end later: see `drain`). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.outBuffer !== '') {
      const text = this.outBuffer;
      this.outBuffer = '';
      this.writeOut(text);
    }
    if (this.errBuffer !== '') {
      const text = this.errBuffer;
      this.errBuffer = '';
      this.io.err(text);
    }
  }

  /**
   * Writes everything, and resolves once stdout has taken it (for the end of `listen`), or after
   * `timeoutMs` if its reader stopped reading without closing it (a paused `| less`).
   */
  async drain(timeoutMs = 2_000): Promise<void> {
    this.flush();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<'gave up'>((resolve) => {
      timer = setTimeout(() => resolve('gave up'), timeoutMs);
    });
    try {
      while (this.outWriting) {
        if ((await Promise.race([this.outWriting, gaveUp])) === 'gave up') {
          this.write('err', 'note: stdout is not being read: the last events were not all printed\n');
          break;
        }
      }
    } finally {
      clearTimeout(timer);
    }
    this.noteUnprinted();
    this.flush();
  }

  private writeOut(text: string): void {
    if (this.outWriting) {
      if (this.outBacklog.length + text.length > this.maxBacklog) {
        for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) this.unprinted++;
        return;
      }
      this.outBacklog += text;
      return;
    }
    this.outWriting = this.io.outAsync(text).then(() => {
      this.outWriting = undefined;
      this.noteUnprinted();
      const next = this.outBacklog;
      this.outBacklog = '';
      if (next !== '') this.writeOut(next);
    });
  }

  private noteUnprinted(): void {
    if (this.unprinted === 0) return;
    const count = this.unprinted;
    this.unprinted = 0;
    this.write(
      'err',
      `note: stdout was not read fast enough: ${count} line${count === 1 ? '' : 's'} of events not printed (the events were answered, logged and forwarded as usual)\n`,
    );
  }

  private write(stream: 'out' | 'err', text: string): void {
    if (stream === 'out') this.outBuffer += text;
    else this.errBuffer += text;
    if (this.outBuffer.length + this.errBuffer.length >= FLUSH_AT) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), FLUSH_EVERY_MS);
      this.timer.unref();
    }
  }
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
