/** Helpers for the input pipeline's tests: input files in a temp folder, sources, problem lines. */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { formatInputProblem, type InputProblem } from '../../src/core/errors.js';
import { openOrderSource } from '../../src/import/source.js';
import type { OrderSource, SourceContext, SourceOptions, SourceOrder } from '../../src/import/types.js';
import { tempDir } from './cli.js';

export const FIXTURES = resolve(import.meta.dirname, '../../fixtures/orders');

/** A context for opening sources: the cwd given (default: a fresh temp folder) and an empty stdin. */
export function sourceContext(
  cwd = tempDir('ordercli-input-'),
  stdin: Readable = emptyStdin(),
): SourceContext {
  return { cwd, io: { stdin }, signal: new AbortController().signal };
}

function emptyStdin(): Readable {
  const stream = new PassThrough();
  stream.end();
  return stream;
}

/** Writes an input file into `dir` (text as UTF-8, or exact bytes) and returns its name. */
export function writeInput(dir: string, name: string, content: string | Buffer): string {
  writeFileSync(join(dir, name), content);
  return name;
}

/** Opens `content` written as `name` in a fresh folder; problems name the file as `name`. */
export async function sourceOf(
  name: string,
  content: string | Buffer,
  options: SourceOptions = {},
): Promise<OrderSource> {
  const ctx = sourceContext();
  writeInput(ctx.cwd, name, content);
  return openOrderSource(name, options, ctx);
}

/** Every order of a source, read once. */
export async function readAll(source: Pick<OrderSource, 'orders'>): Promise<SourceOrder[]> {
  const orders: SourceOrder[] = [];
  for await (const order of source.orders()) orders.push(order);
  return orders;
}

/** Problems as the CLI prints them: `file:line: field: message`. */
export function lines(problems: InputProblem[]): string[] {
  return problems.map(formatInputProblem);
}

/** The InputError (or other error) a promise rejects with. */
export async function rejection(promise: Promise<unknown>): Promise<Error & { problems?: InputProblem[] }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { problems?: InputProblem[] };
  }
  throw new Error('expected the promise to reject');
}
