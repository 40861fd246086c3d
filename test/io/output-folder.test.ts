// The folders of outputs: created when missing, private (0700) under a private parent, the usual
// mode elsewhere; the same rule for `--report` (ensureOutputFolder) and for the files AppendLog
// keeps (`listen --log`, the forwarding queues: makeFolder). One that cannot be made is named.
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppendLog } from '../../src/io/append-log.js';
import { ensureOutputFolder, makeFolder } from '../../src/io/output-folder.js';
import { tempDir } from '../support/cli.js';

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('output folders', () => {
  it('a new folder under a private one is private; under a shared one it has the usual mode', async () => {
    const shared = tempDir('ordercli-shared-');
    chmodSync(shared, 0o755);
    const umask = process.umask();
    await makeFolder(join(shared, 'a/b'));
    expect(modeOf(join(shared, 'a/b'))).toBe(0o777 & ~umask);
    const mine = tempDir('ordercli-private-');
    chmodSync(mine, 0o700);
    await ensureOutputFolder('out/deep/report.csv', mine, 'the report', 'nothing was sent');
    expect(modeOf(join(mine, 'out'))).toBe(0o700);
    expect(modeOf(join(mine, 'out/deep'))).toBe(0o700);
  });

  it('listen --log in a missing folder: AppendLog makes it with the same rule', async () => {
    const mine = tempDir('ordercli-private-');
    chmodSync(mine, 0o700);
    const log = await AppendLog.open(join(mine, 'logs/events.ndjson'), { what: 'the log events.ndjson' });
    await log.close();
    expect(modeOf(join(mine, 'logs'))).toBe(0o700);
  });

  it('a file in the way is named, with the folder it blocks', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'out'), '');
    await expect(
      ensureOutputFolder('out/r.csv', dir, '--report out/r.csv', 'nothing was sent'),
    ).rejects.toThrow(
      `Cannot create the folder ${join(dir, 'out')} for --report out/r.csv (${join(dir, 'out')} is a file, not a folder); nothing was sent.`,
    );
  });
});
