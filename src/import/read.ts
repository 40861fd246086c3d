/**
 * Step 1 of the input pipeline: find the file to read and its format. Standard input is copied
 * to a private temporary file first, because an import reads its input twice (validate all,
 * then send) and a pipe can be read only once.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../cli/errors.js';
import type { InputFormat, SourceContext } from './types.js';

/** The name problems give to standard input. */
export const STDIN_NAME = 'stdin';

const FORMAT_BY_EXTENSION: Record<string, InputFormat> = {
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.txt': 'csv',
};

/** `--format` values: the contract's three, and the usual aliases of two of them. */
const FORMAT_NAMES: Record<string, InputFormat> = {
  csv: 'csv',
  tsv: 'csv',
  json: 'json',
  ndjson: 'ndjson',
  jsonl: 'ndjson',
};

/** The format of an input: `--format` when given, else the file's extension. */
export function detectFormat(input: string, format?: string): InputFormat {
  if (format !== undefined) {
    const known = FORMAT_NAMES[format.trim().toLowerCase()];
    if (!known) throw new UsageError(`Unknown format "${format}": use --format csv, json or ndjson.`);
    return known;
  }
  if (input === '-') {
    throw new UsageError(
      'Standard input has no file name to tell its format: pass --format csv, json or ndjson.',
    );
  }
  const extension = extname(input).toLowerCase();
  const known = FORMAT_BY_EXTENSION[extension];
  if (!known) {
    throw new UsageError(
      `Cannot tell the format of ${input} from its extension${extension ? ` "${extension}"` : ''}: name it .csv, .tsv, .txt, .json, .ndjson or .jsonl, or pass --format csv, json or ndjson.`,
    );
  }
  return known;
}

/** A file ready to be read any number of times. */
export interface InputFile {
  /** The name used in problems: the path as given, or `stdin`. */
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
        ? `Cannot read ${input}: there is no such file.`
        : `Cannot read ${input}: ${code ?? (error as Error).message}.`,
    );
  }
  if (!isFile) throw new UsageError(`Cannot read ${input}: it is not a file.`);
  return { file: input, path, remove: async () => undefined };
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

/** The bytes of a file as a stream of chunks (64 KiB: large enough to be fast, small enough to stay lean). */
export function readBytes(path: string): Readable {
  return createReadStream(path, { highWaterMark: 64 * 1024 });
}
