/**
 * Helpers for the webhook tests: `listen` run in-process (Ctrl-C through an AbortController) or
 * as the built binary, both waited on until their ready line; raw HTTP requests; a local "app".
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { main } from '../../src/cli/main.js';
import { freeLoopbackPort } from '../../src/io/free-port.js';
import { createTestIO, type TestIO } from '../../src/io/memory.js';
import { formatEventLine } from '../../src/webhooks/event-record.js';
import { BIN, type CliResult, testEnv } from './cli.js';
import { waitFor } from './wait.js';

/** A port that was free a moment ago (for a server that starts later). */
export const freePort = freeLoopbackPort;

export const READY = /Ready: listening on (\S+)/;

export interface RunningListen {
  url: string;
  io: TestIO;
  /** Ctrl-C, then the outcome. */
  stop(): Promise<CliResult>;
  /** The outcome once listen ends by itself (--once). */
  done: Promise<CliResult>;
}

/** Starts `ordercli [globals] listen --port 0 ...args` in-process and waits for its ready line. */
export async function startListen(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; globals?: string[] } = {},
): Promise<RunningListen> {
  const io = createTestIO();
  const abort = new AbortController();
  const hasPort = args.includes('--port');
  const argv = [...(options.globals ?? []), 'listen', ...(hasPort ? [] : ['--port', '0']), ...args];
  let finished: CliResult | undefined;
  const done = main(argv, { io, env: testEnv(options.env), signal: abort.signal, cwd: options.cwd }).then(
    (code) => {
      finished = { code, stdout: io.stdoutText(), stderr: io.stderrText() };
      return finished;
    },
  );
  const url = await waitFor(
    () => {
      if (finished)
        throw new Error(`listen ended before it was ready (exit ${finished.code}):\n${finished.stderr}`);
      return READY.exec(io.stderrText())?.[1];
    },
    10_000,
    'the ready line',
  );
  return {
    url,
    io,
    done,
    stop: async () => {
      abort.abort();
      return done;
    },
  };
}

export interface RunningBin {
  url: string;
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

export type LaunchedBin = Omit<RunningBin, 'url'>;

/** Spawns the built binary's `listen` without waiting for anything (a test that waits for a file). */
export function launchListen(
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): LaunchedBin {
  const child = spawn(process.execPath, [BIN, 'listen', ...args], {
    env: testEnv(env),
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdin.end();
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Spawns the built binary's `listen` and waits for its ready line. */
export async function spawnListen(
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): Promise<RunningBin> {
  const launched = launchListen(args, env, cwd);
  let exitCode: number | null | undefined;
  void launched.exited.then((code) => {
    exitCode = code;
  });
  const url = await waitFor(
    () => {
      if (exitCode !== undefined)
        throw new Error(`listen exited (${exitCode}) before it was ready:\n${launched.stderr()}`);
      return READY.exec(launched.stderr())?.[1];
    },
    15_000,
    'the ready line of the binary',
  );
  return { url, ...launched };
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One POST (or other method) with node:http; headers may repeat when given as an array of pairs. */
export function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> | [string, string][],
  method = 'POST',
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    // A raw header list (to repeat a header) gets no defaults from Node: frame the request here.
    const { host } = new URL(url);
    const list: [string, string][] = Array.isArray(headers) ? headers : Object.entries(headers);
    const names = new Set(list.map(([name]) => name.toLowerCase()));
    if (!names.has('host')) list.unshift(['host', host]);
    if (!names.has('content-length') && !names.has('transfer-encoding')) {
      list.push(['content-length', String(Buffer.byteLength(body))]);
    }
    const req = request(url, { method, headers: list.flat(), agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Writes raw bytes on a socket and returns everything the server answers until it closes. */
export function rawExchange(url: string, bytes: Buffer | string, waitMs = 5_000): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(answer);
    }, waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (answer += c));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.write(bytes);
  });
}

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  url: string;
}

export interface LocalApp {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Decides each answer (default 200). */
  answer: (request: ReceivedRequest, index: number) => number;
  /** Answers this many ms after the request's end (default 0): a slow application. */
  answerDelayMs: number;
  close(): Promise<void>;
}

/** The integrator's application: records what it receives; answers what `answer` says. */
export async function startApp(port = 0): Promise<LocalApp> {
  const app: LocalApp = {
    url: '',
    port: 0,
    received: [],
    answer: () => 200,
    answerDelayMs: 0,
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received = {
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
        url: req.url ?? '/',
      };
      const status = app.answer(received, app.received.length);
      app.received.push(received);
      const answer = () => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'thanks\n' : `app says no (${status})\nsecond line\n`);
      };
      if (app.answerDelayMs > 0) setTimeout(answer, app.answerDelayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  app.port = (server.address() as AddressInfo).port;
  app.url = `http://127.0.0.1:${app.port}/hooks`;
  app.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return app;
}

/** Asserts that no output or file text contains the key. */
export function leaks(key: string, ...texts: string[]): boolean {
  return texts.some((t) => t.includes(key));
}

/** An event line as `listen --log` writes it (order n's `sales_order_validated`, the key redacted). */
export function eventLine(n: number, body = `{"id":${n},"code":"SO-${n}"}`): string {
  return formatEventLine(
    '2026-01-01T00:00:00.000Z',
    'sales_order_validated',
    { 'x-webhook-key': '[redacted]' },
    Buffer.from(body),
    body,
    JSON.parse(body),
  );
}

/** The line of a forwarding queue file that holds event `seq` (and ends with a newline). */
export function queuedEvent(seq: number): string {
  return `{"type":"event","seq":${seq},${eventLine(seq).slice(1)}\n`;
}
