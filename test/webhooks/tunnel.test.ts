// The tunnels of `listen --tunnel`, with stand-ins named cloudflared and ngrok on PATH that take
// the real programs' arguments and answer as they do (test/support/tunnels): the public address
// learnt from cloudflared's metrics server or log, from ngrok's agent API (started or already
// running); a request to it reaches the local port; a tunnel that dies or never starts is an error.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { startTunnel, type Tunnel, TunnelError } from '../../src/webhooks/tunnel.js';
import { tempDir } from '../support/cli.js';
import { freePort, type LocalApp, post, startApp } from '../support/listen.js';
import { standInPath } from '../support/tunnels/index.js';

let app: LocalApp | undefined;
let tunnel: Tunnel | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await tunnel?.stop();
  tunnel = undefined;
  await app?.close();
  app = undefined;
  for (const server of servers.splice(0)) server.close();
});

const portOf = (url: string) => Number(new URL(url).port);

describe('startTunnel', () => {
  it('cloudflared: the address from the metrics server /quicktunnel; a request reaches the port; stop ends it', async () => {
    app = await startApp();
    tunnel = await startTunnel('cloudflared', { port: portOf(app.url), path: standInPath(['cloudflared']) });
    expect(tunnel.started).toBe(true);
    expect(tunnel.publicUrl.href).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const answer = await post(`${tunnel.publicUrl.href}hooks`, '{"id":1}', {
      'content-type': 'application/json',
    });
    expect(answer.status).toBe(200);
    expect(app.received[0]!.body.toString()).toBe('{"id":1}');
    const pid = tunnel.pid!;
    await tunnel.stop();
    tunnel = undefined;
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it('cloudflared: the https address of its log when the metrics server has none', async () => {
    app = await startApp();
    tunnel = await startTunnel('cloudflared', {
      port: portOf(app.url),
      path: standInPath(['cloudflared']),
      env: { ...process.env, STANDIN_MODE: 'log-only' },
    });
    expect(tunnel.publicUrl.href).toBe('https://able-stand-in-tunnel.trycloudflare.com/');
  });

  it('a tunnel that exits before giving an address is an error naming how it ended and its last lines', async () => {
    const lines: string[] = [];
    const started = startTunnel('cloudflared', {
      port: 9,
      path: standInPath(['cloudflared']),
      env: { ...process.env, STANDIN_MODE: 'exit' },
      onOutput: (line) => lines.push(line),
    });
    await expect(started).rejects.toThrow(TunnelError);
    await expect(started).rejects.toThrow(
      /cloudflared exited with code 1 before giving its public address: .*429 Too Many Requests/,
    );
    expect(lines.some((line) => line.includes('Requesting new quick Tunnel'))).toBe(true);
  });

  it('a tunnel that dies later settles `ended`', async () => {
    app = await startApp();
    const pidFile = join(tempDir(), 'cloudflared.pid');
    tunnel = await startTunnel('cloudflared', {
      port: portOf(app.url),
      path: standInPath(['cloudflared']),
      env: { ...process.env, STANDIN_PIDFILE: pidFile },
    });
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    expect(await tunnel.ended).toBe('ended by SIGKILL');
  });

  it("the tunnel's environment has no ORDERCLI_* variable nor PGPASSWORD; PATH and the tunnel's own variables stay", async () => {
    app = await startApp();
    const envFile = join(tempDir(), 'cloudflared.env.json');
    tunnel = await startTunnel('cloudflared', {
      port: portOf(app.url),
      path: standInPath(['cloudflared']),
      env: {
        ...process.env,
        ORDERCLI_TOKEN: 'api-token',
        ORDERCLI_WEBHOOK_KEY: 'webhook-key',
        ordercli_profile_secret: 'lower-case',
        PGPASSWORD: 'db-password',
        TUNNEL_TRANSPORT_PROTOCOL: 'http2',
        STANDIN_ENVFILE: envFile,
      },
    });
    const seen = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    expect(Object.keys(seen).filter((name) => /^(ORDERCLI_|PGPASSWORD$)/i.test(name))).toEqual([]);
    expect(seen.PATH).toBe(process.env.PATH);
    expect(seen.TUNNEL_TRANSPORT_PROTOCOL).toBe('http2');
  });

  it('a missing program is a usage error saying how to install it', async () => {
    for (const kind of ['cloudflared', 'ngrok'] as const) {
      const started = startTunnel(kind, {
        port: 9,
        path: standInPath([]),
        ngrokApi: 'http://127.0.0.1:9/api/tunnels',
      });
      await expect(started).rejects.toThrow(UsageError);
      await expect(started).rejects.toThrow(
        new RegExp(
          `--tunnel ${kind}: ${kind} is not installed \\(not found on PATH\\); install it with your package manager`,
        ),
      );
    }
  });

  it('ngrok: started when no agent serves the port; the address from its agent API or log', async () => {
    app = await startApp();
    const web = `127.0.0.1:${await freePort()}`;
    tunnel = await startTunnel('ngrok', {
      port: portOf(app.url),
      path: standInPath(['ngrok']),
      env: { ...process.env, NGROK_STANDIN_WEB_ADDR: web },
      ngrokApi: `http://${web}/api/tunnels`,
    });
    expect(tunnel.started).toBe(true);
    const answer = await post(tunnel.publicUrl.href, '{"id":2}', { 'content-type': 'application/json' });
    expect(answer.status).toBe(200);
    expect(app.received).toHaveLength(1);
  });

  it('ngrok: an agent already serving the port is used as it is, and left running', async () => {
    const port = 8787;
    const agent = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          tunnels: [
            { public_url: 'https://other.ngrok-free.app', config: { addr: 'http://localhost:3000' } },
            { public_url: 'https://mine.ngrok-free.app', config: { addr: `http://localhost:${port}` } },
          ],
        }),
      );
    });
    servers.push(agent);
    await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
    const api = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/api/tunnels`;
    // No ngrok on PATH: nothing is started.
    tunnel = await startTunnel('ngrok', { port, path: standInPath([]), ngrokApi: api });
    expect(tunnel).toMatchObject({ started: false, pid: undefined });
    expect(tunnel.publicUrl.href).toBe('https://mine.ngrok-free.app/');
  });
});
