/**
 * The JUnit XML report (`--report report.xml`) that GitLab, Jenkins, Azure DevOps and CircleCI
 * show as test results: one `testsuite` per input file, one `testcase` per keyed record (an order
 * by its `externalId`, a contact reference by its `contact.externalReference`), with the input
 * line as `file`/`line` attributes and in the text.
 *
 * Testcases are streamed to the file as they come; each suite's start tag (whose counts are known
 * only at the end) is written first with room kept for its final counts, and written again in
 * place when the report is closed. Memory stays flat whatever the number of records.
 */

import { createWriteStream, fstatSync, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { formatInputProblem, type InputProblem, UsageError } from '../../core/errors.js';
import { codeWords } from '../../io/code-words.js';
import { OutputWriteError } from './output-error.js';

/** The outcome of one record, as the reports and the CI annotations show it. */
export type KeyedStatus = 'created' | 'failed' | 'skipped' | 'invalid' | 'unknown' | 'exists' | 'not-sent';

/** One record of an import (an order, a contact reference) and what became of it. */
export interface KeyedResult {
  /** The record's key (`externalId`, `contact.externalReference`); absent when the input lacks it. */
  key: string | undefined;
  status: KeyedStatus;
  /** Why it was not created, or what the ledger knew of it (skipped). */
  message?: string | undefined;
  /** The input as named in problems (the path as given, or `stdin`), and where the record starts. */
  file: string;
  line: number;
  /** Where the record ends (a CSV order spans its rows). */
  endLine?: number | undefined;
  /** An invalid record's problems, each with its own line and field. */
  problems?: InputProblem[] | undefined;
  /** What the service gave a created (or already created) record: `id 10001, code SO-10001`. */
  output?: string | undefined;
  /** `--await validated`: created, but its validation did not arrive (a failure of its testcase). */
  notValidated?: string | undefined;
  /** `--await validated`: when its validation arrived. */
  validatedAt?: string | undefined;
}

export interface JUnitOptions {
  /** The `testsuites` name: what ran (`ordercli orders import`). */
  name: string;
  /** What the key is called, for a record without one: `(no externalId) line 12`. */
  keyName: string;
}

interface SuiteCounts {
  tests: number;
  failures: number;
  skipped: number;
}

interface Suite {
  name: string;
  /** Byte offset of its start tag in the file, and the room kept for it. */
  offset: number;
  room: number;
  timestamp: string;
  startedMs: number;
  counts: SuiteCounts;
}

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';
/** Room kept for a count (15 digits) and a time in seconds (`99999999.999`). */
const WIDEST_COUNTS: SuiteCounts = { tests: 1e15 - 1, failures: 1e15 - 1, skipped: 1e15 - 1 };
const WIDEST_SECONDS = 1e8 - 0.001;

/** Streams a JUnit XML report to a file; `close()` writes the counts and ends it. */
export class JUnitWriter {
  readonly path: string;
  private readonly stream: WriteStream;
  private readonly options: JUnitOptions;
  private readonly suites: Suite[] = [];
  private readonly startedMs = performance.now();
  private readonly rootRoom: number;
  private bytes = 0;
  private error: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(path: string, stream: WriteStream, options: JUnitOptions) {
    this.path = path;
    this.stream = stream;
    this.options = options;
    stream.on('error', (error) => {
      this.error = error;
    });
    this.rootRoom = byteLength(rootTag(options.name, WIDEST_COUNTS, WIDEST_SECONDS));
    this.put(XML_DECLARATION);
    this.put(`${pad(rootTag(options.name, zeroCounts(), 0), this.rootRoom)}\n`);
  }

  /**
   * Creates (or replaces) the report; fails now, before anything is sent, if it cannot, or if it
   * is not a regular file (its counts are written in place at the end, which a pipe cannot take).
   */
  static async open(path: string, options: JUnitOptions): Promise<JUnitWriter> {
    const stream = createWriteStream(path, { flags: 'w' });
    const fd = await new Promise<number>((resolve, reject) => {
      stream.once('open', (opened: number) => resolve(opened));
      stream.once('error', (error) =>
        reject(
          new UsageError(
            `Cannot write the report ${path} (${codeWords((error as NodeJS.ErrnoException).code ?? error.message)}).`,
          ),
        ),
      );
    });
    if (!fstatSync(fd).isFile()) {
      stream.destroy();
      throw new UsageError(
        `--report ${path}: a JUnit report must be a regular file (its counts are written at the end), not a pipe or a device.`,
      );
    }
    return new JUnitWriter(path, stream, options);
  }

  /** Adds one record's testcase, in a suite of its own input file. */
  write(result: KeyedResult): void {
    const suite = this.suiteOf(result.file);
    suite.counts.tests++;
    if (isFailure(result.status) || result.notValidated) suite.counts.failures++;
    else if (result.status !== 'created' && result.status !== 'exists') suite.counts.skipped++;
    this.put(testcase(result, this.options.keyName));
  }

  /** Ends the report and writes the counts; safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.finish();
    return this.closing;
  }

  private async finish(): Promise<void> {
    if (this.suites.length > 0) this.put('  </testsuite>\n');
    this.put('</testsuites>\n');
    await new Promise<void>((resolve) => this.stream.end(() => resolve()));
    if (this.error) throw new OutputWriteError('the report', this.path, this.error);
    const endedMs = performance.now();
    const total = zeroCounts();
    const handle = await open(this.path, 'r+');
    try {
      for (const suite of this.suites) {
        total.tests += suite.counts.tests;
        total.failures += suite.counts.failures;
        total.skipped += suite.counts.skipped;
        const seconds = (endedMs - suite.startedMs) / 1000;
        const tag = pad(suiteTag(suite.name, suite.counts, suite.timestamp, seconds), suite.room);
        await handle.write(tag, suite.offset, 'utf8');
      }
      const root = pad(rootTag(this.options.name, total, (endedMs - this.startedMs) / 1000), this.rootRoom);
      await handle.write(root, byteLength(XML_DECLARATION), 'utf8');
    } finally {
      await handle.close();
    }
  }

  private suiteOf(file: string): Suite {
    const current = this.suites.at(-1);
    if (current?.name === file) return current;
    if (current) this.put('  </testsuite>\n');
    const timestamp = new Date().toISOString().slice(0, 19);
    const suite: Suite = {
      name: file,
      offset: this.bytes + 2,
      room: byteLength(suiteTag(file, WIDEST_COUNTS, timestamp, WIDEST_SECONDS)),
      timestamp,
      startedMs: performance.now(),
      counts: zeroCounts(),
    };
    this.suites.push(suite);
    this.put(`  ${pad(suiteTag(file, suite.counts, timestamp, 0), suite.room)}\n`);
    return suite;
  }

  private put(text: string): void {
    this.bytes += byteLength(text);
    this.stream.write(text);
  }
}

function zeroCounts(): SuiteCounts {
  return { tests: 0, failures: 0, skipped: 0 };
}

function isFailure(status: KeyedStatus): boolean {
  return status === 'failed' || status === 'invalid' || status === 'unknown';
}

function rootTag(name: string, counts: SuiteCounts, seconds: number): string {
  return `<testsuites name="${xmlAttribute(name)}" tests="${counts.tests}" failures="${counts.failures}" errors="0" skipped="${counts.skipped}" time="${seconds.toFixed(3)}">`;
}

function suiteTag(name: string, counts: SuiteCounts, timestamp: string, seconds: number): string {
  return `<testsuite name="${xmlAttribute(name)}" tests="${counts.tests}" failures="${counts.failures}" errors="0" skipped="${counts.skipped}" timestamp="${timestamp}" time="${seconds.toFixed(3)}">`;
}

/** The tag followed by spaces up to `room` bytes: white space between elements, which readers ignore. */
function pad(tag: string, room: number): string {
  return `${tag}${' '.repeat(room - byteLength(tag))}`;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** One record's `testcase`, its line in the attributes and in the text. */
export function testcase(result: KeyedResult, keyName: string): string {
  const name = result.key ?? `(no ${keyName}) line ${result.line}`;
  const where = `${result.file}:${result.line}`;
  const open = `    <testcase name="${xmlAttribute(name)}" classname="${xmlAttribute(result.file)}" file="${xmlAttribute(result.file)}" line="${result.line}">`;
  const message = result.message ?? result.status;
  let body: string;
  if (result.notValidated) {
    const why = `${result.status === 'created' ? 'created' : message}${result.output ? ` (${result.output})` : ''}, but ${result.notValidated}`;
    body = `<failure message="${xmlAttribute(why)}" type="not-validated">${xmlText(`${where}: ${why}`)}</failure>`;
    return `${open}${body}</testcase>\n`;
  }
  const validated = result.validatedAt ? `; validated at ${result.validatedAt}` : '';
  switch (result.status) {
    case 'created':
      body = `<system-out>${xmlText(`${where}: created${result.output ? `: ${result.output}` : ''}${validated}`)}</system-out>`;
      break;
    case 'exists': {
      // The service already has it: what the run is for holds, so the testcase passes.
      const ids = result.output && !message.includes(result.output) ? ` (${result.output})` : '';
      body = `<system-out>${xmlText(`${where}: ${message}${ids}`)}</system-out>`;
      break;
    }
    case 'skipped': {
      // What the ledger says of an order created elsewhere names its id and code already.
      const skipped =
        result.output && !message.includes(result.output) ? `${message} (${result.output})` : message;
      body = `<skipped message="${xmlAttribute(skipped)}">${xmlText(`${where}: ${skipped}`)}</skipped>`;
      break;
    }
    case 'not-sent': {
      // A run that stopped early leaves the rest to the next one; an invalid input says its own condition.
      const notSent = message.includes('the next run') ? message : `${message}; the next run sends it`;
      body = `<skipped message="${xmlAttribute(notSent)}">${xmlText(`${where}: ${notSent}`)}</skipped>`;
      break;
    }
    default: {
      const lines =
        result.problems && result.problems.length > 0
          ? result.problems.map((problem) =>
              formatInputProblem({ ...problem, line: problem.line ?? result.line }),
            )
          : [`${where}: ${message}`];
      body = `<failure message="${xmlAttribute(message)}" type="${result.status}">${xmlText(lines.join('\n'))}</failure>`;
    }
  }
  return `${open}${body}</testcase>\n`;
}

// Characters XML 1.0 does not allow at all (C0 controls but tab, line feed and carriage return;
// U+FFFE, U+FFFF), and C1 controls and DEL, which it allows but a reader's screen may act on:
// written as a visible escape, as the terminal output does.
const TEXT_SPECIAL = /[&<>\r\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g;
const ATTRIBUTE_SPECIAL = /[&<>"\t\n\r\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g;

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  // Always escaped, so that no text ever holds `]]>`.
  '>': '&gt;',
  '"': '&quot;',
  // Escaped in attributes, which a parser would otherwise turn into spaces; `\r` in text too.
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

function escapeOne(char: string): string {
  return ENTITIES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Text content of an element: markup escaped, characters XML cannot hold as visible escapes. */
export function xmlText(text: string): string {
  return text.replace(TEXT_SPECIAL, escapeOne);
}

/** A double-quoted attribute value: as text, plus quotes, tabs and line breaks as references. */
export function xmlAttribute(text: string): string {
  return text.replace(ATTRIBUTE_SPECIAL, escapeOne);
}
