/**
 * `sandbox --ready-file` through the built binary, as a CI script uses it: start it in the
 * background, wait for the file, connect at once; the file goes when the sandbox stops.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runCli, tempDir, testEnv } from '../../support/cli.js';
import { call } from '../../support/sandbox.js';
import { waitFor } from '../../support/wait.js';

interface Started {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

function spawnSandbox(args: string[], env: Record<string, string> = {}): Started {
  const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', ...args], {
    env: testEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The file's text, or '' while there is none. */
function readIfThere(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

interface ReadyContent {
  url: string;
  pid: number;
  tokens: string[];
  webhookKey: { source: string };
}

/** Polls for the file (the one thing a script can do), failing early if the sandbox exits. */
async function waitForReadyFile(path: string, started: Started): Promise<string> {
  return waitFor(
    () => {
      if (started.child.exitCode !== null) throw new Error(`the sandbox exited: ${started.stderr()}`);
      return existsSync(path) && readFileSync(path, 'utf8');
    },
    20_000,
    `the ready file ${path}`,
  );
}

describe('ordercli sandbox --ready-file', () => {
  it('appears once the port accepts, names no secret, and is removed after SIGINT (exit 130)', async () => {
    const dir = tempDir();
    const path = join(dir, 'sandbox.ready');
    const started = spawnSandbox(['--ready-file', path]);
    try {
      const text = await waitForReadyFile(path, started);
      const ready = JSON.parse(text) as ReadyContent;
      // Connected to at the moment the file is seen: it accepts, no wait in between.
      const answer = await call(ready, 'GET', '/api/v1/packaging_references/401', {
        token: 'sandbox-partner-token',
      });
      expect(answer.status).toBe(200);
      expect(ready).toEqual({
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        pid: started.child.pid,
        tokens: ['full', 'partner'],
        webhookKey: { source: 'generated' },
      });
      expect(Object.keys(ready)).toEqual(['url', 'pid', 'tokens', 'webhookKey']);
      // The banner (printed before the file is written) holds the key; the file does not.
      const key = /webhook key\s+(whk_[0-9a-f]+)/.exec(started.stdout())?.[1];
      expect(key).toBeDefined();
      for (const secret of [key!, 'sandbox-full-token', 'sandbox-partner-token'])
        expect(text).not.toContain(secret);
      // Written through a temporary file renamed into place: nothing else is left in the folder.
      expect(readdirSync(dir)).toEqual(['sandbox.ready']);

      started.child.kill('SIGINT');
      expect(await started.exited).toBe(130);
      expect(existsSync(path)).toBe(false);
      expect(started.stderr()).toContain('Stopping the sandbox.');
    } finally {
      started.child.kill('SIGKILL');
    }
  });

  it('replaces a file left by an earlier run, says where the key comes from, and goes on SIGTERM', async () => {
    const dir = tempDir();
    const path = join(dir, 'ready.json');
    writeFileSync(path, '{"url":"http://127.0.0.1:1","pid":1}\n');
    const fromFlag = spawnSandbox(['--ready-file', path, '--webhook-key', 'whk_from_flag', '--quiet']);
    try {
      const ready = JSON.parse(
        await waitFor(
          () => {
            if (fromFlag.child.exitCode !== null) throw new Error(fromFlag.stderr());
            // The old file is removed before the sandbox listens, the new one renamed into place.
            const text = readIfThere(path);
            return text.includes(`"pid":${fromFlag.child.pid}`) && text;
          },
          20_000,
          'the new ready file',
        ),
      ) as ReadyContent;
      expect(ready.webhookKey).toEqual({ source: 'flag' });
      expect(JSON.stringify(ready)).not.toContain('whk_from_flag');
      fromFlag.child.kill('SIGTERM');
      expect(await fromFlag.exited).toBe(130);
      expect(existsSync(path)).toBe(false);
    } finally {
      fromFlag.child.kill('SIGKILL');
    }

    const fromEnv = spawnSandbox(['--ready-file', path, '--quiet'], { ORDERCLI_WEBHOOK_KEY: 'whk_from_env' });
    try {
      const text = await waitForReadyFile(path, fromEnv);
      expect((JSON.parse(text) as ReadyContent).webhookKey).toEqual({ source: 'env' });
      expect(text).not.toContain('whk_from_env');
      fromEnv.child.kill('SIGINT');
      expect(await fromEnv.exited).toBe(130);
      expect(existsSync(path)).toBe(false);
    } finally {
      fromEnv.child.kill('SIGKILL');
    }
  });

  it('refuses a folder as the ready file (exit 2), before listening', async () => {
    const dir = tempDir();
    const result = await runCli(['sandbox', '--port', '0', '--ready-file', dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--ready-file ${dir} is not a regular file`);
    expect(result.stdout).toBe('');
  });

  it('creates a missing folder for the file; one it cannot create is exit 2, before listening', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a-file'), '');
    const result = await runCli([
      'sandbox',
      '--port',
      '0',
      '--ready-file',
      join(dir, 'a-file', 'ready.json'),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Cannot create the folder ${join(dir, 'a-file')} for the ready file`);
    expect(result.stderr).toContain('the sandbox did not start');
    expect(result.stdout).toBe('');

    const nested = join(dir, 'out', 'ci', 'sandbox.ready');
    const controller = new AbortController();
    const running = runCli(['sandbox', '--port', '0', '--quiet', '--ready-file', nested], {
      signal: controller.signal,
    });
    await waitFor(() => existsSync(nested), 20_000, 'the ready file in the new folder');
    controller.abort();
    expect((await running).code).toBe(130);
    expect(existsSync(nested)).toBe(false);
  });
});
