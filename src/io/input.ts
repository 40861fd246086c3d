/** Reading whole inputs (stdin, small files) as text. */
import type { Readable } from 'node:stream';

/** Reads a stream to its end as UTF-8 text. */
export async function readStream(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
