/**
 * `listen --tunnel` through the built binary, with stand-ins named cloudflared and ngrok on PATH
 * (test/support/tunnels: the real programs' arguments and answers, a loopback proxy as the public
 * side) and the sandbox playing the remote service: the tunnel's address is learnt and subscribed,
 * the sandbox's notification comes through the tunnel, the tunnel stops with listen, a tunnel that
 * dies stops listen with exit 1, a missing program is exit 2 with how to install it.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin, runCli, tempDir, testEnv } from '../../support/cli.js';
import { freePort, spawnListen } from '../../support/listen.js';
import { useSandbox } from '../../support/sandbox.js';
import { standInPath, wrapperStandInPath } from '../../support/tunnels/index.js';
import { waitFor } from '../../support/wait.js';

const ORDER = join(import.meta.dirname, '../../support/fixtures/order.json');
const sandbox = useSandbox({ validationDelayMs: 50 });
let env: Record<string, string>;

beforeEach(() => {
  env = {
    ORDERCLI_BASE_URL: sandbox.url,
    ORDERCLI_TOKEN: sandbox.tokens.full,
    ORDERCLI_CONFIG_DIR: tempDir(),
  };
});

/** Processes a test started through a wrapper tunnel, ended after it if still there. */
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) if (running(pid)) process.kill(pid, 'SIGKILL');
});

/** Whether `pid` is a process that has not ended (Linux: /proc, a zombie counting as ended). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('listen --tunnel', () => {
  it('cloudflared: learns the address, subscribes it, and the sandbox notification arrives through it; Ctrl-C stops the tunnel', async () => {
    const pidFile = join(tempDir(), 'cloudflared.pid');
    const listen = await spawnListen(
      ['--port', '0', '--path', '/hooks', '--tunnel', 'cloudflared', '--subscribe', 'sales_order_validated'],
      {
        ...env,
        PATH: `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}`,
        STANDIN_PIDFILE: pidFile,
      },
    );
    const publicUrl =
      /Tunnel: (http:\/\/127\.0\.0\.1:\d+\/hooks) \(a cloudflared quick tunnel started by listen, stopped with it\)/.exec(
        listen.stderr(),
      )?.[1];
    expect(publicUrl, listen.stderr()).toBeDefined();
    expect(listen.stderr()).toContain(
      `Subscribed ${publicUrl} to sales_order_validated (PUT /api/v1/webhooks: `,
    );
    // The tunnel's own log lines are for --verbose only.
    expect(listen.stderr()).not.toContain('Requesting new quick Tunnel');
    expect(listen.stderr()).toMatch(/X-WEBHOOK-KEY checked \(key from the subscription answer/);

    const created = await runCli(['api', 'POST', '/api/v1/orders', '--data', `@${ORDER}`], { env });
    expect(created.code, created.stderr).toBe(0);
    const { code } = JSON.parse(created.stdout) as { code: string };
    await waitFor(() => listen.stdout().includes(code), 15_000, 'the notification through the tunnel');
    // The sandbox records its delivery once it has read listen's answer, a moment after listen shows the event.
    const delivery = await waitFor(
      () => sandbox.deliveries.find((d) => d.code === code),
      5_000,
      "the sandbox's delivery record",
    );
    expect(delivery).toMatchObject({ status: 200, url: publicUrl });

    const pid = Number(readFileSync(pidFile, 'utf8'));
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    expect(alive(pid)).toBe(false);
  });

  it('a tunnel that dies stops listen with exit 1 and says why', async () => {
    const pidFile = join(tempDir(), 'cloudflared.pid');
    const listen = await spawnListen(
      ['--port', '0', '--key', sandbox.webhookKey, '--tunnel', 'cloudflared'],
      {
        ...env,
        PATH: `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}`,
        STANDIN_PIDFILE: pidFile,
      },
    );
    await waitFor(() => existsSync(pidFile), 10_000, 'the tunnel pid');
    process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    expect(await listen.exited).toBe(1);
    expect(listen.stderr()).toContain(
      'The cloudflared tunnel ended by SIGKILL, so the service can no longer reach this listener: listen stopped.',
    );
  });

  it('a wrapper script giving no address in time: listen exits 1, and the child the wrapper started ends too (its process group)', async () => {
    const childPidFile = join(tempDir(), 'child.pid');
    const result = await runBin(
      ['listen', '--port', '0', '--key', sandbox.webhookKey, '--tunnel', 'cloudflared'],
      {
        env: {
          ...env,
          PATH: `${wrapperStandInPath()}${delimiter}${process.env.PATH}`,
          STANDIN_CHILD_PIDFILE: childPidFile,
          ORDERCLI_TUNNEL_START_TIMEOUT: '1s',
        },
        // Before the fix, the wrapper's child kept listen's pipes from the tunnel open: it never exited.
        timeoutMs: 10_000,
      },
    );
    const childPid = Number(readFileSync(childPidFile, 'utf8'));
    leftovers.push(childPid);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('cloudflared gave no public address within 1 s');
    await waitFor(() => !running(childPid), 5_000, "the wrapper's child to end");
  });

  it("kill -9 of listen ends a wrapper tunnel's child too (the guard ends the process group)", async () => {
    const childPidFile = join(tempDir(), 'child.pid');
    const listen = spawn(
      process.execPath,
      [BIN, 'listen', '--port', '0', '--key', sandbox.webhookKey, '--tunnel', 'cloudflared'],
      {
        env: testEnv({
          ...env,
          PATH: `${wrapperStandInPath()}${delimiter}${process.env.PATH}`,
          STANDIN_CHILD_PIDFILE: childPidFile,
        }),
        stdio: 'ignore',
      },
    );
    const exited = new Promise((resolve) => listen.once('exit', resolve));
    const childPid = await waitFor(
      () => existsSync(childPidFile) && Number(readFileSync(childPidFile, 'utf8')),
      10_000,
      "the wrapper's child pid",
    );
    leftovers.push(childPid);
    expect(running(childPid)).toBe(true);
    listen.kill('SIGKILL');
    await exited;
    await waitFor(() => !running(childPid), 10_000, "the wrapper's child to end after listen was killed");
  });

  it('kill -9 of listen stops its tunnel too (the guard sees its pipe close)', async () => {
    const pidFile = join(tempDir(), 'cloudflared.pid');
    const listen = await spawnListen(
      ['--port', '0', '--key', sandbox.webhookKey, '--tunnel', 'cloudflared'],
      {
        ...env,
        PATH: `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}`,
        STANDIN_PIDFILE: pidFile,
      },
    );
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(alive(pid)).toBe(true);
    listen.child.kill('SIGKILL');
    await listen.exited;
    await waitFor(() => !alive(pid), 10_000, 'the tunnel to stop after listen was killed');
  });

  it("starts the tunnel without ordercli's secrets in its environment (no ORDERCLI_*, no PGPASSWORD)", async () => {
    const envFile = join(tempDir(), 'cloudflared.env.json');
    const path = `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}`;
    const listen = await spawnListen(['--port', '0', '--tunnel', 'cloudflared'], {
      ...env,
      PATH: path,
      ORDERCLI_WEBHOOK_KEY: sandbox.webhookKey,
      ORDERCLI_LEDGER: 'postgres://ordercli:db-password@127.0.0.1:5432/ordercli',
      PGPASSWORD: 'db-password',
      NGROK_AUTHTOKEN: 'the-tunnel-own-token',
      TUNNEL_ORIGIN_CERT: '/tmp/cert.pem',
      STANDIN_ENVFILE: envFile,
    });
    await waitFor(() => existsSync(envFile), 10_000, "the tunnel's environment");
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    const tunnelEnv = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    const names = Object.keys(tunnelEnv);
    expect(names.filter((name) => name.toUpperCase().startsWith('ORDERCLI_'))).toEqual([]);
    expect(names).not.toContain('PGPASSWORD');
    for (const secret of [sandbox.tokens.full, sandbox.webhookKey, 'db-password'])
      expect(JSON.stringify(tunnelEnv)).not.toContain(secret);
    // What the tunnel itself needs stays.
    expect(tunnelEnv.PATH).toBe(path);
    expect(tunnelEnv.NGROK_AUTHTOKEN).toBe('the-tunnel-own-token');
    expect(tunnelEnv.TUNNEL_ORIGIN_CERT).toBe('/tmp/cert.pem');
  });

  it('shows the tunnel output with --verbose, and ngrok works the same way', async () => {
    const web = `127.0.0.1:${await freePort()}`;
    const listen = await spawnListen(
      ['--verbose', '--port', '0', '--key', sandbox.webhookKey, '--tunnel', 'ngrok'],
      {
        ...env,
        PATH: `${standInPath(['ngrok'])}${delimiter}${process.env.PATH}`,
        NGROK_STANDIN_WEB_ADDR: web,
        ORDERCLI_NGROK_API: `http://${web}/api/tunnels`,
      },
    );
    expect(listen.stderr()).toMatch(
      /Tunnel: http:\/\/127\.0\.0\.1:\d+\/ \(ngrok started by listen, stopped with it\)/,
    );
    expect(listen.stderr()).toContain('  [ngrok] {"t":');
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
  });

  it('--subscribe all: one subscription and one line per event the service lists, the key kept in the profile, and a note at the end that they stay', async () => {
    const configDir = env.ORDERCLI_CONFIG_DIR!;
    const available = await runCli(['--json', 'webhooks', 'available'], { env });
    const events = (JSON.parse(available.stdout) as { event: string }[]).map((row) => row.event);
    expect(events.length).toBeGreaterThan(1);
    const listen = await spawnListen(['--port', '0', '--tunnel', 'cloudflared', '--subscribe', 'all'], {
      ...env,
      PATH: `${standInPath(['cloudflared'])}${delimiter}${process.env.PATH}`,
    });
    const lines = listen.stderr().split('\n');
    for (const event of events)
      expect(
        lines.filter((line) => line.startsWith('Subscribed ') && line.includes(` to ${event} (`)),
      ).toHaveLength(1);
    expect(sandbox.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/webhooks')).toHaveLength(
      events.length,
    );
    expect(listen.stderr()).toContain(
      'Saved the key the service returned as webhook-key of profile "default"',
    );
    const config = JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
    expect(config.profiles.default['webhook-key']).toBe(sandbox.webhookKey);
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    expect(listen.stderr()).toMatch(
      /note: http:\/\/127\.0\.0\.1:\d+\/ stays subscribed to .*: the service's interface has no way to remove a subscription/,
    );
    expect(listen.stderr()).not.toContain(sandbox.webhookKey);
  });

  it('--subscribe a,b with --public-url subscribes each, once', async () => {
    const port = await freePort();
    const listen = await spawnListen(
      [
        '--port',
        String(port),
        '--key',
        sandbox.webhookKey,
        '--public-url',
        `http://127.0.0.1:${port}/`,
        '--subscribe',
        'sales_order_validated,sales_order_validated',
        '--subscribe',
        'contact_updated',
      ],
      env,
    );
    const subscribed = listen
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('Subscribed '));
    expect(subscribed).toEqual([
      expect.stringContaining('to sales_order_validated ('),
      expect.stringContaining('to contact_updated ('),
    ]);
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
  });

  it('refuses an event the service does not list before subscribing any (exit 2)', async () => {
    const port = await freePort();
    const result = await runBin(
      [
        'listen',
        '--port',
        String(port),
        '--key',
        sandbox.webhookKey,
        '--public-url',
        `http://127.0.0.1:${port}/`,
        '--subscribe',
        'sales_order_validated,sales_order_shipped',
      ],
      { env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '--subscribe: the service does not list sales_order_shipped (GET /api/v1/webhooks/available lists sales_order_validated, contact_updated, packaging_updated); nothing was subscribed.',
    );
    expect(sandbox.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
  });

  it('refuses a missing program (how to install it), an unknown one, and --public-url beside it, with exit 2', async () => {
    const missing = await runBin(['listen', '--port', '0', '--key', 'k', '--tunnel', 'cloudflared'], {
      env: { ...env, PATH: standInPath([]) },
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      '--tunnel cloudflared: cloudflared is not installed (not found on PATH); install it with your package manager',
    );
    // It never was ready: its error alone, no "Stopped: 0 accepted" summary before it.
    expect(missing.stderr).not.toContain('Stopped:');
    const unknown = await runCli(['listen', '--key', 'k', '--tunnel', 'localtunnel'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--tunnel takes cloudflared or ngrok, not "localtunnel".');
    const both = await runCli(
      ['listen', '--key', 'k', '--tunnel', 'ngrok', '--subscribe', 'x', '--public-url', 'https://a.example/'],
      { env },
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--tunnel gives the public address itself');
    const clear = await runCli(
      ['listen', '--key', 'k', '--subscribe', 'x', '--public-url', 'http://hooks.example.com/'],
      { env },
    );
    expect(clear.code).toBe(2);
    expect(clear.stderr).toContain('--public-url http://hooks.example.com/ is plain http:// on another host');
    expect(sandbox.requests).toHaveLength(0);
  });
});
