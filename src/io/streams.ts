/**
 * The process's streams behind one object: commands write through it, never to `process` or
 * `console`, and everything written is redacted. In-memory variants (tests, a command run inside
 * another) are in memory.ts, so that start-up does not load node:stream.
 */
import type { Readable, Writable } from 'node:stream';
import { Redactor } from '../core/redact.js';

export interface IOStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdinIsTTY: boolean;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** Terminal width of stdout (of stderr when only stderr is a terminal; 80 when unknown). */
  readonly columns: number;
  /** Masks tokens and webhook keys in everything written. */
  readonly redactor: Redactor;
  /** Colour on stdout/stderr; decided once the global options are known. */
  colorEnabled: boolean;
  /** `--yes`, CI or non-TTY stdin: never prompt. */
  neverPrompt: boolean;
  /** Writes results to stdout. */
  out(text: string): void;
  /**
   * Writes to stdout without masking secrets: only for what the user asked to see with
   * `--show-secrets`. Everything else goes through `out()`.
   */
  outUnredacted(text: string): void;
  /** Writes progress, warnings and errors to stderr. */
  err(text: string): void;
  /**
   * Writes to stderr without masking secrets: only for a secret the terminal user must see to use
   * it (the inspector's address). Everything else goes through `err()`.
   */
  errUnredacted(text: string): void;
  /** Whether an interactive prompt can be shown. */
  canPrompt(): boolean;
}

/** IOStreams over any three Node streams: the process's (processIO()), or those of src/io/memory.ts. */
export class NodeStreamsIO implements IOStreams {
  colorEnabled = false;
  neverPrompt = false;

  constructor(
    readonly stdin: Readable,
    readonly stdout: Writable,
    readonly stderr: Writable,
    readonly stdinIsTTY: boolean,
    readonly stdoutIsTTY: boolean,
    readonly stderrIsTTY: boolean,
    private readonly width: () => number,
    /** Shared with the IO this one writes into (prefixedIO): a secret masked in one is in both. */
    readonly redactor: Redactor = new Redactor(),
  ) {}

  get columns(): number {
    return this.width();
  }

  out(text: string): void {
    this.stdout.write(this.redactor.redact(text));
  }

  outUnredacted(text: string): void {
    this.stdout.write(text);
  }

  err(text: string): void {
    this.stderr.write(this.redactor.redact(text));
  }

  errUnredacted(text: string): void {
    this.stderr.write(text);
  }

  canPrompt(): boolean {
    return !this.neverPrompt && this.stdinIsTTY && this.stdoutIsTTY;
  }
}

/** The real process streams. */
export function processIO(): IOStreams {
  // A reader that stops early (`ordercli … | head`) closes the pipe: drop the rest quietly.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  return new NodeStreamsIO(
    process.stdin,
    process.stdout,
    process.stderr,
    Boolean(process.stdin.isTTY),
    Boolean(process.stdout.isTTY),
    Boolean(process.stderr.isTTY),
    () => process.stdout.columns || process.stderr.columns || 80,
  );
}
