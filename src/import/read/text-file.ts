/** A text file written in order, waiting for the disk when its buffer is full (rejects files). */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

export interface TextFile {
  write(text: string): Promise<void>;
  /** Ends the file once everything written is on its way to the disk. */
  end(): Promise<void>;
}

/** Creates (or replaces) the UTF-8 file at `path`. */
export async function createTextFile(path: string): Promise<TextFile> {
  const stream = createWriteStream(path, { encoding: 'utf8' });
  await once(stream, 'open');
  return {
    async write(text) {
      if (!stream.write(text)) await once(stream, 'drain');
    },
    async end() {
      stream.end();
      await once(stream, 'finish');
    },
  };
}
