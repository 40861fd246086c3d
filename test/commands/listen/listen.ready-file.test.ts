/**
 * `listen --ready-file` as a CI script uses it, through the built binary: the script waits for the
 * file, never a sleep, so the file must not exist before the port accepts connections; it holds
 * `{url, pid}` (and `publicUrl` with a tunnel) and is gone once listen has ended, however it ends.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';
import { freePort, type LaunchedBin, launchListen, post } from '../../support/listen.js';
import { standInPath } from '../../support/tunnels/index.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_ready_file_0123456789abcdef';

interface ReadyContent {
  url: string;
  pid: number;
  publicUrl?: string;
}

/** The file once this listen wrote it (a file left by another run names another pid). */
function readyFileOf(listen: LaunchedBin, path: string): Promise<ReadyContent> {
  let exited: number | null | undefined;
  void listen.exited.then((code) => {
    exited = code;
  });
  return waitFor(
    () => {
      if (exited !== undefined) throw new Error(`listen exited (${exited}):\n${listen.stderr()}`);
      if (!existsSync(path)) return undefined;
      const content = JSON.parse(readFileSync(path, 'utf8')) as ReadyContent;
      return content.pid === listen.child.pid && content;
    },
    15_000,
    'the ready file',
    2,
  );
}

const notification = {
  'content-type': 'application/json',
  'x-webhook-event': 'sales_order_validated',
  'x-webhook-key': KEY,
};

describe('listen --ready-file', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`appears only once the port accepts, with url and pid; ${signal} removes it`, async () => {
      const path = join(tempDir(), 'listen.json');
      // What a killed run left behind: never read as this run's.
      writeFileSync(path, '{"url":"http://127.0.0.1:1/","pid":1}\n');
      // A port known in advance (with SIGINT) lets a file written too early name the right address.
      const port = signal === 'SIGINT' ? String(await freePort()) : '0';
      const listen = launchListen(['--port', port, '--key', KEY, '--ready-file', path]);
      const ready = await readyFileOf(listen, path);
      // Connected the moment the file is seen: the port must already accept.
      const answer = await post(ready.url, '{"code":"SO-READY"}', notification);
      expect(answer.status).toBe(200);
      expect(ready).toEqual({
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/),
        pid: listen.child.pid,
      });
      expect(listen.stderr()).toContain(`Ready: listening on ${ready.url} `);
      listen.child.kill(signal);
      expect(await listen.exited).toBe(130);
      expect(existsSync(path)).toBe(false);
      // No temporary file is left beside it either.
      expect(readdirSync(dirname(path))).toEqual([]);
    });
  }

  it('--tunnel: written once the tunnel gave its address, with publicUrl', async () => {
    const path = join(tempDir(), 'listen.json');
    const listen = launchListen(
      ['--port', '0', '--key', KEY, '--tunnel', 'cloudflared', '--ready-file', path],
      {
        ORDERCLI_CONFIG_DIR: tempDir(),
        PATH: `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}`,
        STANDIN_PIDFILE: join(tempDir(), 'cloudflared.pid'),
      },
    );
    const ready = await readyFileOf(listen, path);
    const tunnelLine = /Tunnel: (\S+) \(a cloudflared quick tunnel/.exec(listen.stderr());
    expect(tunnelLine?.[1]).toBeDefined();
    expect(ready.publicUrl).toBe(tunnelLine![1]);
    // The public address reaches this listener.
    expect((await post(ready.publicUrl!, '{"code":"SO-TUNNEL"}', notification)).status).toBe(200);
    await waitFor(() => listen.stdout().includes('SO-TUNNEL'), 10_000, 'the notification through the tunnel');
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    expect(existsSync(path)).toBe(false);
  });

  it('a folder that cannot be made: exit 2 before listening', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'missing'), 'a file where the folder should be\n');
    const path = join(dir, 'missing', 'listen.json');
    const result = await runCli(['listen', '--port', '0', '--key', KEY, '--ready-file', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Cannot create the folder ${join(dir, 'missing')}`);
    expect(result.stderr).not.toContain('Ready: listening');
  });

  it('a folder in its place: exit 2, the folder left alone', async () => {
    const path = join(tempDir(), 'listen.json');
    mkdirSync(path);
    const result = await runCli(['listen', '--port', '0', '--key', KEY, '--ready-file', path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not a regular file');
    expect(existsSync(path)).toBe(true);
  });
});
