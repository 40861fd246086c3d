/**
 * `listen --tunnel cloudflared|ngrok`: the tunnels people already use, started (or found) for the
 * receiver's port, and the public address they give learnt without the user copying anything.
 * ordercli runs no relay and downloads nothing: a missing program is a usage error saying how to
 * install it.
 *
 * - cloudflared, a quick tunnel (no account): `cloudflared tunnel --url http://127.0.0.1:<port>
 *   --metrics 127.0.0.1:<metrics>`; the address is the metrics server's `GET /quicktunnel`
 *   (`{"hostname": "…trycloudflare.com"}`, no scheme), else the first `https://…` its log prints.
 * - ngrok: a running agent's local API (`GET http://127.0.0.1:4040/api/tunnels`) is asked first;
 *   a tunnel there that serves this port is used as it is (and left running at the end). Else
 *   `ngrok http <port> --log stdout --log-format json` is started, and its address read from the
 *   same API or its "started tunnel" log line.
 *
 * A tunnel this process started is its child, run under a guard (`GUARD`) in its own process
 * group: the group is stopped with `listen` (SIGTERM, then SIGKILL) however `listen` ends, `kill -9`
 * included, or when no address comes in time, and its ending on its
 * own is reported (`ended`), so that `listen` stops too. Its output is passed to `onOutput` (the
 * console shows it with --verbose only).
 *
 * The tunnel runs with the environment of `listen` less ordercli's secrets (`tunnelEnvironment`):
 * no `ORDERCLI_*` variable (the token, the webhook key, a ledger address that may hold a
 * password) and no `PGPASSWORD`; PATH, HOME and the tunnel's own variables (`TUNNEL_*`,
 * `NGROK_*`) stay.
 *
 * A public address is https; a hostname on the loopback (a stand-in for a tunnel in tests, or a
 * local relay) is taken as plain http, since no quick tunnel ever gives one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { parseDuration } from '../config/duration.js';
import { UsageError } from '../core/errors.js';
import { isLoopbackHost } from '../core/url.js';
import { freeLoopbackPort } from '../io/free-port.js';

export const TUNNEL_KINDS = ['cloudflared', 'ngrok'] as const;
export type TunnelKind = (typeof TUNNEL_KINDS)[number];

/** The ngrok agent's local API, where a running agent lists its tunnels. */
export const NGROK_API = 'http://127.0.0.1:4040/api/tunnels';
/** How long a tunnel may take to give its address. */
const ADDRESS_WAIT_MS = 30_000;
/**
 * For tests only, not in the contract: a shorter wait for the address than 30 s (a duration such
 * as `1s`), so that a test of a tunnel giving none ends soon. Read from the environment of `listen`
 * (the tunnel program never sees it: no `ORDERCLI_*` variable reaches it).
 */
const ADDRESS_WAIT_VARIABLE = 'ORDERCLI_TUNNEL_START_TIMEOUT';
const POLL_MS = 200;
const STOP_GRACE_MS = 3_000;

/**
 * The guard the tunnel program runs under (`node -e GUARD <program> <args>…`): its standard input
 * is a pipe from `listen`, which the kernel closes however `listen` ends, `kill -9` included; then
 * (or on SIGTERM, SIGINT, SIGHUP) it stops the program, SIGTERM then SIGKILL, sooner than `listen`
 * would kill the guard itself. It ends as the program did, with its code or its signal. Without
 * it a tunnel outlived a killed `listen`, its public address still leading to this machine's port.
 *
 * The program runs in its own process group (`detached`), and the guard signals the whole group:
 * a wrapper script's children (`cloudflared` as a script starting the real one) end with it.
 * Before it ends, the guard waits for the group to empty, up to the grace, then SIGKILLs what is
 * left: a child left running kept the guard's output pipes open, and `listen` never exited.
 */
const GUARD = `
const { spawn } = require('node:child_process');
const [program, ...args] = process.argv.slice(1);
const child = spawn(program, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
// Signals the program's process group; false once no process is left in it.
const signalGroup = (signal) => {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
};
let deadline;
const stop = () => {
  if (deadline !== undefined) return;
  deadline = Date.now() + ${STOP_GRACE_MS - 500};
  signalGroup('SIGTERM');
  setTimeout(() => signalGroup('SIGKILL'), ${STOP_GRACE_MS - 500}).unref();
};
process.stdin.on('end', stop).on('error', stop).resume();
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, stop);
child.on('error', (error) => {
  process.stderr.write('cannot start ' + program + ': ' + error.message + '\\n');
  process.exit(127);
});
child.on('exit', (code, signal) => {
  // What the program left in its group (a wrapper's children) ends too, before the guard does.
  stop();
  const end = () => {
    if (code !== null) process.exit(code);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  };
  const check = () => {
    if (!signalGroup(0)) return end();
    if (Date.now() < deadline) return setTimeout(check, 50);
    signalGroup('SIGKILL');
    end();
  };
  check();
});
`;

const INSTALL: Record<TunnelKind, string> = {
  cloudflared:
    'install it with your package manager (brew install cloudflared; winget install Cloudflare.cloudflared; the cloudflared package of pkg.cloudflare.com for apt and yum) or from Cloudflare\'s "Downloads" page of cloudflared (developers.cloudflare.com)',
  ngrok:
    'install it with your package manager (brew install ngrok; choco install ngrok; snap install ngrok) or from ngrok.com/download, then run ngrok config add-authtoken <token> once',
};

export interface TunnelOptions {
  /** The receiver's port on 127.0.0.1. */
  port: number;
  /** Each line the tunnel program prints (for --verbose). */
  onOutput?: (line: string) => void;
  /** PATH to look for the program in (default: the process's). */
  path?: string;
  env?: NodeJS.ProcessEnv;
  /** Stops waiting for the address (Ctrl-C while the tunnel starts). */
  signal?: AbortSignal;
  /** The ngrok agent API to ask (tests). */
  ngrokApi?: string;
}

export interface Tunnel {
  kind: TunnelKind;
  /** The address the service can reach the receiver at. */
  publicUrl: URL;
  /** Whether this process started the program (false: an ngrok agent that was already running). */
  started: boolean;
  /** The process id of the guard the program runs under (see `GUARD`), when this process started it. */
  pid: number | undefined;
  /** Settles when a tunnel this process started ends on its own: how it ended. */
  ended: Promise<string>;
  stop(): Promise<void>;
}

/** Starts (or finds) the tunnel and learns its public address; exit 2 when the program is missing. */
export async function startTunnel(kind: TunnelKind, options: TunnelOptions): Promise<Tunnel> {
  if (kind === 'ngrok') {
    const running = await ngrokTunnelFor(options.port, options.ngrokApi ?? NGROK_API);
    if (running !== undefined) {
      const never = new Promise<string>(() => undefined);
      return { kind, publicUrl: running, started: false, pid: undefined, ended: never, stop: async () => {} };
    }
  }
  const program = findProgram(kind, options.path ?? process.env.PATH ?? '');
  if (program === undefined)
    throw new UsageError(`--tunnel ${kind}: ${kind} is not installed (not found on PATH); ${INSTALL[kind]}.`);
  const env = options.env ?? process.env;
  const waitText = env[ADDRESS_WAIT_VARIABLE];
  const addressWaitMs = waitText ? parseDuration(waitText, { name: ADDRESS_WAIT_VARIABLE }) : ADDRESS_WAIT_MS;
  const metricsPort = kind === 'cloudflared' ? await freeLoopbackPort() : undefined;
  const args =
    kind === 'cloudflared'
      ? ['tunnel', '--url', `http://127.0.0.1:${options.port}`, '--metrics', `127.0.0.1:${metricsPort}`]
      : ['http', String(options.port), '--log', 'stdout', '--log-format', 'json'];
  const child = spawn(process.execPath, ['-e', GUARD, program, ...args], {
    env: tunnelEnvironment(env),
    // The guard's standard input: a pipe nothing is written to, closed when this process ends.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const process_ = watchChild(child, options.onOutput);
  try {
    const publicUrl = await waitForAddress(kind, {
      lines: process_.lines,
      ended: process_.ended,
      signal: options.signal,
      waitMs: addressWaitMs,
      probe: () =>
        kind === 'cloudflared'
          ? cloudflaredAddress(metricsPort!)
          : ngrokTunnelFor(options.port, options.ngrokApi ?? NGROK_API),
    });
    return {
      kind,
      publicUrl,
      started: true,
      pid: child.pid,
      ended: process_.ended,
      stop: () => stopChild(child),
    };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/** Variables never passed to the tunnel besides every `ORDERCLI_*`: secrets other tools read. */
const SECRET_VARIABLES = new Set(['PGPASSWORD']);

/** `env` without ordercli's secrets: every `ORDERCLI_*` variable and `PGPASSWORD` left out. */
export function tunnelEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    const upper = name.toUpperCase();
    if (upper.startsWith('ORDERCLI_') || SECRET_VARIABLES.has(upper)) continue;
    kept[name] = value;
  }
  return kept;
}

/** The executable named `name` in one of PATH's folders. */
export function findProgram(name: string, path: string): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there, or not executable: the next folder.
    }
  }
  return undefined;
}

interface WatchedChild {
  /** Every line printed so far (stdout and stderr). */
  lines: string[];
  ended: Promise<string>;
}

function watchChild(child: ChildProcess, onOutput: ((line: string) => void) | undefined): WatchedChild {
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end).replace(/\r$/, '');
        pending = pending.slice(end + 1);
        lines.push(line);
        onOutput?.(line);
      }
    });
  }
  const ended = new Promise<string>((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      resolve(`could not start (${error.code ?? error.message})`),
    );
    child.once('exit', (code, signal) => resolve(signal ? `ended by ${signal}` : `exited with code ${code}`));
  });
  return { lines, ended };
}

async function waitForAddress(
  kind: TunnelKind,
  watch: {
    lines: string[];
    ended: Promise<string>;
    signal: AbortSignal | undefined;
    /** How long the program may take to give its address. */
    waitMs: number;
    probe: () => Promise<URL | undefined>;
  },
): Promise<URL> {
  let endedHow: string | undefined;
  void watch.ended.then((how) => {
    endedHow = how;
  });
  const deadline = Date.now() + watch.waitMs;
  for (;;) {
    const fromLog = addressInLog(kind, watch.lines);
    if (fromLog !== undefined) return fromLog;
    const asked = await watch.probe();
    if (asked !== undefined) return asked;
    if (endedHow !== undefined) {
      const last = watch.lines
        .filter((line) => line.trim() !== '')
        .slice(-3)
        .join(' | ');
      throw new TunnelError(
        `${kind} ${endedHow} before giving its public address${last ? `: ${last}` : ''}.`,
      );
    }
    if (Date.now() > deadline)
      throw new TunnelError(
        `${kind} gave no public address within ${watch.waitMs / 1000} s; run listen with --verbose to see its output.`,
      );
    await wait(POLL_MS, undefined, { signal: watch.signal });
  }
}

/** A tunnel that could not start or ended: exit 1, the receiver stopped. */
export class TunnelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TunnelError';
  }
}

/** The address a log line gives: cloudflared's `https://….trycloudflare.com`, ngrok's "started tunnel". */
function addressInLog(kind: TunnelKind, lines: string[]): URL | undefined {
  for (const line of lines) {
    if (kind === 'cloudflared') {
      const match = /https:\/\/[a-z0-9-]+\.trycloudflare\.com\b/i.exec(line);
      if (match) return new URL(match[0]);
      continue;
    }
    try {
      const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
      if (entry.msg === 'started tunnel' && typeof entry.url === 'string') return new URL(entry.url);
    } catch {
      // Not a JSON log line.
    }
  }
  return undefined;
}

/** cloudflared's metrics server: `{"hostname": "…"}` once the quick tunnel is up. */
async function cloudflaredAddress(metricsPort: number): Promise<URL | undefined> {
  const body = (await getJson(`http://127.0.0.1:${metricsPort}/quicktunnel`)) as
    | { hostname?: unknown }
    | undefined;
  const hostname = typeof body?.hostname === 'string' ? body.hostname.trim() : '';
  return hostname === '' ? undefined : addressOfHostname(hostname);
}

/** `https://<hostname>/`, or http for a loopback hostname (a stand-in: see the module's comment). */
export function addressOfHostname(hostname: string): URL {
  const url = new URL(`https://${hostname}/`);
  return isLoopbackHost(url.hostname) ? new URL(`http://${hostname}/`) : url;
}

/** The public URL of an ngrok agent's tunnel to this port, if its API answers and has one. */
async function ngrokTunnelFor(port: number, api: string): Promise<URL | undefined> {
  const body = (await getJson(api)) as { tunnels?: unknown } | undefined;
  if (!Array.isArray(body?.tunnels)) return undefined;
  for (const tunnel of body.tunnels as { public_url?: unknown; config?: { addr?: unknown } }[]) {
    const addr = String(tunnel.config?.addr ?? '');
    const portOf = /:(\d+)\/?$/.exec(addr)?.[1] ?? (/^\d+$/.test(addr) ? addr : undefined);
    if (Number(portOf) !== port || typeof tunnel.public_url !== 'string') continue;
    if (tunnel.public_url.startsWith('https://') || tunnel.public_url.startsWith('http://'))
      return new URL(tunnel.public_url);
  }
  return undefined;
}

/** GET a local JSON API; undefined when nothing answers there or the answer is not JSON. */
async function getJson(url: string): Promise<unknown> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    if (!response.ok) return undefined;
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
