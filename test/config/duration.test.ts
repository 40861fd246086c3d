import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import type { CommandUnknownOpts as Command } from '../../src/command-support/commander.js';
import { Context } from '../../src/command-support/context.js';
import { sandboxOptions } from '../../src/commands/sandbox/sandbox.js';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import { lockWaitFromEnv } from '../../src/io/file-lock.js';
import { createTestIO } from '../../src/io/memory.js';
import { runCli, tempDir } from '../support/cli.js';
import { startListen } from '../support/listen.js';
import { useSandbox } from '../support/sandbox.js';

const KEY = 'whk_duration_test_0123456789';
const sandbox = useSandbox();

describe('parseDuration', () => {
  it('reads ms, s, m, h and decimals; a bare number has the unit of its option', () => {
    const ms = { name: '--x', bare: 'ms' } as const;
    const s = { name: '--x', bare: 's' } as const;
    expect(parseDuration('500ms', s)).toBe(500);
    expect(parseDuration('30s', ms)).toBe(30_000);
    expect(parseDuration('2m', ms)).toBe(120_000);
    expect(parseDuration('1h', s)).toBe(3_600_000);
    expect(parseDuration('1.5s', ms)).toBe(1500);
    expect(parseDuration(' 20 ', ms)).toBe(20);
    expect(parseDuration('20', s)).toBe(20_000);
    expect(formatDuration(120_000)).toBe('2m');
    expect(formatDuration(1500)).toBe('1500ms');
  });

  it('refuses anything else in one sentence naming the option and the syntax', () => {
    expect(() => parseDuration('soon', { name: '--wait', bare: 's' })).toThrow(
      '--wait must be a duration such as 500ms, 30s, 2m or 1h (a bare number is seconds), not "soon".',
    );
    expect(() => parseDuration('-1s', { name: '--wait', bare: 's' })).toThrow(/--wait must be a duration/);
    expect(() => parseDuration('0', { name: '--timeout', bare: 'ms', minMs: 1 })).toThrow(
      '--timeout must be from 1ms to 24h, not "0".',
    );
  });
});

describe('one rule for bare numbers', () => {
  it('a duration without a contract-fixed unit refuses a bare number, with a hint to add a unit', () => {
    expect(() => parseDuration('30', { name: '--new-delay' })).toThrow(
      '--new-delay needs a unit: "30" could be 30ms or 30s.',
    );
    try {
      parseDuration('30', { name: '--new-delay' });
    } catch (error) {
      expect((error as { hint?: string }).hint).toBe(
        'write it with its unit, such as 30s or 30ms (units: ms, s, m, h).',
      );
    }
    expect(parseDuration('30s', { name: '--new-delay' })).toBe(30_000);
    expect(() => parseDuration('soon', { name: '--new-delay' })).toThrow(
      '--new-delay must be a duration such as 500ms, 30s, 2m or 1h (a unit is needed), not "soon".',
    );
  });

  it('every duration option says in its --help what a bare number is', async () => {
    const program = buildProgram(
      new Context({ io: createTestIO(), env: {}, signal: new AbortController().signal }),
    );
    const durations: string[] = [];
    const walk = (command: Command, path: string[]) => {
      for (const option of command.options) {
        if (!option.flags.includes('<duration>')) continue;
        durations.push([...path, option.long].join(' '));
        // The settings from before durations took units say what a bare number is; every later
        // one says that it needs a unit (a bare number is bad usage).
        expect(option.description, option.flags).toMatch(/a bare number is (ms|seconds)|a unit is needed/);
      }
      for (const sub of command.commands) walk(sub, [...path, sub.name()]);
    };
    walk(program, []);
    expect(durations).toEqual(
      expect.arrayContaining([
        '--timeout',
        'listen --wait',
        'sandbox --latency',
        'sandbox --validation-delay',
        'listen --forward-timeout',
      ]),
    );
    // The profile's timeout is a duration too: config set says so.
    const set = await runCli(['config', 'set', '--help']);
    expect(set.stdout).toContain(
      'timeout is a duration, as --timeout: 60s, 500ms, 2m; a bare number is milliseconds.',
    );
    const root = await runCli(['--help']);
    expect(root.stdout).toContain('Durations take a unit: 500ms, 30s, 2m, 1h.');
  });

  it('ORDERCLI_LOCK_WAIT takes the same syntax (a bare number stays seconds)', async () => {
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '2m' })).toBe(120_000);
    expect(lockWaitFromEnv({ ORDERCLI_LOCK_WAIT: '45' })).toBe(45_000);
    // sandbox --data takes the lock of its journal: a wait it cannot read is exit 2 before it starts.
    const bad = await runCli(['sandbox', '--port', '0', '--data', tempDir()], {
      env: { ORDERCLI_LOCK_WAIT: 'soon' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'ORDERCLI_LOCK_WAIT must be a duration such as 500ms, 30s, 2m or 1h (a bare number is seconds), not "soon".',
    );
  });
});

describe('listen --once --wait', () => {
  it('--once --timeout 30000 no longer waits 30000 s: --timeout does not bound the wait, a note points to --wait; Ctrl-C ends it (130)', async () => {
    const listen = await startListen(['--key', KEY, '--once'], { globals: ['--timeout', '30000'] });
    const stderr = listen.io.stderrText();
    expect(stderr).toContain(
      'note: --timeout is the per-request timeout (of --fetch and --subscribe), not how long --once waits: to stop waiting after a while, use --wait (e.g. --wait 30s).',
    );
    expect(stderr).toContain('Waiting for one notification.\n');
    expect(stderr).not.toContain('30000 s');
    const result = await listen.stop();
    expect(result.code).toBe(130);
  });

  it('--wait: a bare number is seconds, a unit is read as written', async () => {
    const bare = await startListen(['--key', KEY, '--once', '--wait', '90']);
    expect(bare.io.stderrText()).toContain('Waiting for one notification (up to 90s).');
    await bare.stop();
    const minutes = await startListen(['--key', KEY, '--once', '--wait', '2m']);
    expect(minutes.io.stderrText()).toContain('Waiting for one notification (up to 2m).');
    await minutes.stop();
  });

  it('--wait exits 1 when nothing came in time', async () => {
    const result = await runCli(['listen', '--port', '0', '--key', KEY, '--once', '--wait', '200ms']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'error: No notification was accepted within 200ms (listen --once --wait).',
    );
  });

  it('--wait without --once, or not a duration: exit 2', async () => {
    const alone = await runCli(['listen', '--port', '0', '--key', KEY, '--wait', '30s']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--wait only bounds --once');
    const bad = await runCli(['listen', '--port', '0', '--key', KEY, '--once', '--wait', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--wait must be a duration such as 500ms, 30s, 2m or 1h');
  });

  it('--fetch under --once keeps --timeout as its per-request timeout, in ms', async () => {
    sandbox.setFaults({ latencyMs: 1000 });
    try {
      const listen = await startListen(['--key', KEY, '--once', '--fetch', '--wait', '1m'], {
        globals: ['--base-url', sandbox.url, '--token', sandbox.tokens.full, '--timeout', '100'],
      });
      expect(listen.io.stderrText()).not.toContain('note: --timeout');
      const sent = await runCli([
        'webhooks',
        'trigger',
        'sales_order_validated',
        '--url',
        listen.url,
        '--key',
        KEY,
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      const result = await listen.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(
        /fetch GET \/api\/v1\/orders\/\d+: No answer .* within 100 ms \(--timeout\)/,
      );
    } finally {
      sandbox.setFaults({ latencyMs: 0 });
    }
  });
});

describe('the same syntax elsewhere', () => {
  it('--timeout and ORDERCLI_TIMEOUT take a duration; a bare number stays ms', async () => {
    for (const timeout of ['5s', '5000']) {
      const result = await runCli(['--timeout', timeout, 'get', 'packaging_references', '401'], {
        env: { ORDERCLI_BASE_URL: sandbox.url, ORDERCLI_TOKEN: sandbox.tokens.full },
      });
      expect(result.code, result.stderr).toBe(0);
    }
    const listed = await runCli(['config', 'list', '--json'], { env: { ORDERCLI_TIMEOUT: '2m' } });
    const timeout = JSON.parse(listed.stdout).values.find((v: { key: string }) => v.key === 'timeout');
    expect(timeout.effective).toBe('120000');
  });

  it('sandbox --latency and --validation-delay take a duration; a bare number stays ms', () => {
    expect(
      sandboxOptions({ port: '0', host: '127.0.0.1', latency: '1s', validationDelay: '2m' }, {}),
    ).toMatchObject({
      latencyMs: 1000,
      validationDelayMs: 120_000,
    });
    expect(
      sandboxOptions({ port: '0', host: '127.0.0.1', latency: '20', validationDelay: '300' }, {}),
    ).toMatchObject({
      latencyMs: 20,
      validationDelayMs: 300,
    });
  });

  it('config set timeout takes a duration', async () => {
    const ok = await runCli(['config', 'set', 'timeout', '45s']);
    expect(ok.code, ok.stderr).toBe(0);
    const bad = await runCli(['config', 'set', 'timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('timeout must be a duration');
  });
});
