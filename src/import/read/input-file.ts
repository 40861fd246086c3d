/**
 * Step 1 of the input pipeline: the file to read (its format is found in formats.ts). Standard input is copied
 * to a private temporary file first, because an import reads its input twice (validate all,
 * then send) and a pipe can be read only once.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InputError, UsageError } from '../../core/errors.js';
import { escapeControl } from '../../io/quote.js';
import type { SourceContext } from '../types.js';
import { decodeUtf8, encodingError, type InputKind, Utf8Check } from './encoding.js';
import { formatSize, type InputLimits, orderTextTooLarge } from './limits.js';

/** The name problems give to standard input. */
export const STDIN_NAME = 'stdin';

/** A file ready to be read any number of times. */
export interface InputFile {
  /** The name used in messages and problems: the path as given (control characters escaped), or `stdin`. */
  file: string;
  /** The absolute path to read. */
  path: string;
  /** Removes the private copy of standard input (nothing for a real file); safe to call twice. */
  remove(): Promise<void>;
}

/** Opens a path, or `-` for standard input (copied to a temporary file). */
export async function openInputFile(input: string, ctx: SourceContext): Promise<InputFile> {
  if (input === '-') return copyStdin(ctx);
  const path = resolve(ctx.cwd, input);
  let isFile: boolean;
  try {
    isFile = (await stat(path)).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT'
        ? `Cannot read ${escapeControl(input)}: there is no such file.`
        : `Cannot read ${escapeControl(input)}: ${code ?? (error as Error).message}.`,
    );
  }
  if (!isFile) throw new UsageError(`Cannot read ${escapeControl(input)}: it is not a file.`);
  // `file` names it in messages: a path's line breaks and escape sequences never reach a terminal raw.
  return { file: escapeControl(input), path, remove: async () => undefined };
}

async function copyStdin(ctx: SourceContext): Promise<InputFile> {
  const dir = await mkdtemp(join(tmpdir(), 'ordercli-stdin-'));
  const path = join(dir, 'input');
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    await pipeline(ctx.io.stdin, createWriteStream(path, { mode: 0o600 }), { signal: ctx.signal });
  } catch (error) {
    await remove();
    throw ctx.signal.aborted && ctx.signal.reason instanceof Error ? ctx.signal.reason : error;
  }
  return { file: STDIN_NAME, path, remove };
}

/** Bytes of a file read at a time (64 KiB: large enough to be fast, small enough to stay lean). */
const CHUNK_BYTES = 64 * 1024;

/**
 * The bytes of a text input as a stream of chunks, each checked to be UTF-8 before it is passed
 * on: an input in another encoding fails the stream with an InputError naming `file` and the line.
 */
export function readBytes(path: string, file: string, kind: InputKind): Readable {
  return Readable.from(checkedChunks(path, file, kind), { objectMode: false });
}

async function* checkedChunks(path: string, file: string, kind: InputKind): AsyncGenerator<Buffer> {
  const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES });
  const check = new Utf8Check();
  try {
    for await (const chunk of stream) {
      const problem = check.push(chunk as Buffer);
      if (problem) throw encodingError(problem, file, await lineAt(path, problem.offset), kind);
      yield chunk as Buffer;
    }
    const problem = check.end();
    if (problem) throw encodingError(problem, file, await lineAt(path, problem.offset), kind);
  } finally {
    stream.destroy();
  }
}

/** The 1-based line of a byte offset of a file (read again from its start: only for an error). */
async function lineAt(path: string, offset: number): Promise<number> {
  let line = 1;
  if (offset === 0) return line;
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES, end: offset - 1 })) {
    const bytes = chunk as Buffer;
    for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) line++;
  }
  return line;
}

/**
 * The whole text of an input that holds one order (`orders create --file`): a file or standard
 * input, refused without reading it all when it is larger than an order may be, and refused when
 * it is not UTF-8.
 */
export async function readOrderText(
  input: string,
  ctx: SourceContext,
  limits: InputLimits,
): Promise<{ file: string; text: string }> {
  // The name messages give it: a path's line breaks and escape sequences never reach a terminal raw.
  const file = input === '-' ? STDIN_NAME : escapeControl(input);
  const tooLarge = () =>
    new InputError(`${file} is larger than ${formatSize(limits.maxOrderBytes)}; nothing was sent.`, [
      { file, message: orderTextTooLarge(limits, 'the file') },
    ]);
  let bytes: Buffer;
  if (input === '-') {
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of ctx.io.stdin) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      length += buffer.length;
      if (length > limits.maxOrderBytes) {
        ctx.io.stdin.destroy();
        throw tooLarge();
      }
      chunks.push(buffer);
    }
    bytes = Buffer.concat(chunks);
  } else {
    const path = resolve(ctx.cwd, input);
    try {
      if ((await stat(path)).size > limits.maxOrderBytes) throw tooLarge();
      bytes = await readFile(path);
    } catch (error) {
      if (error instanceof InputError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(
        `Cannot read ${file}: ${code === 'ENOENT' ? 'there is no such file' : code === 'EISDIR' ? 'it is a folder' : (code ?? (error as Error).message)}.`,
      );
    }
  }
  return { file, text: decodeUtf8(bytes, file, 'json') };
}
