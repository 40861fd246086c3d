/**
 * Ctrl-C on the long-running commands (`sandbox`, `listen`) stops them cleanly and exits 130, the
 * same whether the binary is run with `node bin/ordercli.js` or through `npx ordercli` (npm runs
 * the bin under `sh -c`; dash, Debian's and Ubuntu's sh, ends itself with the SIGINT it got once
 * ordercli exits, and npm then ends itself the same way, which a shell reports as 130 whatever
 * ordercli returned). Each run gets its own process group and the SIGINT goes to the whole group,
 * as a terminal's Ctrl-C does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { constants } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { releaseEnv, TempDirs } from './support.js';

const dirs = new TempDirs();
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  dirs.cleanup();
});

const KEY = 'whk_ctrl_c_test_key_0123456789abcdef';

interface Interrupted {
  /** The status a shell reports: the exit code, or 128 + the signal's number. */
  status: number;
  stdout: string;
  stderr: string;
  url: string;
}

/** Starts `how ordercli args`, waits for `ready` (which yields the URL), then Ctrl-C. */
async function interrupt(
  how: 'node' | 'npx',
  args: string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv,
): Promise<Interrupted> {
  const [command, prefix] = how === 'node' ? [process.execPath, [BIN]] : ['npx', ['ordercli']];
  const child = spawn(command, [...prefix, ...args], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number>((resolve) =>
    child.on('close', (code, signal) =>
      resolve(code ?? 128 + (constants.signals[signal as NodeJS.Signals] ?? 0)),
    ),
  );
  const url = await waitFor(
    () => {
      const match = ready.exec(stdout + stderr);
      if (match?.[1]) return match[1];
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${how} ordercli ${args.join(' ')} ended before it was ready:\n${stdout}\n${stderr}`);
      return undefined;
    },
    60_000,
    `the ready line of ${how} ordercli ${args.join(' ')}`,
  );
  process.kill(-child.pid!, 'SIGINT');
  return { status: await closed, stdout, stderr, url };
}

/** Whether something still accepts connections at this URL's port. */
function accepting(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe.each(['node', 'npx'] as const)('Ctrl-C through %s', (how) => {
  const env = () => releaseEnv(dirs.make('ordercli-config-'), { NO_COLOR: '1' });

  it('stops the sandbox: the stop message, exit 130, the port closed', async () => {
    const run = await interrupt(
      how,
      ['sandbox', '--port', '0', '--quiet'],
      /Sandbox listening on (http:\S+)[\s\S]*Press Ctrl-C to stop\./,
      env(),
    );
    expect(run.stderr).toContain('Stopping the sandbox.');
    // Its "Try:" line can be typed where it was started: through npx, with npx.
    expect(run.stdout).toContain(`\n  ${how === 'npx' ? 'npx ordercli' : 'ordercli'} --base-url ${run.url} `);
    expect(run.stderr).not.toMatch(/error|Interrupted again/i);
    expect(run.status, run.stderr).toBe(130);
    expect(await accepting(run.url)).toBe(false);
  }, 60_000);

  it('stops listen: the ready line, the summary, exit 130, the port closed', async () => {
    const run = await interrupt(
      how,
      ['listen', '--port', '0', '--key', KEY],
      /Ready: listening on (http:\S+) - X-WEBHOOK-KEY checked \(key from --key, [^)]+\)\. Press Ctrl-C to quit\./,
      env(),
    );
    expect(run.stderr).toContain('Stopped: 0 accepted (0 shown), 0 rejected.');
    expect(run.stderr).not.toMatch(/error|Interrupted again/i);
    expect(run.stdout + run.stderr).not.toContain(KEY);
    expect(run.status, run.stderr).toBe(130);
    expect(await accepting(run.url)).toBe(false);
  }, 60_000);
});
