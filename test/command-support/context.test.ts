// A command's context on its own: colour and prompting decided by the flags, settings read once,
// an API client refused before any request when the address or a credential cannot be sent, and
// cleanups run in reverse order.
import { describe, expect, it } from 'vitest';
import { Context } from '../../src/command-support/context.js';
import { UsageError } from '../../src/core/errors.js';
import { createTestIO } from '../../src/io/memory.js';
import { testEnv } from '../support/cli.js';

function context(env: NodeJS.ProcessEnv = testEnv(), tty = true) {
  const io = createTestIO({ tty });
  return { io, ctx: new Context({ io, env, signal: new AbortController().signal, cwd: '/' }) };
}

describe('Context', () => {
  it('turns colour on for a terminal unless --no-color or NO_COLOR, and prompts unless --yes, CI or a pipe', () => {
    const { io, ctx } = context();
    ctx.useFlags({});
    expect([io.colorEnabled, io.neverPrompt]).toEqual([true, false]);
    ctx.useFlags({ color: false, yes: true });
    expect([io.colorEnabled, io.neverPrompt]).toEqual([false, true]);

    const ci = context(testEnv({ NO_COLOR: '1', CI: 'true' }));
    ci.ctx.useFlags({});
    expect([ci.io.colorEnabled, ci.io.neverPrompt]).toEqual([false, true]);
    // An empty NO_COLOR does not count.
    const empty = context(testEnv({ NO_COLOR: '' }));
    empty.ctx.useFlags({});
    expect(empty.io.colorEnabled).toBe(true);

    const piped = context(testEnv(), false);
    piped.ctx.useFlags({ json: true });
    expect([piped.io.colorEnabled, piped.io.neverPrompt, piped.ctx.json]).toEqual([false, true, true]);
  });

  it('resolves the settings once, flag over environment, and registers the token as a secret', async () => {
    const { io, ctx } = context(
      testEnv({ ORDERCLI_BASE_URL: 'http://127.0.0.1:1', ORDERCLI_TOKEN: 'tok_env_1234' }),
    );
    ctx.useFlags({ baseUrl: 'http://127.0.0.1:2' });
    const settings = await ctx.settings();
    expect(settings).toMatchObject({ baseUrl: 'http://127.0.0.1:2', token: 'tok_env_1234' });
    expect(await ctx.settings()).toBe(settings);
    io.out('token tok_env_1234\n');
    expect(io.stdoutText()).not.toContain('tok_env_1234');
  });

  it('refuses an API client without a service address, or with one that is not http', async () => {
    const { ctx } = context();
    ctx.useFlags({});
    await expect(ctx.api()).rejects.toThrow(UsageError);
    await expect(ctx.api()).rejects.toThrow(
      'No service address: pass --base-url, set ORDERCLI_BASE_URL, or save one with ordercli login (try ordercli sandbox for a local one).',
    );
    await expect(ctx.api({ baseUrl: 'ftp://example.com' })).rejects.toThrow(
      /^The base URL must start with https:\/\//,
    );
  });

  it('refuses a token that cannot be sent in a header, naming where it came from', async () => {
    const { ctx } = context(testEnv({ ORDERCLI_BASE_URL: 'http://127.0.0.1:1', ORDERCLI_TOKEN: 'tok\nen' }));
    ctx.useFlags({});
    await expect(ctx.api()).rejects.toThrow(/ORDERCLI_TOKEN/);
  });

  it('runs the cleanups once, last registered first', async () => {
    const { ctx } = context();
    const ran: number[] = [];
    ctx.onClose(() => {
      ran.push(1);
    });
    ctx.onClose(async () => {
      ran.push(2);
    });
    await ctx.close();
    await ctx.close();
    expect(ran).toEqual([2, 1]);
  });

  it('runs another command line only when built with a runner', async () => {
    const { io, ctx } = context();
    const run = { io, env: {}, signal: new AbortController().signal, cwd: '/' };
    expect(() => ctx.runCommand(['--version'], run)).toThrow(
      'runCommand: this context was built without a command runner',
    );
    const seen: string[][] = [];
    const withRunner = new Context({
      io,
      env: {},
      signal: run.signal,
      runCommand: async (argv) => {
        seen.push(argv);
        return 3;
      },
    });
    expect(await withRunner.runCommand(['orders', 'get', '1'], run)).toBe(3);
    expect(seen).toEqual([['orders', 'get', '1']]);
  });
});
