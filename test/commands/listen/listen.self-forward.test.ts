/**
 * `listen --forward-to` leading back to the listener (issue 31, item 4). Before listening: every
 * spelling of this machine on the receiver's port is refused (exit 2). At run time: what this run
 * forwards carries its hop id, and a request that comes back with it (through an application that
 * re-posts everything it gets) is answered 200 and not forwarded again.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin, tempDir } from '../../support/cli.js';
import { freePort, type HttpAnswer, post, spawnListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_self_forward_test_key_0123456789';

describe('listen --forward-to this listener under another name', () => {
  for (const host of ['0.0.0.0', '[::ffff:127.0.0.1]', '0', 'localhost']) {
    it(`refuses http://${host}:<its port>/ before listening (exit 2)`, async () => {
      const port = await freePort();
      const target = `http://${host}:${port}/`;
      const result = await runBin(['listen', '--port', String(port), '--key', KEY, '--forward-to', target]);
      expect(result.code).toBe(2);
      expect(result.stderr).not.toContain('Ready: listening');
      expect(result.stderr).toMatch(
        new RegExp(
          `--forward-to http://\\S+:${port}/ points at this listener itself \\(.*reaches this machine`,
        ),
      );
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    });
  }

  it('accepts this machine on another port (the application)', async () => {
    const dir = tempDir();
    const listen = await spawnListen([
      '--port',
      '0',
      '--key',
      KEY,
      '--queue-dir',
      dir,
      '--forward-to',
      `http://0.0.0.0:${await freePort()}/`,
    ]);
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
  });
});

describe('listen --forward-to: a loop found at run time', () => {
  let proxy: Server | undefined;
  afterEach(async () => {
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve) ?? resolve(undefined));
    proxy = undefined;
  });

  it('forwards an event once; its return is answered 200, warned about once, and not forwarded again', async () => {
    // The "application": re-posts every request it gets, with all its headers, back to listen.
    const received: Record<string, string | string[] | undefined>[] = [];
    const answersFromListen: HttpAnswer[] = [];
    let listenUrl = '';
    proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        received.push(req.headers);
        const headers: [string, string][] = [];
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          const name = req.rawHeaders[i]!;
          if (!['host', 'connection'].includes(name.toLowerCase()))
            headers.push([name, req.rawHeaders[i + 1]!]);
        }
        answersFromListen.push(await post(listenUrl, Buffer.concat(chunks), headers));
        res.writeHead(200).end('ok\n');
      });
    });
    await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/hooks`;

    const dir = tempDir();
    const listen = await spawnListen([
      '--port',
      '0',
      '--key',
      KEY,
      '--log',
      join(dir, 'events.ndjson'),
      '--forward-to',
      proxyUrl,
    ]);
    listenUrl = listen.url;
    const body = '{"id":1,"code":"SO-2026-000001"}';
    const first = await post(listen.url, body, {
      'content-type': 'application/json',
      'x-webhook-event': 'sales_order_validated',
      'x-webhook-key': KEY,
    });
    expect(first.status).toBe(200);
    // The proxy answers its forward only once listen has answered the return: then all is settled.
    await waitFor(() => /forwarded sales_order_validated SO-2026-000001 \(#1\)/.test(listen.stderr()));
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);

    expect(received).toHaveLength(1);
    expect(received[0]!['x-ordercli-forwarded-by']).toMatch(/^[\w-]{8,}$/);
    expect(answersFromListen.map((a) => a.status)).toEqual([200]);
    const warnings = listen
      .stderr()
      .split('\n')
      .filter((l) => l.includes('forwarding loop'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('came back to it');
    expect(listen.stderr()).toContain('Stopped: 1 accepted');
    expect(listen.stderr()).toContain('forwarded 1, refused by the application 0, none waiting.');
    expect(listen.stdout().trim().split('\n')).toHaveLength(1);
  });
});
