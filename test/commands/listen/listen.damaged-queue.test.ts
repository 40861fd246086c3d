// A damaged line in the middle of listen's forwarding queue is never dropped silently: listen
// says so on the console, keeps it (once) in <queue>.damaged, and forwards the events around it.
// Through the binary, with a local application as the --forward-to target.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../support/cli.js';
import { type LocalApp, queuedEvent, spawnListen, startApp } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_damaged_queue_key';
let app: LocalApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const entry = queuedEvent;

describe('listen --forward-to with a damaged queue', () => {
  it('warns, keeps the damaged line aside once, and forwards the events around it', async () => {
    const dir = tempDir();
    const queue = join(dir, 'forward-queue.ndjson');
    const damaged = '{"type":"event","seq":2,"body":{"id":2 <- cut by an editor';
    writeFileSync(queue, `${entry(1)}${damaged}\n${entry(3)}`);
    app = await startApp();
    const args = ['--port', '0', '--key', KEY, '--forward-to', app.url, '--queue-dir', dir];
    const first = await spawnListen(args);
    await waitFor(() => app!.received.length === 2, 10_000, 'the two whole events forwarded');
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    expect(first.stderr()).toContain('resuming 2 undelivered events');
    expect(first.stderr()).toContain(
      `warning: a line of the queue could not be read (line 2), so its event was not resumed: kept in ${queue}.damaged;`,
    );
    expect(app.received.map((r) => r.body.toString())).toEqual([
      '{"id":1,"code":"SO-1"}',
      '{"id":3,"code":"SO-3"}',
    ]);
    expect(readFileSync(`${queue}.damaged`, 'utf8')).toBe(`${damaged}\n`);
    expect(statSync(`${queue}.damaged`).mode & 0o777).toBe(0o600);

    // The damaged line is still in the queue (not emptied while it held it): not copied twice.
    writeFileSync(queue, `${damaged}\n${entry(4)}`);
    const second = await spawnListen(args);
    await waitFor(() => app!.received.length === 3, 10_000, 'the third event forwarded');
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(130);
    expect(second.stderr()).toContain('(line 1)');
    expect(readFileSync(`${queue}.damaged`, 'utf8')).toBe(`${damaged}\n`);
  });
});
