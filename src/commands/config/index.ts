import { completeWith, withExamples, withListColumns } from '../../command-support/command-help.js';
import type { Command } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';
import { PROFILE_KEYS } from '../../config/profiles.js';

export function registerConfig(program: Command, ctx: Context): void {
  const config = program
    .command('config')
    .description(
      'show and change profile values (base-url, token, auth-header, timeout, allow-insecure-http, webhook-key)',
    );
  withExamples(config, [
    'ordercli config list',
    'ordercli config set base-url https://orders.example.com',
    'ordercli --profile staging config get base-url',
  ]);

  registerList(config, ctx);
  registerGetSet(config, ctx);
  registerProfiles(program, config, ctx);
  withExamples(
    config
      .command('path')
      .description('the path of the config file')
      .action(async () => (await import('./config.js')).path(ctx)),
    ['ordercli config path', 'cat "$(ordercli config path)"'],
  );
}

/** `config list`: the profile's values and where each effective one comes from. */
function registerList(config: Command, ctx: Context): void {
  const list = withListColumns(
    config
      .command('list')
      .description('the values of the profile (secrets redacted) and where each effective value comes from'),
    'key, profile, effective, source',
  )
    .addHelpText(
      'after',
      `
SOURCE is where the effective value comes from: the flag (--timeout), the environment variable
(ORDERCLI_TIMEOUT), the profile, or the default. Durations are shown with their unit (30s).
--json prints {profile, path, values: [{key, profile, effective, source, sourceName}]}, with
the timeout's effective value in milliseconds and source one of flag, env, profile, default.`,
    )
    .action(async (flags) => (await import('./config.js')).list(flags, ctx));
  withExamples(list, [
    'ordercli config list',
    'ordercli config list --profile staging --json',
    'ordercli config list --csv --columns key,source',
  ]);
}

/** `config get <key>` and `config set <key> [value]`. */
function registerGetSet(config: Command, ctx: Context): void {
  const get = withExamples(
    config
      .command('get')
      .description('one value of the profile (secrets are shown redacted)')
      .argument('<key>', 'base-url, token, auth-header, timeout, allow-insecure-http or webhook-key')
      .action(async (key) => (await import('./config.js')).get(key, ctx)),
    ['ordercli config get base-url', 'ordercli --profile staging config get timeout'],
  );
  completeWith(get, 'key', PROFILE_KEYS);
  withExamples(
    config
      .command('set')
      .description('set one value of the profile (an empty value removes it)')
      .argument('<key>', 'base-url, token, auth-header, timeout, allow-insecure-http or webhook-key')
      .argument(
        '[value]',
        'the value; - reads it from stdin; for token and webhook-key, left out on a terminal: asked for, not echoed',
      )
      .action(async (key, value) => (await import('./config.js')).set(key, value, ctx))
      .addHelpText(
        'after',
        `
Secrets (token, webhook-key): a value typed on the command line stays in your shell history and
is visible to other users in the process list. Give it on stdin (config set token -) or leave it
out to be asked for it without echo. A value on the command line still works, for scripts, with a
warning. The config file is kept with mode 0600.

timeout is a duration, as --timeout: 60s, 500ms, 2m; a bare number is milliseconds.`,
      ),
    [
      'ordercli config set base-url https://orders.example.com',
      'ordercli --profile staging config set timeout 60s',
      'ordercli config set token            # asks for it, not echoed',
      'printenv ORDER_TOKEN | ordercli config set token -',
      'ordercli config set webhook-key - < .webhook-key',
    ],
  );
}

/** `config profiles`, and the completion of the global --profile with what it prints. */
function registerProfiles(program: Command, config: Command, ctx: Context): void {
  withExamples(
    config
      .command('profiles')
      .description('the names of the profiles in the config file, one a line (never their values)')
      .addHelpText(
        'after',
        `
Quick and quiet: it reads the config file only, so the shell completion of --profile runs it at
each Tab. --json prints [{name}].`,
      )
      .action(async () => (await import('./profiles.js')).run(ctx)),
    ['ordercli config profiles', 'ordercli config profiles --json'],
  );
  // The global --profile completes with the names that command prints, read at each Tab.
  completeWith(program, '--profile', { listedBy: ['config', 'profiles'] });
}
