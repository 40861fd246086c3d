/**
 * dist/ ships source maps: under ORDERCLI_DEBUG the stack trace of an unexpected error names the
 * line of src/ it came from; without it Node never turns source maps on (nothing to read at start-up).
 * The unexpected error is a stdout that throws, put in place before bin/ordercli.js runs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../support/cli.js';
import { TempDirs } from './support.js';

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

/** A module loaded before the binary (NODE_OPTIONS=--import): stdout fails, and the exit says whether maps were on. */
function brokenStdout(): string {
  const dir = dirs.track(tempDir('ordercli-maps-'));
  const file = join(dir, 'broken-stdout.mjs');
  writeFileSync(
    file,
    [
      "process.stdout.write = () => { throw new Error('stdout is broken'); };",
      "process.on('exit', () => process.stderr.write('source maps: ' + process.sourceMapsEnabled + '\\n'));",
      '',
    ].join('\n'),
  );
  return `--import=${pathToFileURL(file).href}`;
}

describe('source maps of the bundle', () => {
  it('under ORDERCLI_DEBUG, the stack trace names lines of src/', async () => {
    const result = await runBin(['--help'], { env: { ORDERCLI_DEBUG: '1', NODE_OPTIONS: brokenStdout() } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ordercli failed unexpectedly: stdout is broken');
    expect(result.stderr).toMatch(/\bsrc\/io\/streams\.ts:\d+:\d+/);
    expect(result.stderr).toMatch(/\bsrc\/cli\/program\.ts:\d+:\d+/);
    expect(result.stderr).toContain('source maps: true');
  });

  it('otherwise, source maps stay off', async () => {
    const result = await runBin(['--help'], { env: { NODE_OPTIONS: brokenStdout() } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ordercli failed unexpectedly: stdout is broken');
    expect(result.stderr).not.toMatch(/\.ts:\d+/);
    expect(result.stderr).toContain('source maps: false');
  });
});
